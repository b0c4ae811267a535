// kind: vertex against the loopback fake (tests/support/cloud/vertex_fake.py): its token endpoint
// checks each service-account JWT with the account's public key, its metadata server wants
// Metadata-Flavor, and its Vertex AI routes want a token it issued.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <thread>

#include "services/providers/google/vertex_provider.h"
#include "services/providers/http_errors.h"
#include "tests/support/child_process.h"
#include "tests/support/cloud_fake.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::providers::google {
namespace {
namespace json = boost::json;
using test_support::CloudFake;

constexpr const char* kEmail = "skills@proj-1.iam.gserviceaccount.com";

// A fresh RSA key pair: the private key as PEM, the public key written to `public_file`.
std::string MakeRsaKey(const std::filesystem::path& public_file) {
  EVP_PKEY* key = EVP_PKEY_Q_keygen(nullptr, nullptr, "RSA", static_cast<size_t>(2048));
  BIO* out = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(out, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long size = BIO_get_mem_data(out, &data);
  std::string pem(data, static_cast<std::size_t>(size));
  BIO_free(out);
  BIO* pub = BIO_new_file(public_file.c_str(), "w");
  PEM_write_bio_PUBKEY(pub, key);
  BIO_free(pub);
  EVP_PKEY_free(key);
  return pem;
}

ChatRequest Request(const char* model) {
  ChatRequest request;
  request.model = model;
  request.messages = {{"system", "Be brief."}, {"user", "Say ok as JSON."}};
  request.max_output_tokens = 64;
  return request;
}

class VertexTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new testing::TempTree();
    private_pem_ = new std::string(MakeRsaKey(dir_->Path("public.pem")));
    fake_ = new CloudFake("vertex_fake.py", {"--public-key", dir_->Path("public.pem").string(), "--client-email",
                                             kEmail, "--project", "proj-1", "--location", "europe-west4"});
  }
  static void TearDownTestSuite() {
    delete fake_;
    delete private_pem_;
    delete dir_;
  }
  void SetUp() override {
    ASSERT_TRUE(fake_->started());
    fake_->Reset();
    fake_->Configure({{"token_lifetime_s", 3599}});
  }

  // A key file for the service account (`pem`: its private key), its token_uri the fake's.
  std::string KeyFile(const std::string& pem) const {
    json::object key{{"type", "service_account"}, {"project_id", "proj-1"},
                     {"private_key_id", "k1"},    {"private_key", pem},
                     {"client_email", kEmail},    {"token_uri", fake_->base_url() + "/token"}};
    return dir_->Write("key.json", json::serialize(key)).string();
  }

  std::unique_ptr<VertexProvider> Make(GoogleSource source) {
    VertexOptions options;
    options.project = "proj-1";
    options.location = "europe-west4";
    options.base_url = fake_->base_url();
    options.credentials = std::move(source);
    options.publishers = {{"claude-sonnet-4-5@20250929", "anthropic"}};
    return std::make_unique<VertexProvider>(options, http::MakeHttpClient(io_.get_executor()),
                                            [this] { return std::chrono::system_clock::now() + ahead_; });
  }

  GoogleSource ServiceAccount(const std::string& pem) {
    auto source = ResolveGoogleSource([](std::string_view) { return std::optional<std::string>(); }, KeyFile(pem));
    EXPECT_TRUE(source.has_value()) << source.error().message;
    return source.value_or(GoogleSource{});
  }

  ChatResult Call(Provider& provider, const ChatRequest& request) {
    auto future = boost::asio::co_spawn(io_, provider.Chat(request), boost::asio::use_future);
    io_.restart();
    io_.run();
    return future.get();
  }

  static testing::TempTree* dir_;
  static std::string* private_pem_;
  static CloudFake* fake_;
  boost::asio::io_context io_;
  std::chrono::seconds ahead_{0};  // the provider's wall clock runs this far ahead of the real one
};

