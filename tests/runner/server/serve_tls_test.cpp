// serve --tls-cert / --tls-key / --tls-client-ca (design.md §11.8) with certificates `openssl req` makes
// here: TLS calls from `skillrunner call` and a client of the test's own, TLS 1.1 and plain text
// refused, client certificates as tenants, the metrics listener over HTTPS, and rotation.
#include <gtest/gtest.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <boost/json/parse.hpp>
#include <csignal>
#include <regex>
#include <thread>

#include "tests/runner/server/serve_process.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"
#include "tests/support/test_pki.h"

namespace skillrunner {
namespace {
namespace asio = boost::asio;
namespace json = boost::json;
using test_support::Shell;
using test_support::ShellQuote;
using test_support::TestPki;
using testing::ServeProcess;
using testing::TempTree;

// The port of `serve --listen 127.0.0.1:0` from its "listening on" line, or 0.
std::uint16_t ListeningPort(const ServeProcess& serve) {
  const std::regex line("listening on 127\\.0\\.0\\.1:0 \\(port ([0-9]+)\\)");
  for (int i = 0; i < 400; ++i) {
    std::smatch match;
    const std::string text = serve.Stderr();
    if (std::regex_search(text, match, line)) return static_cast<std::uint16_t>(std::stoi(match[1]));
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return 0;
}

// One TLS connection of the test's own (the server checked against the CA), kept open between calls.
class TlsClient {
 public:
  // `client`: the name of the certificate (NAME.pem, NAME.key) to show; "" for none.
  TlsClient(std::uint16_t port, const TestPki& pki, const std::string& client = "")
      : context_(Context(pki, client)), socket_(io_), stream_(socket_, context_) {
    boost::system::error_code ec;
    socket_.connect({asio::ip::make_address("127.0.0.1"), port}, ec);
    if (!ec) stream_.handshake(asio::ssl::stream_base::client, ec);
    ok_ = !ec;
  }
  bool ok() const { return ok_; }
  // The subject of the certificate the server showed.
  std::string ServerSubject() {
    X509* certificate = SSL_get_peer_certificate(stream_.native_handle());
    if (certificate == nullptr) return "";
    char name[256];
    X509_NAME_oneline(X509_get_subject_name(certificate), name, sizeof name);
    X509_free(certificate);
    return name;
  }
  // One request line, its answer line ("" when the connection failed).
  std::string Ask(const std::string& line) {
    boost::system::error_code ec;
    asio::write(stream_, asio::buffer(line + "\n"), ec);
    std::string answer;
    if (!ec) asio::read_until(stream_, asio::dynamic_buffer(answer), '\n', ec);
    return ec ? std::string() : answer.substr(0, answer.find('\n'));
  }

 private:
  // The stream takes its certificate from the context when it is made: the context is ready first.
  static asio::ssl::context Context(const TestPki& pki, const std::string& client) {
    asio::ssl::context context(asio::ssl::context::tls_client);
    context.load_verify_file(pki.Path("ca.pem"));
    context.set_verify_mode(asio::ssl::verify_peer);
    if (!client.empty()) {
      context.use_certificate_chain_file(pki.Path(client + ".pem"));
      context.use_private_key_file(pki.Path(client + ".key"), asio::ssl::context::pem);
    }
    return context;
  }

  asio::io_context io_;
  asio::ssl::context context_;
  asio::ip::tcp::socket socket_;
  asio::ssl::stream<asio::ip::tcp::socket&> stream_;
  bool ok_ = false;
};

constexpr const char* kHealth = R"({"jsonrpc":"2.0","id":1,"method":"health"})";

class ServeTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skillrunner.yaml", "providers:\n  sim: { kind: simulated }\ndefault_provider: sim\n");
    tree_.Write("skills/echo/skill.yaml",
                "id: echo\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
    pki_.Issue("server", "/CN=localhost");
  }
  test_support::CommandResult Call(std::uint16_t port, const std::string& more, const std::string& method = "health") {
    return test_support::Skillrunner(
        tree_.root(), "call " + method + " --connect 127.0.0.1:" + std::to_string(port) + " --timeout-ms 5000 " + more,
        "2>&1");
  }

  TempTree tree_;
  TempTree pki_dir_;
  TestPki pki_{pki_dir_};
};

TEST_F(ServeTlsTest, ATlsCallIsServedAndPlainTextAndTls11AreRefused) {
  ServeProcess serve(
      tree_, {"--listen", "127.0.0.1:0", "--tls-cert", pki_.Path("server.pem"), "--tls-key", pki_.Path("server.key")});
  const std::uint16_t port = ListeningPort(serve);
  ASSERT_NE(port, 0) << serve.Stderr();
  auto tls = Call(port, "--tls --ca " + pki_.Path("ca.pem"));
  EXPECT_EQ(tls.status, 0) << tls.out;
  auto health = json::parse(tls.out);
  EXPECT_EQ(health.at("result").at("status"), "ok");
  EXPECT_TRUE(health.at("result")
                  .at("listeners")
                  .at("tls")
                  .at("certificate")
                  .as_string()
                  .starts_with("CN=localhost, valid until "));
  EXPECT_EQ(health.at("result").at("listeners").at("tls").at("client_certificates"), false);
  // design.md §12.1: plain text is told why before the close: a JSON-RPC error line, or an HTTP 400.
  auto plain = Call(port, "");
  EXPECT_EQ(plain.status, 2) << plain.out;
  EXPECT_EQ(plain.out,
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"this listener requires TLS: connect )"
            R"(with --tls / tls=True","data":{"code":"INPUT_INVALID","message":"this listener requires TLS: )"
            R"(connect with --tls / tls=True"}}})"
            "\n")
      << plain.out;
  const std::string http_file = tree_.Path("plain_http").string();
  test_support::Shell("curl -s -w ' %{http_code}' http://127.0.0.1:" + std::to_string(port) + "/ > " +
                      ShellQuote(http_file));
  EXPECT_EQ(testing::ReadFile(http_file), "this listener requires TLS: connect with --tls / tls=True\n 400");
  auto no_ca = Call(port, "--tls --ca " + pki_.Path("missing.pem"));
  EXPECT_EQ(no_ca.status, 2) << no_ca.out;
  EXPECT_TRUE(no_ca.out.starts_with("skillrunner call: --ca " + pki_.Path("missing.pem") + ": ")) << no_ca.out;
  auto untrusted = Call(port, "--tls");  // the system's CAs do not know the test CA
  EXPECT_EQ(untrusted.status, 3) << untrusted.out;
  EXPECT_NE(untrusted.out.find("certificate verify failed"), std::string::npos) << untrusted.out;
  const std::string s_client = "echo | timeout 10 openssl s_client -connect 127.0.0.1:" + std::to_string(port) +
                               " -tls1_1 -CAfile " + ShellQuote(pki_.Path("ca.pem")) + " 2>&1";
  FILE* pipe = popen(s_client.c_str(), "r");
  std::string said;
  char buffer[4096];
  while (std::size_t n = fread(buffer, 1, sizeof buffer, pipe)) said.append(buffer, n);
  pclose(pipe);
  EXPECT_NE(said.find("Cipher is (NONE)"), std::string::npos) << said;  // no session: TLS 1.1 is refused
  serve.Signal(SIGTERM);
  EXPECT_EQ(serve.Wait(std::chrono::seconds(10)), 0);
  EXPECT_NE(serve.Stderr().find("TLS handshake failed"), std::string::npos);
}

