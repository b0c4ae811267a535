// Bedrock's credential chain (design.md §11.5, §11.6) against the loopback fake's STS, IMDSv2 and
// container endpoints; every converse call's signature is checked by botocore.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/serialize.hpp>
#include <thread>

#include "services/providers/aws/bedrock_provider.h"
#include "tests/support/child_process.h"
#include "tests/support/cloud_fake.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::providers::aws {
namespace {
namespace json = boost::json;
using test_support::CloudFake;

constexpr const char* kRole = "arn:aws:iam::123456789012:role/skills";

ChatRequest Request() {
  ChatRequest request;
  request.model = "anthropic.claude-3-haiku-20240307-v1:0";
  request.messages = {{"user", "Say ok as JSON."}};
  return request;
}

class BedrockCredentialsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fake_ = new CloudFake("bedrock_fake.py", {"--region", "eu-west-1", "--credentials", "AKIDFILEKEY:file-secret-key",
                                              "--web-identity-token", "eks-issued-token", "--role-arn", kRole,
                                              "--container-token", "pod-identity-token"});
  }
  static void TearDownTestSuite() {
    delete fake_;
    fake_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(fake_->started());
    fake_->Reset();
    fake_->Configure({{"credential_lifetime_s", 3600}});
    env_ = {{"HOME", home_.root().string()}, {"AWS_EC2_METADATA_DISABLED", "true"}};
  }

  EnvLookup Env() const {
    return [env = env_](std::string_view name) -> std::optional<std::string> {
      auto it = env.find(std::string(name));
      return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
  }

  std::unique_ptr<BedrockProvider> Make() {
    auto chain = ResolveAwsChain(Env(), "eu-west-1", "");
    EXPECT_TRUE(chain.has_value()) << chain.error().message;
    BedrockOptions options;
    options.region = "eu-west-1";
    options.base_url = fake_->base_url();
    options.credentials = chain.value_or(AwsChain{});
    // The provider's wall clock runs `ahead_` in front of the real one (signatures allow 5 minutes).
    return std::make_unique<BedrockProvider>(options, http::MakeHttpClient(io_.get_executor()),
                                             [this] { return std::chrono::system_clock::now() + ahead_; });
  }

  std::vector<ChatResult> Calls(Provider& provider, int n) {
    ChatRequest request = Request();
    std::vector<std::future<ChatResult>> futures;
    for (int i = 0; i < n; ++i) {
      futures.push_back(boost::asio::co_spawn(io_, provider.Chat(request), boost::asio::use_future));
    }
    io_.restart();
    io_.run();
    std::vector<ChatResult> out;
    for (auto& f : futures) out.push_back(f.get());
    return out;
  }

  ChatResult Call(Provider& provider) { return std::move(Calls(provider, 1)[0]); }

  void UseWebIdentity() {
    home_.Write("token", "eks-issued-token\n");
    env_["AWS_WEB_IDENTITY_TOKEN_FILE"] = home_.Path("token").string();
    env_["AWS_ROLE_ARN"] = kRole;
    env_["AWS_ENDPOINT_URL_STS"] = fake_->base_url();
  }

  static CloudFake* fake_;
  boost::asio::io_context io_;
  testing::TempTree home_;
  std::map<std::string, std::string> env_;
  std::chrono::seconds ahead_{0};
};

CloudFake* BedrockCredentialsTest::fake_ = nullptr;

TEST_F(BedrockCredentialsTest, AProfileOfTheSharedCredentialsFileSigns) {
  home_.Write(".aws/credentials",
              "# keys\n[default]\naws_access_key_id = AKIDWRONG\naws_secret_access_key = nope\n\n"
              "[dev]\naws_access_key_id = AKIDFILEKEY\naws_secret_access_key = file-secret-key\n");
  env_["AWS_PROFILE"] = "dev";
  auto chain = ResolveAwsChain(Env(), "eu-west-1", "");
  ASSERT_TRUE(chain.has_value()) << chain.error().message;
  EXPECT_EQ(chain->Describe(), "shared credentials file " + home_.Path(".aws/credentials").string() + " (profile dev)");
  auto provider = Make();
  auto answer = Call(*provider);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  auto sent = fake_->RequestsOf("converse");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].at("auth"), "ok");
  EXPECT_TRUE(
      sent[0].at("headers").at("authorization").as_string().starts_with("AWS4-HMAC-SHA256 Credential=AKIDFILEKEY/"));
}

