// HTTPS against the loopback server with a certificate made at run time.
#include <gtest/gtest.h>

#include "services/http/http_client.h"
#include "tests/services/http/http_test_util.h"
#include "tests/support/loopback_server.h"
#include "tests/support/temp_tree.h"
#include "tests/support/test_certificates.h"

namespace skillrunner::http {
namespace {

using namespace http_testing;
using test_support::GenerateTestCertificates;
using test_support::LoopbackServer;
using test_support::LoopbackTls;
using test_support::TestCertificates;

class HttpTlsTest : public ::testing::Test {
 protected:
  HttpTlsTest()
      : certificates_(GenerateTestCertificates(tree_.root())),
        server_(LoopbackTls{certificates_.cert_file, certificates_.key_file}) {
    server_.SetDefault({.body = R"({"tls":true})"});
  }

  std::string LocalhostUrl() const { return "https://localhost:" + std::to_string(server_.port()) + "/v1/models"; }

  testing::TempTree tree_;
  TestCertificates certificates_;
  LoopbackServer server_;
};

TEST_F(HttpTlsTest, CertificateSignedByTheGivenCaIsAccepted) {
  HttpClientOptions options;
  options.ca_file = certificates_.ca_file;

  auto results = SendSequentially(options, {Get(LocalhostUrl()), Get(server_.base_url() + "/")});

  ASSERT_TRUE(results[0]) << results[0].error().message;
  EXPECT_EQ(results[0]->body, R"({"tls":true})");
  ASSERT_TRUE(results[1]) << results[1].error().message;  // 127.0.0.1, an IP SAN
  EXPECT_EQ(server_.requests().at(0).target, "/v1/models");
}

TEST_F(HttpTlsTest, UnknownCaIsRejectedWithTheReason) {
  Result result = SendOne(Get(LocalhostUrl()));

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kTls);
  EXPECT_EQ(result.error().message, "TLS handshake with localhost:" + std::to_string(server_.port()) +
                                        " failed: certificate verify failed (unable to get local issuer certificate)");
  EXPECT_EQ(server_.request_count(), 0u);
}

TEST_F(HttpTlsTest, VerificationTurnedOffAcceptsAnyCertificate) {
  HttpClientOptions options;
  options.tls_verify = false;

  Result result = SendOne(Get(LocalhostUrl()), options);

  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->status, 200);
}

TEST_F(HttpTlsTest, CertificateFromAnotherCaIsRejected) {
  testing::TempTree other_tree;
  TestCertificates other = GenerateTestCertificates(other_tree.root());
  HttpClientOptions options;
  options.ca_file = other.ca_file;

  Result result = SendOne(Get(LocalhostUrl()), options);

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kTls);
}

TEST(HttpTlsNameTest, CertificateForAnotherNameIsRejected) {
  testing::TempTree tree;
  TestCertificates certificates = GenerateTestCertificates(tree.root(), {"DNS:elsewhere.test"});
  LoopbackServer server(LoopbackTls{certificates.cert_file, certificates.key_file});
  HttpClientOptions options;
  options.ca_file = certificates.ca_file;

  Result by_name = SendOne(Get("https://localhost:" + std::to_string(server.port()) + "/"), options);
  Result by_ip = SendOne(Get(server.base_url() + "/"), options);

  ASSERT_FALSE(by_name);
  EXPECT_EQ(by_name.error().kind, HttpErrorKind::kTls);
  EXPECT_EQ(by_name.error().message, "TLS handshake with localhost:" + std::to_string(server.port()) +
                                         " failed: certificate verify failed (hostname mismatch)");
  ASSERT_FALSE(by_ip);
  EXPECT_EQ(by_ip.error().message, "TLS handshake with 127.0.0.1:" + std::to_string(server.port()) +
                                       " failed: certificate verify failed (IP address mismatch)");
}

TEST_F(HttpTlsTest, MissingCaFileIsATlsError) {
  HttpClientOptions options;
  options.ca_file = tree_.Path("absent.pem").string();

  Result result = SendOne(Get(LocalhostUrl()), options);

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kTls);
  EXPECT_EQ(result.error().message.rfind("cannot load CA file " + options.ca_file + ": ", 0), 0u)
      << result.error().message;
}

TEST_F(HttpTlsTest, KeepAliveWorksOverTls) {
  HttpClientOptions options;
  options.ca_file = certificates_.ca_file;
  std::vector<HttpRequest> requests(5, Get(LocalhostUrl()));

  auto results = SendSequentially(options, requests);

  for (const Result& result : results) ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(server_.request_count(), 5u);
  EXPECT_LE(server_.connections_accepted(), 2);
}

}  // namespace
}  // namespace skillrunner::http