// A pair that does not load stops serve before it listens, naming the file.
TEST_F(ServeTlsTest, FilesThatDoNotLoadAreSaidWithTheirFlag) {
  const std::string missing = pki_.Path("missing.pem");
  auto serve = test_support::Skillrunner(
      tree_.root(), "serve --listen 127.0.0.1:0 --tls-cert " + missing + " --tls-key " + pki_.Path("server.key"),
      "2>&1");
  EXPECT_EQ(serve.status, 2) << serve.out;
  EXPECT_NE(serve.out.find("skillrunner serve: --tls-cert " + missing + ": "), std::string::npos) << serve.out;
  pki_.Issue("other", "/CN=other");
  auto mismatched = test_support::Skillrunner(
      tree_.root(),
      "serve --listen 127.0.0.1:0 --tls-cert " + pki_.Path("server.pem") + " --tls-key " + pki_.Path("other.key"),
      "2>&1");
  EXPECT_EQ(mismatched.status, 2) << mismatched.out;
  EXPECT_NE(mismatched.out.find("skillrunner serve: --tls-key " + pki_.Path("other.key") +
                                " is not the private key of --tls-cert " + pki_.Path("server.pem") + "\n"),
            std::string::npos)
      << mismatched.out;
}

// Mutual TLS: a client without a certificate is refused; one with a certificate the CA signed is
// served, as the tenant whose tls_subject its subject is.
TEST_F(ServeTlsTest, AClientCertificateIsRequiredAndNamesItsTenant) {
  tree_.Write("skillrunner.yaml",
              "providers:\n  sim: { kind: simulated }\ndefault_provider: sim\n"
              "tenants:\n  billing: { tls_subject: \"CN=billing,O=Example\", max_in_flight: 4 }\n");
  pki_.Issue("billing", "/O=Example/CN=billing");
  ServeProcess serve(tree_, {"--listen", "127.0.0.1:0", "--tls-cert", pki_.Path("server.pem"), "--tls-key",
                             pki_.Path("server.key"), "--tls-client-ca", pki_.Path("ca.pem")});
  const std::uint16_t port = ListeningPort(serve);
  ASSERT_NE(port, 0) << serve.Stderr();
  TlsClient anonymous(port, pki_);
  // TLS 1.3 finishes the client's handshake before the server has checked its certificate: the refusal
  // comes as the first read fails.
  EXPECT_EQ(anonymous.ok() ? anonymous.Ask(kHealth) : "", "");
  auto refused = Call(port, "--tls --ca " + pki_.Path("ca.pem"));
  EXPECT_EQ(refused.status, 3) << refused.out;
  auto served = Call(port,
                     "--tls --ca " + pki_.Path("ca.pem") + " --cert " + pki_.Path("billing.pem") + " --key " +
                         pki_.Path("billing.key"),
                     "skills.invoke '{\"skill\":\"echo\",\"input\":{\"a\":1}}'");
  EXPECT_EQ(served.status, 0) << served.out;
  EXPECT_NE(served.out.find(R"("output":{"a":1})"), std::string::npos) << served.out;
  serve.Signal(SIGTERM);
  ASSERT_EQ(serve.Wait(std::chrono::seconds(10)), 0);
  EXPECT_NE(serve.Stderr().find("tenant=billing skill=echo outcome=ok"), std::string::npos) << serve.Stderr();
}