TEST_F(BedrockCredentialsTest, WhatTheChainCannotUseIsSaidAtLoad) {
  home_.Write(".aws/config", "[profile corp]\nsso_session = corp\nregion = eu-west-1\n");
  env_["AWS_PROFILE"] = "corp";
  auto sso = ResolveAwsChain(Env(), "eu-west-1", "");
  ASSERT_FALSE(sso.has_value());
  EXPECT_EQ(sso.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(sso.error().message, "profile \"corp\" in " + home_.Path(".aws/config").string() +
                                     " uses sso_session, which is not supported; give the credentials another way "
                                     "(docs/providers.md)");
  auto missing = ResolveAwsChain(Env(), "eu-west-1", "nope");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message,
            "AWS profile \"nope\" is in neither " + home_.Path(".aws/credentials").string() + " nor the config file");
  env_.erase("AWS_PROFILE");
  auto none = ResolveAwsChain(Env(), "eu-west-1", "");
  ASSERT_FALSE(none.has_value());
  EXPECT_EQ(none.error().message,
            "no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID), no web identity "
            "(AWS_WEB_IDENTITY_TOKEN_FILE), no profile \"default\" with keys in " +
                home_.Path(".aws/credentials").string() +
                ", no container credentials, and AWS_EC2_METADATA_DISABLED=true");
}

TEST_F(BedrockCredentialsTest, WebIdentityIsExchangedAtStsOnceForCallsThatComeTogether) {
  UseWebIdentity();
  auto provider = Make();
  auto answers = Calls(*provider, 4);
  for (const auto& answer : answers) EXPECT_TRUE(answer.has_value()) << answer.error().message;
  Call(*provider);
  auto sts = fake_->RequestsOf("sts");
  ASSERT_EQ(sts.size(), 1u);  // one exchange, shared, and kept while it has more than 5 minutes left
  EXPECT_EQ(sts[0].at("method"), "POST");
  EXPECT_EQ(sts[0].at("headers").at("content-type"), "application/x-www-form-urlencoded");
  EXPECT_EQ(
      sts[0].at("body"),
      "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fskills"
      "&RoleSessionName=skillrunner&WebIdentityToken=eks-issued-token");
  auto converse = fake_->RequestsOf("converse");
  ASSERT_EQ(converse.size(), 5u);
  for (const auto& sent : converse) {
    EXPECT_EQ(sent.at("auth"), "ok");
    EXPECT_TRUE(sent.at("headers").as_object().contains("x-amz-security-token"));
  }
}

TEST_F(BedrockCredentialsTest, CredentialsAreRefreshedFiveMinutesBeforeTheyExpire) {
  UseWebIdentity();
  fake_->Configure({{"credential_lifetime_s", 330}});  // 30 s before the refresh is due
  auto provider = Make();
  ASSERT_TRUE(Call(*provider).has_value());
  ASSERT_TRUE(Call(*provider).has_value());
  EXPECT_EQ(fake_->RequestsOf("sts").size(), 1u);
  ahead_ = std::chrono::seconds(31);
  ASSERT_TRUE(Call(*provider).has_value());
  EXPECT_EQ(fake_->RequestsOf("sts").size(), 2u);
}