testing::TempTree* VertexTest::dir_ = nullptr;
std::string* VertexTest::private_pem_ = nullptr;
CloudFake* VertexTest::fake_ = nullptr;

TEST_F(VertexTest, GeminiIsCalledWithTheServiceAccountsToken) {
  auto provider = Make(ServiceAccount(*private_pem_));
  ChatRequest request = Request("gemini-2.5-flash");
  auto answer = Call(*provider, request);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->text, R"({"ok":true})");
  EXPECT_EQ(answer->usage.input_tokens, 10);
  ASSERT_TRUE(Call(*provider, request).has_value());
  auto token = fake_->RequestsOf("token");
  ASSERT_EQ(token.size(), 1u);  // kept while more than five minutes of it are left
  EXPECT_EQ(token[0].at("auth"), "ok");
  EXPECT_TRUE(std::string(token[0].at("body").as_string())
                  .starts_with("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=ey"));
  auto sent = fake_->RequestsOf("generateContent");
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].at("auth"), "ok");
  EXPECT_EQ(sent[0].at("path"),
            "/v1/projects/proj-1/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent");
  EXPECT_EQ(
      json::serialize(sent[0].at("body")),
      R"({"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"Say ok as JSON."}]}],"generationConfig":{"maxOutputTokens":64}})");
}

TEST_F(VertexTest, ClaudeGoesToRawPredictWithTheVertexVersionAndNoModel) {
  auto provider = Make(ServiceAccount(*private_pem_));
  auto answer = Call(*provider, Request("claude-sonnet-4-5@20250929"));
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->text, R"({"ok":true})");
  auto sent = fake_->RequestsOf("rawPredict");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].at("auth"), "ok");
  EXPECT_EQ(
      sent[0].at("path"),
      "/v1/projects/proj-1/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict");
  EXPECT_EQ(
      sent[0].at("body"),  // members in any order
      json::parse(R"({"max_tokens":64,"system":"Be brief.","messages":[{"role":"user","content":"Say ok as JSON."}],)"
                  R"("anthropic_version":"vertex-2023-10-16"})"));
}

TEST_F(VertexTest, BothPublishersStream) {
  auto provider = Make(ServiceAccount(*private_pem_));
  for (const char* model : {"gemini-2.5-flash", "claude-sonnet-4-5@20250929"}) {
    ChatRequest request = Request(model);
    std::string streamed;
    request.on_text = [&](std::string_view piece) {
      streamed += piece;
      return true;
    };
    auto answer = Call(*provider, request);
    ASSERT_TRUE(answer.has_value()) << model << ": " << answer.error().message;
    EXPECT_EQ(streamed, answer->text) << model;
    EXPECT_FALSE(streamed.empty()) << model;
  }
  ASSERT_EQ(fake_->RequestsOf("streamGenerateContent").size(), 1u);
  EXPECT_EQ(fake_->RequestsOf("streamGenerateContent")[0].at("query"), "alt=sse");
  ASSERT_EQ(fake_->RequestsOf("streamRawPredict").size(), 1u);
  EXPECT_EQ(fake_->RequestsOf("streamRawPredict")[0].at("body").at("stream"), true);
}

TEST_F(VertexTest, TheTokenIsRefreshedFiveMinutesBeforeItExpires) {
  fake_->Configure({{"token_lifetime_s", 330}});
  auto provider = Make(ServiceAccount(*private_pem_));
  ASSERT_TRUE(Call(*provider, Request("gemini-2.5-flash")).has_value());
  ASSERT_TRUE(Call(*provider, Request("gemini-2.5-flash")).has_value());
  EXPECT_EQ(fake_->RequestsOf("token").size(), 1u);
  ahead_ = std::chrono::seconds(31);
  ASSERT_TRUE(Call(*provider, Request("gemini-2.5-flash")).has_value());
  EXPECT_EQ(fake_->RequestsOf("token").size(), 2u);
}

