// `skillrunner run` on bedrock and vertex providers, end to end against the loopback fakes: each
// output mode, the transient and rate-limit paths, truncation, and no secret in anything it prints.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "tests/support/cli_runner.h"
#include "tests/support/cloud_fake.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using test_support::CloudFake;
using test_support::ShellQuote;
using test_support::Skillrunner;
using testing::ReadFile;
using testing::TempTree;

constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYsecretvalue";
constexpr const char* kSessionToken = "IQoJb3JpZ2luX2VjEXAMPLEsessiontoken0123456789";

void WriteSkill(const TempTree& tree, const std::string& id, const std::string& model) {
  tree.Write("skills/" + id + "/skill.yaml", "id: " + id + "\nmodel: \"" + model + R"("
template_type: LLM_JSON_GENERATION
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema:
  type: object
  required: [ok]
  additionalProperties: false
  properties: { ok: { type: boolean } }
retry: { transient: { initial_delay_ms: 50 } }
prompt:
  user: "Answer about: {{input.text}}"
)");
}

class CloudCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(bedrock_.started());
    tree_.Write("skillrunner.yaml",
                "providers:\n  aws: { kind: bedrock, region: us-east-1, base_url: \"" + bedrock_.base_url() + R"(" }
models:
  anthropic.claude-sonnet-4-5-20250929-v1:0: { provider: aws }
  anthropic.claude-3-haiku-20240307-v1:0: { provider: aws }
  meta.llama3-70b-instruct-v1:0: { provider: aws }
  amazon.nova-pro-v1:0: { provider: aws, on_refusal: [meta.llama3-70b-instruct-v1:0] }
)");
    WriteSkill(tree_, "native", "anthropic.claude-sonnet-4-5-20250929-v1:0");
    WriteSkill(tree_, "tool", "anthropic.claude-3-haiku-20240307-v1:0");
    WriteSkill(tree_, "loop", "meta.llama3-70b-instruct-v1:0");
    WriteSkill(tree_, "guarded", "amazon.nova-pro-v1:0");
  }

  test_support::CommandResult Run(const std::string& skill, const std::string& more = "") {
    const std::string env = std::string("AWS_ACCESS_KEY_ID=ASIAEXAMPLEKEY AWS_SECRET_ACCESS_KEY=") + kSecret +
                            " AWS_SESSION_TOKEN=" + kSessionToken +
                            " AWS_EC2_METADATA_DISABLED=true HOME=" + ShellQuote(tree_.root().string());
    return Skillrunner(tree_.root(),
                       "run " + skill + " --input '{\"text\":\"x\"}' --show-request --log-level debug " + more, "2>&1",
                       env);
  }

  CloudFake bedrock_{
      "bedrock_fake.py",
      {"--region", "us-east-1", "--credentials", std::string("ASIAEXAMPLEKEY:") + kSecret + ":" + kSessionToken}};
  TempTree tree_;
};

TEST_F(CloudCliTest, EachModeOfABedrockModelIsAnsweredAndNothingPrintedHoldsASecret) {
  bedrock_.Enqueue("converse", json::array{json::parse(R"({"status":200,"body":{"output":{"message":{"role":"assistant",
      "content":[{"toolUse":{"toolUseId":"t","name":"tool","input":{"ok":true}}}]}},"stopReason":"tool_use",
      "usage":{"inputTokens":9,"outputTokens":3,"totalTokens":12}}})")});
  auto tool = Run("tool");
  auto native = Run("native");
  auto loop = Run("loop");
  for (const auto* run : {&tool, &native, &loop}) {
    EXPECT_EQ(run->status, 0) << run->out;
    EXPECT_NE(run->out.find(R"("output":{"ok":true})"), std::string::npos) << run->out;
    EXPECT_EQ(run->out.find(kSecret), std::string::npos) << run->out;
    EXPECT_EQ(run->out.find(kSessionToken), std::string::npos) << run->out;
  }
  auto sent = bedrock_.RequestsOf("converse");
  ASSERT_EQ(sent.size(), 3u);
  for (const auto& request : sent) EXPECT_EQ(request.at("auth"), "ok");
  EXPECT_TRUE(sent[0].at("body").as_object().contains("toolConfig"));
  EXPECT_TRUE(sent[1].at("body").as_object().contains("outputConfig"));
  const json::object& loop_body = sent[2].at("body").as_object();
  EXPECT_FALSE(loop_body.contains("outputConfig") || loop_body.contains("toolConfig"));
  // The loop's prompt carries the schema instead.
  EXPECT_NE(json::serialize(loop_body.at("system")).find("additionalProperties"), std::string::npos);
}