TEST_F(BedrockCredentialsTest, InstanceAndContainerCredentialsAreRefreshedBeforeTheyExpireToo) {
  home_.Write("pod-token", "pod-identity-token");
  for (const char* source : {"imds", "container"}) {
    SetUp();
    ahead_ = std::chrono::seconds(0);
    fake_->Configure({{"credential_lifetime_s", 330}});
    if (std::string(source) == "imds") {
      env_["AWS_EC2_METADATA_DISABLED"] = "false";
      env_["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = fake_->base_url();
    } else {
      env_["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = fake_->base_url() + "/container-credentials";
      env_["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = home_.Path("pod-token").string();
    }
    const std::string route = std::string(source) == "imds" ? "imds-creds" : "container";
    auto provider = Make();
    ASSERT_TRUE(Call(*provider).has_value()) << source;
    ASSERT_TRUE(Call(*provider).has_value()) << source;
    EXPECT_EQ(fake_->RequestsOf(route).size(), 1u) << source;
    ahead_ = std::chrono::seconds(31);
    ASSERT_TRUE(Call(*provider).has_value()) << source;
    EXPECT_EQ(fake_->RequestsOf(route).size(), 2u) << source;
    for (const auto& sent : fake_->RequestsOf("converse")) EXPECT_EQ(sent.at("auth"), "ok") << source;
  }
}

TEST_F(BedrockCredentialsTest, StsRefusingIsAProviderErrorAndUnreachableIsTransient) {
  UseWebIdentity();
  env_["AWS_ROLE_ARN"] = "arn:aws:iam::123456789012:role/other";
  auto provider = Make();
  auto refused = Call(*provider);
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().http_status, 403);
  EXPECT_FALSE(refused.error().retryable);
  EXPECT_FALSE(refused.error().IsRateLimited());
  EXPECT_TRUE(refused.error().message.starts_with("STS AssumeRoleWithWebIdentity at " + fake_->base_url() +
                                                  ": HTTP 403: AccessDenied: "))
      << refused.error().message;
  EXPECT_EQ(refused.error().message.find("eks-issued-token"), std::string::npos);
  EXPECT_TRUE(fake_->RequestsOf("converse").empty());  // nothing unsigned went out
  env_["AWS_ROLE_ARN"] = kRole;
  env_["AWS_ENDPOINT_URL_STS"] = "http://127.0.0.1:" + std::to_string(test_support::FreeLoopbackPort());
  auto unreachable = Call(*Make());
  ASSERT_FALSE(unreachable.has_value());
  EXPECT_EQ(unreachable.error().http_status, 0);
  EXPECT_TRUE(unreachable.error().retryable);
  EXPECT_TRUE(unreachable.error().message.starts_with("STS AssumeRoleWithWebIdentity at " +
                                                      env_["AWS_ENDPOINT_URL_STS"] + ": "))
      << unreachable.error().message;
  // An empty token file is said before anything is sent.
  home_.Write("token", "");
  env_["AWS_ENDPOINT_URL_STS"] = fake_->base_url();
  auto empty = Call(*Make());
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().message, "STS AssumeRoleWithWebIdentity at " + fake_->base_url() + ": the token file " +
                                       home_.Path("token").string() + " is empty or unreadable");
  EXPECT_FALSE(empty.error().retryable);
}

TEST_F(BedrockCredentialsTest, AContainerTokenTheEndpointRefusesIsAProviderErrorNamingIt) {
  env_["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = fake_->base_url() + "/container-credentials";
  env_["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "not-the-pods-token";
  auto refused = Call(*Make());
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().http_status, 401);
  EXPECT_FALSE(refused.error().retryable);
  EXPECT_TRUE(refused.error().message.starts_with("container credentials at " + fake_->base_url() +
                                                  "/container-credentials: HTTP 401: "))
      << refused.error().message;
  EXPECT_TRUE(fake_->RequestsOf("converse").empty());
}

TEST_F(BedrockCredentialsTest, Imdsv2GivesTheInstanceRolesCredentials) {
  env_["AWS_EC2_METADATA_DISABLED"] = "false";
  env_["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = fake_->base_url();
  auto provider = Make();
  auto answer = Call(*provider);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  auto token = fake_->RequestsOf("imds-token");
  ASSERT_EQ(token.size(), 1u);
  EXPECT_EQ(token[0].at("method"), "PUT");
  EXPECT_EQ(token[0].at("headers").at("x-aws-ec2-metadata-token-ttl-seconds"), "21600");
  ASSERT_EQ(fake_->RequestsOf("imds-role").size(), 1u);
  ASSERT_EQ(fake_->RequestsOf("imds-creds").size(), 1u);
  EXPECT_EQ(fake_->RequestsOf("converse").at(0).at("auth"), "ok");
}

TEST_F(BedrockCredentialsTest, ContainerCredentialsAskWithTheirToken) {
  home_.Write("pod-token", "pod-identity-token");
  env_["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = fake_->base_url() + "/container-credentials";
  env_["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = home_.Path("pod-token").string();
  auto provider = Make();
  auto answer = Call(*provider);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  auto container = fake_->RequestsOf("container");
  ASSERT_EQ(container.size(), 1u);
  EXPECT_EQ(container[0].at("headers").at("authorization"), "pod-identity-token");
  EXPECT_EQ(fake_->RequestsOf("converse").at(0).at("auth"), "ok");
}

}  // namespace
}  // namespace skillrunner::providers::aws