TEST_F(VertexTest, TheMetadataServerGivesTheWorkloadsToken) {
  auto source = ResolveGoogleSource(
      [&](std::string_view name) {
        return name == "GCE_METADATA_HOST" ? std::optional<std::string>("127.0.0.1:" + std::to_string(fake_->port()))
                                           : std::nullopt;
      },
      "");
  ASSERT_TRUE(source.has_value());
  EXPECT_EQ(source->Describe(), "metadata server (127.0.0.1:" + std::to_string(fake_->port()) + ")");
  auto provider = Make(*source);
  auto answer = Call(*provider, Request("gemini-2.5-flash"));
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  auto token = fake_->RequestsOf("metadata-token");
  ASSERT_EQ(token.size(), 1u);
  EXPECT_EQ(token[0].at("headers").at("metadata-flavor"), "Google");
  EXPECT_EQ(fake_->RequestsOf("generateContent").at(0).at("auth"), "ok");
}

TEST_F(VertexTest, AJwtTheTokenEndpointRefusesIsAProviderErrorWithNoSecretInIt) {
  const std::string other = MakeRsaKey(dir_->Path("other-public.pem"));  // not the account's key
  auto provider = Make(ServiceAccount(other));
  auto refused = Call(*provider, Request("gemini-2.5-flash"));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().http_status, 400);
  EXPECT_FALSE(refused.error().retryable);
  EXPECT_NE(refused.error().message.find("invalid_grant"), std::string::npos) << refused.error().message;
  EXPECT_EQ(refused.error().message.find("PRIVATE KEY"), std::string::npos);
  EXPECT_TRUE(fake_->RequestsOf("generateContent").empty());
}

TEST_F(VertexTest, AnUnreachableMetadataServerIsTransientAndABrokenKeyIsSaid) {
  const std::string host = "127.0.0.1:" + std::to_string(test_support::FreeLoopbackPort());
  auto source = ResolveGoogleSource(
      [&](std::string_view name) {
        return name == "GCE_METADATA_HOST" ? std::optional<std::string>(host) : std::nullopt;
      },
      "");
  ASSERT_TRUE(source.has_value());
  auto unreachable = Call(*Make(*source), Request("gemini-2.5-flash"));
  ASSERT_FALSE(unreachable.has_value());
  EXPECT_TRUE(unreachable.error().retryable);
  EXPECT_TRUE(unreachable.error().message.starts_with("metadata server (" + host + "): "))
      << unreachable.error().message;
  auto broken = Call(*Make(ServiceAccount("-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n")),
                     Request("gemini-2.5-flash"));
  ASSERT_FALSE(broken.has_value());
  EXPECT_FALSE(broken.error().retryable);
  EXPECT_EQ(broken.error().message, "service account " + std::string(kEmail) + " (" + dir_->Path("key.json").string() +
                                        "): the private key does not load (" + dir_->Path("key.json").string() + ")");
  EXPECT_TRUE(fake_->RequestsOf("token").empty());
}

TEST_F(VertexTest, AKeyFileThatIsNoServiceAccountsIsSaidAtLoad) {
  auto path = dir_->Write("user.json", R"({"type":"authorized_user","client_id":"x"})");
  auto source = ResolveGoogleSource([](std::string_view) { return std::optional<std::string>(); }, path.string());
  ASSERT_FALSE(source.has_value());
  EXPECT_EQ(source.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(source.error().message,
            "the key file " + path.string() +
                " is of type \"authorized_user\"; only a service account's key (type service_account) "
                "is supported");
}

TEST(RedactTest, GoogleTokensAndPrivateKeysNeverReachAMessage) {
  EXPECT_EQ(Redact("bad token ya29.a0AfB_byC-1x.y and more", ""), "bad token ya29.[redacted] and more");
  EXPECT_EQ(Redact("key: -----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY----- end", ""),
            "key: [redacted private key] end");
}

}  // namespace
}  // namespace skillrunner::providers::google