TEST_F(CloudCliTest, ThrottlingAndAModelNotReadyAreRetriedAndMaxTokensIsATruncation) {
  bedrock_.Enqueue("converse", json::array{json::parse(R"({"status":429,"error_type":"ThrottlingException",
                                                           "message":"Too many requests"})"),
                                           json::parse(R"({"status":429,"error_type":"ModelNotReadyException",
                                                           "message":"Model is loading"})")});
  auto retried = Run("loop");
  ASSERT_EQ(retried.status, 0) << retried.out;
  auto result = json::parse(retried.out.substr(retried.out.rfind("\n{") + 1));
  const json::array& attempts = result.at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 3u) << retried.out;
  EXPECT_EQ(attempts[0].at("kind"), "transient");
  EXPECT_EQ(attempts[0].at("http_status"), 429);
  EXPECT_EQ(attempts[1].at("kind"), "transient");
  EXPECT_EQ(attempts[2].at("kind"), "ok");
  bedrock_.Enqueue("converse", json::array{json::parse(R"({"status":200,"body":{"output":{"message":{"role":"assistant",
      "content":[{"text":"{\"ok\""}]}},"stopReason":"max_tokens","usage":{"inputTokens":9,"outputTokens":1024}}})"),
                                           json::parse(R"({"status":200,"body":{"output":{"message":{"role":"assistant",
      "content":[{"text":"{\"ok\""}]}},"stopReason":"max_tokens","usage":{"inputTokens":9,"outputTokens":2048}}})")});
  auto truncated = Run("loop");
  EXPECT_EQ(truncated.status, 4) << truncated.out;  // the model's answer could not be used
  EXPECT_NE(truncated.out.find(R"("code":"TRUNCATED")"), std::string::npos) << truncated.out;
}

// A guardrail that intervenes is CONTENT_FILTERED after one request to that model; on_refusal sends the
// same request to the next model, which answers.
TEST_F(CloudCliTest, AGuardrailIsContentFilteredOnceAndOnRefusalAnswersFromTheNextModel) {
  const json::value guardrail = json::parse(R"({"status":200,"body":{"output":{"message":{"role":"assistant",
      "content":[{"text":"Sorry, the model cannot answer this question."}]}},"stopReason":"guardrail_intervened",
      "usage":{"inputTokens":9,"outputTokens":10,"totalTokens":19}}})");
  bedrock_.Enqueue("converse", json::array{guardrail});
  auto turned = Run("guarded");
  ASSERT_EQ(turned.status, 0) << turned.out;
  auto result = json::parse(turned.out.substr(turned.out.rfind("\n{") + 1));
  const json::array& attempts = result.at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 2u) << turned.out;
  EXPECT_EQ(attempts[0].at("kind"), "content_filter");
  EXPECT_EQ(attempts[0].at("model"), "amazon.nova-pro-v1:0");
  EXPECT_EQ(attempts[1].at("kind"), "ok");
  EXPECT_EQ(attempts[1].at("model"), "meta.llama3-70b-instruct-v1:0");
  auto sent = bedrock_.RequestsOf("converse");
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].at("model"), "amazon.nova-pro-v1:0");
  EXPECT_EQ(sent[1].at("model"), "meta.llama3-70b-instruct-v1:0");
  EXPECT_EQ(sent[1].at("body"), sent[0].at("body"));  // the same request, on the next model
  // Without a model to turn to: CONTENT_FILTERED, one request.
  tree_.Write("skillrunner.yaml",
              ReadFile(tree_.Path("skillrunner.yaml"))
                  .replace(ReadFile(tree_.Path("skillrunner.yaml")).find(", on_refusal"),
                           std::string(", on_refusal: [meta.llama3-70b-instruct-v1:0]").size(), ""));
  bedrock_.Enqueue("converse", json::array{guardrail});
  auto filtered = Run("guarded");
  EXPECT_EQ(filtered.status, 4) << filtered.out;
  EXPECT_NE(filtered.out.find(R"({"error":{"code":"CONTENT_FILTERED")"), std::string::npos) << filtered.out;
  EXPECT_EQ(bedrock_.RequestsOf("converse").size(), 3u);
}

}  // namespace
}  // namespace skillrunner