// design.md §12.1: one identity rule on --listen and /mcp. A tenant's certificate is that tenant on
// both; one that names no tenant is the admin only when tls.admin_subjects lists it, and is refused
// on both otherwise; a token sent with a certificate must name the same caller.
TEST_F(ServeTlsTest, ACertificateIsOneCallerOnTheSocketAndOnMcp) {
  tree_.Write("skillrunner.yaml",
              "providers:\n  sim: { kind: simulated }\ndefault_provider: sim\n"
              "tls:\n  admin_subjects: [\"CN=ops,O=Example\"]\n"
              "tenants:\n  billing: { tls_subject: \"CN=billing,O=Example\" }\n"
              "  ledger: { token_env: LEDGER_TOKEN }\n");
  pki_.Issue("billing", "/O=Example/CN=billing");
  pki_.Issue("ops", "/O=Example/CN=ops");
  pki_.Issue("laptop", "/O=Example/CN=laptop");
  const std::uint16_t mcp = test_support::FreeLoopbackPort();
  ServeProcess serve(
      tree_,
      {"--listen", "127.0.0.1:0", "--mcp-listen", "127.0.0.1:" + std::to_string(mcp), "--tls-cert",
       pki_.Path("server.pem"), "--tls-key", pki_.Path("server.key"), "--tls-client-ca", pki_.Path("ca.pem")},
      {"LEDGER_TOKEN=ledger-secret"});
  const std::uint16_t port = ListeningPort(serve);
  ASSERT_NE(port, 0) << serve.Stderr();
  const std::string invoke = R"({"jsonrpc":"2.0","id":2,"method":"skills.invoke","params":{"skill":"echo",)"
                             R"("input":{"a":1}})";
  TlsClient billing(port, pki_, "billing");
  EXPECT_NE(billing.Ask(invoke + "}").find(R"("output":{"a":1})"), std::string::npos);
  const std::string mismatch = billing.Ask(invoke + R"(,"auth":"ledger-secret"})");
  EXPECT_NE(mismatch.find(R"("code":-32001)"), std::string::npos) << mismatch;
  EXPECT_NE(mismatch.find("the token names ledger but the client certificate names billing"), std::string::npos)
      << mismatch;
  TlsClient ops(port, pki_, "ops");
  EXPECT_NE(ops.Ask(kHealth).find(R"("status":"ok")"), std::string::npos);
  TlsClient laptop(port, pki_, "laptop");
  const std::string refused = laptop.Ask(kHealth);
  EXPECT_NE(refused.find("certificate subject CN=laptop,O=Example is no tenant's and not an admin subject"),
            std::string::npos)
      << refused;

  const std::string initialize =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  auto mcp_as = [&](const std::string& who, const std::string& token) {
    return test_support::Shell(
        "curl -s -o " + ShellQuote(tree_.Path(who + ".mcp").string()) + " -w '%{http_code}' --cacert " +
        ShellQuote(pki_.Path("ca.pem")) + " --cert " + ShellQuote(pki_.Path(who + ".pem")) + " --key " +
        ShellQuote(pki_.Path(who + ".key")) + (token.empty() ? "" : " -H 'Authorization: Bearer " + token + "'") +
        " -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' -d " +
        ShellQuote(initialize) + " https://127.0.0.1:" + std::to_string(mcp) + "/mcp > " +
        ShellQuote(tree_.Path(who + ".status").string()));
  };
  ASSERT_EQ(mcp_as("billing", ""), 0);
  EXPECT_EQ(testing::ReadFile(tree_.Path("billing.status")), "200");
  EXPECT_NE(testing::ReadFile(tree_.Path("billing.mcp")).find(R"("protocolVersion":"2025-06-18")"), std::string::npos);
  ASSERT_EQ(mcp_as("laptop", ""), 0);
  EXPECT_EQ(testing::ReadFile(tree_.Path("laptop.status")), "403");
  EXPECT_NE(testing::ReadFile(tree_.Path("laptop.mcp"))
                .find("Forbidden: certificate subject CN=laptop,O=Example is no tenant's and not an admin subject"),
            std::string::npos)
      << testing::ReadFile(tree_.Path("laptop.mcp"));
  ASSERT_EQ(mcp_as("billing", "ledger-secret"), 0);
  EXPECT_EQ(testing::ReadFile(tree_.Path("billing.status")), "403");
  EXPECT_NE(testing::ReadFile(tree_.Path("billing.mcp"))
                .find("the token names ledger but the client certificate names billing"),
            std::string::npos);
  serve.Signal(SIGTERM);
  ASSERT_EQ(serve.Wait(std::chrono::seconds(10)), 0);
  // The access log names the certificate's tenant for the socket's call.
  EXPECT_NE(serve.Stderr().find("tenant=billing skill=echo outcome=ok"), std::string::npos) << serve.Stderr();
}

