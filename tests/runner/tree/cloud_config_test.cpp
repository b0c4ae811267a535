// bedrock and vertex entries of skillrunner.yaml (design.md §11.5, §11.6): what they need, their
// URLs, and each model's structured output when the table does not say.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include "runner/tree/config.h"
#include "services/providers/set/provider_set.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {

EnvLookup Env(std::map<std::string, std::string> values) {
  return [values = std::move(values)](std::string_view name) -> std::optional<std::string> {
    auto it = values.find(std::string(name));
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(CloudConfigTest, BedrockAndVertexTakeTheirRegionsAndTheirModelsTheirModes) {
  testing::TempTree tree;
  auto path = tree.Write("skillrunner.yaml", R"(providers:
  aws: { kind: bedrock }
  gcp: { kind: vertex, project: proj-1, location: global }
  gcp_eu: { kind: vertex, project: proj-1 }
models:
  us.anthropic.claude-sonnet-4-5-20250929-v1:0: { provider: aws }
  anthropic.claude-3-haiku-20240307-v1:0: { provider: aws }
  meta.llama3-70b-instruct-v1:0: { provider: aws }
  claude-sonnet-4-5@20250929: { provider: gcp }
  gemini-2.5-flash: { provider: gcp_eu }
  gemini-1.5-pro: { provider: gcp, structured_output: json_object }
  tuned-model: { provider: gcp, publisher: anthropic }
)");
  auto config = LoadConfig(path.string(), Env({{"AWS_REGION", "eu-central-1"}}));
  ASSERT_TRUE(config) << config.error()[0].ToString();
  EXPECT_EQ(config->providers.at("aws").base_url, "https://bedrock-runtime.eu-central-1.amazonaws.com");
  EXPECT_EQ(config->providers.at("gcp").base_url, "https://aiplatform.googleapis.com");
  EXPECT_EQ(config->providers.at("gcp_eu").base_url, "https://us-central1-aiplatform.googleapis.com");
  EXPECT_EQ(config->StructuredOutputFor("us.anthropic.claude-sonnet-4-5-20250929-v1:0"), OutputMode::kNative);
  EXPECT_EQ(config->StructuredOutputFor("anthropic.claude-3-haiku-20240307-v1:0"), OutputMode::kTool);
  EXPECT_EQ(config->StructuredOutputFor("meta.llama3-70b-instruct-v1:0"), OutputMode::kNone);
  EXPECT_EQ(config->StructuredOutputFor("claude-sonnet-4-5@20250929"), OutputMode::kTool);
  EXPECT_EQ(config->StructuredOutputFor("gemini-2.5-flash"), OutputMode::kNative);
  EXPECT_EQ(config->StructuredOutputFor("gemini-1.5-pro"), OutputMode::kJsonObject);  // said wins
  EXPECT_EQ(config->DialectKindOf("anthropic.claude-3-haiku-20240307-v1:0"), "anthropic");
  EXPECT_EQ(config->DialectKindOf("gemini-2.5-flash"), "gemini");
  EXPECT_EQ(config->DialectKindOf("tuned-model"), "anthropic");
  EXPECT_EQ(config->providers.at("gcp").settings.at("publishers").at("tuned-model"), "anthropic");
  EXPECT_EQ(config->providers.at("gcp").settings.at("publishers").at("gemini-1.5-pro"), "google");
}

TEST(CloudConfigTest, WhatACloudEntryLacksIsNamedWithItsPlace) {
  testing::TempTree tree;
  auto path = tree.Write("skillrunner.yaml", R"(providers:
  aws: { kind: bedrock }
  gcp: { kind: vertex, region: us-east-1 }
  oa: { kind: openai }
models:
  gpt-4o: { provider: oa, publisher: google }
)");
  auto config = LoadConfig(path.string(), Env({}));
  ASSERT_FALSE(config);
  std::vector<std::string> said;
  for (const auto& problem : config.error()) said.push_back(problem.ToString());
  const std::string at = path.string();
  EXPECT_EQ(said, (std::vector<std::string>{
                      at + ":2:8: /providers/aws: a bedrock provider needs a region (region:, else AWS_REGION or "
                           "AWS_DEFAULT_REGION)",
                      at + ":3:8: /providers/gcp: a vertex provider needs its Google Cloud project (project:)",
                      at + ":3:24: /providers/gcp/region: only bedrock providers take \"region\" (this one is vertex)",
                      at + ":6:27: /models/gpt-4o/publisher: only models of vertex providers take a publisher"}));
}

TEST(CloudConfigTest, NoCredentialsAnywhereIsAConfigErrorWhenTheProvidersAreMade) {
  testing::TempTree tree;
  auto path = tree.Write("skillrunner.yaml", "providers:\n  aws: { kind: bedrock, region: us-west-2 }\n");
  auto env = Env({{"HOME", tree.root().string()}, {"AWS_EC2_METADATA_DISABLED", "true"}});
  auto config = LoadConfig(path.string(), env);
  ASSERT_TRUE(config) << config.error()[0].ToString();
  boost::asio::io_context io;
  auto set = providers::ProviderSet::Create(config->providers, io.get_executor(), env, RealClock());
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(set.error().message,
            "provider \"aws\": no AWS credentials: none in the environment (AWS_ACCESS_KEY_ID), no web "
            "identity (AWS_WEB_IDENTITY_TOKEN_FILE), no profile \"default\" with keys in " +
                tree.Path(".aws/credentials").string() +
                ", no container credentials, and AWS_EC2_METADATA_DISABLED=true");
}

}  // namespace
}  // namespace skillrunner