// design.md §12.1: the certificate's notAfter per listener, and TLS reloads counted by result.
TEST_F(ServeTlsTest, TheCertificatesExpiryAndItsReloadsAreInTheMetrics) {
  std::filesystem::copy_file(pki_.Path("server.pem"), pki_.Path("live.pem"));
  std::filesystem::copy_file(pki_.Path("server.key"), pki_.Path("live.key"));
  const std::uint16_t metrics = test_support::FreeLoopbackPort();
  const std::string metrics_at = "127.0.0.1:" + std::to_string(metrics);
  ServeProcess serve(tree_, {"--listen", "127.0.0.1:0", "--metrics-listen", metrics_at, "--tls-cert",
                             pki_.Path("live.pem"), "--tls-key", pki_.Path("live.key")});
  ASSERT_NE(ListeningPort(serve), 0) << serve.Stderr();
  // What openssl says the certificate's notAfter is, as Unix seconds.
  auto not_after = [&](const std::string& pem) {
    const std::string file = tree_.Path("not_after").string();
    test_support::Shell("date -d \"$(openssl x509 -enddate -noout -in " + ShellQuote(pki_.Path(pem)) +
                        " | cut -d= -f2)\" +%s > " + ShellQuote(file));
    std::string text = testing::ReadFile(file);
    return text.substr(0, text.find('\n'));
  };
  auto scrape = [&] {
    const std::string file = tree_.Path("metrics.txt").string();
    test_support::Shell("curl -s --cacert " + ShellQuote(pki_.Path("ca.pem")) + " https://" + metrics_at +
                        "/metrics > " + ShellQuote(file));
    return testing::ReadFile(file);
  };
  auto expiry = [&](const std::string& listener) {
    return "skillrunner_tls_certificate_expiry_timestamp_seconds{listener=\"" + listener + "\"} ";
  };
  std::string text = scrape();
  EXPECT_NE(text.find(expiry("127.0.0.1:0") + not_after("server.pem") + "\n"), std::string::npos) << text;
  EXPECT_NE(text.find(expiry(metrics_at) + not_after("server.pem") + "\n"), std::string::npos) << text;
  // A pair that does not load is refused and counted; the one before keeps serving.
  std::filesystem::copy_file(pki_.Path("ca.key"), pki_.Path("live.key"),
                             std::filesystem::copy_options::overwrite_existing);
  serve.Signal(SIGHUP);
  // (SIGHUP and the file watch may both see it: at least one refusal.)
  const std::string none_failed = "skillrunner_reloads_total{kind=\"tls\",result=\"failed\"} 0\n";
  for (int i = 0; i < 200 && scrape().find(none_failed) != std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  text = scrape();
  EXPECT_EQ(text.find(none_failed), std::string::npos) << text;
  EXPECT_NE(text.find(expiry(metrics_at) + not_after("server.pem") + "\n"), std::string::npos) << text;
  // A renewed certificate moves the gauge (issued a second later: a later notAfter).
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  pki_.Issue("renewed", "/CN=localhost");
  ASSERT_NE(not_after("renewed.pem"), not_after("server.pem"));
  std::filesystem::copy_file(pki_.Path("renewed.pem"), pki_.Path("live.pem"),
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(pki_.Path("renewed.key"), pki_.Path("live.key"),
                             std::filesystem::copy_options::overwrite_existing);
  serve.Signal(SIGHUP);
  for (int i = 0; i < 200 && scrape().find(expiry(metrics_at) + not_after("renewed.pem")) == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  text = scrape();
  EXPECT_NE(text.find(expiry(metrics_at) + not_after("renewed.pem") + "\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("skillrunner_reloads_total{kind=\"tls\",result=\"ok\"} 0\n"), std::string::npos) << text;
}

// The metrics listener speaks TLS with the same certificate.
TEST_F(ServeTlsTest, TheMetricsListenerIsServedOverHttps) {
  const std::uint16_t metrics = test_support::FreeLoopbackPort();
  ServeProcess serve(tree_, {"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:" + std::to_string(metrics),
                             "--tls-cert", pki_.Path("server.pem"), "--tls-key", pki_.Path("server.key")});
  ASSERT_NE(ListeningPort(serve), 0) << serve.Stderr();
  const std::string url = "https://127.0.0.1:" + std::to_string(metrics);
  EXPECT_EQ(Shell("curl -sf --cacert " + ShellQuote(pki_.Path("ca.pem")) + " " + url +
                  "/metrics | grep -q "
                  "'^skillrunner_connections '"),
            0);
  // design.md §12.1: plain HTTP on the TLS port is told why.
  const std::string plain_file = tree_.Path("plain_metrics").string();
  Shell("curl -s -w ' %{http_code}' http://127.0.0.1:" + std::to_string(metrics) + "/metrics > " +
        ShellQuote(plain_file));
  EXPECT_EQ(testing::ReadFile(plain_file), "this listener requires TLS: connect with --tls / tls=True\n 400");
  auto probed =
      test_support::Skillrunner(tree_.root(), "probe " + url + "/healthz --ca " + pki_.Path("ca.pem"), "2>&1");
  EXPECT_EQ(probed.status, 0) << probed.out;
  EXPECT_EQ(probed.out, url + "/healthz: HTTP 200\n");
  auto untrusted = test_support::Skillrunner(tree_.root(), "probe " + url + "/healthz", "2>&1");
  EXPECT_EQ(untrusted.status, 1) << untrusted.out;
  EXPECT_NE(untrusted.out.find("certificate verify failed"), std::string::npos) << untrusted.out;
}

// design.md §12.1: --metrics-client-ca none lets probes and a Prometheus without a client certificate
// read the metrics listener while --listen still demands one.
TEST_F(ServeTlsTest, MetricsClientCaNoneOpensTheMetricsListenerAlone) {
  const std::uint16_t metrics = test_support::FreeLoopbackPort();
  const std::string url = "https://127.0.0.1:" + std::to_string(metrics);
  ServeProcess serve(tree_, {"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:" + std::to_string(metrics),
                             "--tls-cert", pki_.Path("server.pem"), "--tls-key", pki_.Path("server.key"),
                             "--tls-client-ca", pki_.Path("ca.pem"), "--metrics-client-ca", "none"});
  const std::uint16_t port = ListeningPort(serve);
  ASSERT_NE(port, 0) << serve.Stderr();
  EXPECT_EQ(Shell("curl -sf --cacert " + ShellQuote(pki_.Path("ca.pem")) + " " + url +
                  "/metrics | grep -q '^skillrunner_connections '"),
            0);
  auto probed = test_support::Skillrunner(tree_.root(), "probe " + url + "/readyz --ca " + pki_.Path("ca.pem"), "2>&1");
  EXPECT_EQ(probed.status, 0) << probed.out;
  EXPECT_EQ(probed.out, url + "/readyz: HTTP 200\n");
  auto refused = Call(port, "--tls --ca " + pki_.Path("ca.pem"));  // no client certificate
  EXPECT_EQ(refused.status, 3) << refused.out;
  // Without --tls-cert there is no TLS to open.
  auto alone = test_support::Skillrunner(tree_.root(), "serve --listen 127.0.0.1:0 --metrics-client-ca none", "2>&1");
  EXPECT_EQ(alone.status, 2) << alone.out;
  EXPECT_NE(alone.out.find("--metrics-client-ca"), std::string::npos) << alone.out;
}

// The MCP listener is HTTPS with the same certificate.
TEST_F(ServeTlsTest, TheMcpListenerIsServedOverHttps) {
  const std::uint16_t mcp = test_support::FreeLoopbackPort();
  ServeProcess serve(tree_, {"--listen", "127.0.0.1:0", "--mcp-listen", "127.0.0.1:" + std::to_string(mcp),
                             "--tls-cert", pki_.Path("server.pem"), "--tls-key", pki_.Path("server.key")});
  ASSERT_NE(ListeningPort(serve), 0) << serve.Stderr();
  EXPECT_NE(serve.Stderr().find("MCP at https://127.0.0.1:" + std::to_string(mcp) + "/mcp"), std::string::npos);
  const std::string initialize =
      R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
      R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";
  const std::string curl = "curl -sf --cacert " + ShellQuote(pki_.Path("ca.pem")) +
                           " -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "
                           "-d " +
                           ShellQuote(initialize) + " https://127.0.0.1:" + std::to_string(mcp) + "/mcp";
  EXPECT_EQ(Shell(curl + " | grep -q '\"protocolVersion\":\"2025-06-18\"'"), 0);
  const std::string plain_file = tree_.Path("plain_mcp").string();
  Shell("curl -s -w ' %{http_code}' -d '{}' http://127.0.0.1:" + std::to_string(mcp) + "/mcp > " +
        ShellQuote(plain_file));
  EXPECT_EQ(testing::ReadFile(plain_file), "this listener requires TLS: connect with --tls / tls=True\n 400");
}

// design.md §12.1: probe --cert --key reads a metrics listener that demands a client certificate.
TEST_F(ServeTlsTest, ProbeShowsAClientCertificateToAListenerThatDemandsOne) {
  pki_.Issue("kubelet", "/O=Example/CN=kubelet");
  const std::uint16_t metrics = test_support::FreeLoopbackPort();
  const std::string url = "https://127.0.0.1:" + std::to_string(metrics) + "/readyz";
  ServeProcess serve(
      tree_, {"--listen", "127.0.0.1:0", "--metrics-listen", "127.0.0.1:" + std::to_string(metrics), "--tls-cert",
              pki_.Path("server.pem"), "--tls-key", pki_.Path("server.key"), "--tls-client-ca", pki_.Path("ca.pem")});
  ASSERT_NE(ListeningPort(serve), 0) << serve.Stderr();
  auto without = test_support::Skillrunner(tree_.root(), "probe " + url + " --ca " + pki_.Path("ca.pem"), "2>&1");
  EXPECT_EQ(without.status, 1) << without.out;
  auto with = test_support::Skillrunner(tree_.root(),
                                        "probe " + url + " --ca " + pki_.Path("ca.pem") + " --cert " +
                                            pki_.Path("kubelet.pem") + " --key " + pki_.Path("kubelet.key"),
                                        "2>&1");
  EXPECT_EQ(with.status, 0) << with.out;
  EXPECT_EQ(with.out, url + ": HTTP 200\n");
  auto keyless =
      test_support::Skillrunner(tree_.root(), "probe " + url + " --cert " + pki_.Path("kubelet.pem"), "2>&1");
  EXPECT_EQ(keyless.status, 2) << keyless.out;
  EXPECT_NE(keyless.out.find("--cert requires --key"), std::string::npos) << keyless.out;
  auto missing = test_support::Skillrunner(
      tree_.root(), "probe " + url + " --ca " + pki_.Path("ca.pem") + " --cert missing.pem --key missing.key", "2>&1");
  EXPECT_EQ(missing.status, 1) << missing.out;
  EXPECT_NE(missing.out.find("cannot load the client certificate missing.pem"), std::string::npos) << missing.out;
}

// After the files change and SIGHUP, a new connection gets the new certificate while an open one keeps
// working; a broken pair is refused (logged, in last_reload) and the one before keeps serving; a file
// change alone is noticed too.
TEST_F(ServeTlsTest, ACertificateRotatesOnSighupAndOpenConnectionsKeepTheirs) {
  std::filesystem::copy_file(pki_.Path("server.pem"), pki_.Path("live.pem"));
  std::filesystem::copy_file(pki_.Path("server.key"), pki_.Path("live.key"));
  ServeProcess serve(
      tree_, {"--listen", "127.0.0.1:0", "--tls-cert", pki_.Path("live.pem"), "--tls-key", pki_.Path("live.key")});
  const std::uint16_t port = ListeningPort(serve);
  ASSERT_NE(port, 0) << serve.Stderr();
  TlsClient open(port, pki_);
  ASSERT_TRUE(open.ok());
  EXPECT_EQ(open.ServerSubject(), "/CN=localhost");
  pki_.Issue("renewed", "/CN=renewed");
  std::filesystem::copy_file(pki_.Path("renewed.pem"), pki_.Path("live.pem"),
                             std::filesystem::copy_options::overwrite_existing);
  std::filesystem::copy_file(pki_.Path("renewed.key"), pki_.Path("live.key"),
                             std::filesystem::copy_options::overwrite_existing);
  serve.Signal(SIGHUP);
  std::string subject;
  for (int i = 0; i < 100 && subject != "/CN=renewed"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    TlsClient fresh(port, pki_);
    subject = fresh.ok() ? fresh.ServerSubject() : "";
  }
  EXPECT_EQ(subject, "/CN=renewed");
  EXPECT_NE(open.Ask(kHealth).find(R"("status":"ok")"), std::string::npos);  // the open one still works
  // A key that is not the certificate's: refused, the renewed pair still serves.
  std::filesystem::copy_file(pki_.Path("server.key"), pki_.Path("live.key"),
                             std::filesystem::copy_options::overwrite_existing);
  serve.Signal(SIGHUP);
  std::string health;
  for (int i = 0; i < 100 && health.find(R"("tls":{"ok":false)") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    health = open.Ask(kHealth);
  }
  EXPECT_NE(health.find(R"("tls":{"ok":false,"error":"--tls-key )" + pki_.Path("live.key") +
                        " is not the private key of --tls-cert " + pki_.Path("live.pem") + "\"}"),
            std::string::npos)
      << health;
  TlsClient after(port, pki_);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after.ServerSubject(), "/CN=renewed");
  // The files changed back to a good pair, no signal: noticed within seconds (a renewed Secret).
  std::filesystem::copy_file(pki_.Path("server.pem"), pki_.Path("live.pem"),
                             std::filesystem::copy_options::overwrite_existing);
  subject.clear();
  for (int i = 0; i < 200 && subject != "/CN=localhost"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    TlsClient fresh(port, pki_);
    subject = fresh.ok() ? fresh.ServerSubject() : "";
  }
  EXPECT_EQ(subject, "/CN=localhost");
  EXPECT_NE(serve.Stderr().find("the TLS certificate and key were not reloaded"), std::string::npos);
}

}  // namespace
}  // namespace skillrunner
