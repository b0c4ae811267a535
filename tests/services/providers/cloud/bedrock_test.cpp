// kind: bedrock against the loopback fake (tests/support/cloud/bedrock_fake.py), which checks every
// SigV4 signature with botocore and answers in Bedrock Runtime's wire format.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "services/providers/aws/bedrock_provider.h"
#include "services/providers/aws/event_stream.h"
#include "services/providers/limited_provider.h"
#include "services/providers/retrying_provider.h"
#include "services/state/request_limiter.h"
#include "tests/support/cloud_fake.h"
#include "tests/support/llm_test_bed.h"

namespace skillrunner::providers::aws {
namespace {
namespace json = boost::json;
using test_support::CloudFake;

constexpr const char* kKeyId = "AKIDEXAMPLETEST";
constexpr const char* kSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
constexpr const char* kModel = "anthropic.claude-sonnet-4-5-20250929-v1:0";

ChatRequest Request() {
  ChatRequest request;
  request.model = kModel;
  request.messages = {{"system", "Be brief."}, {"user", "Say ok as JSON."}};
  request.temperature = 0.2;
  request.max_output_tokens = 64;
  return request;
}

ResponseFormat Format(ResponseFormat::Kind kind) {
  ResponseFormat format;
  format.kind = kind;
  format.name = "answer";
  format.schema = std::make_shared<const json::value>(json::parse(
      R"({"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"],"additionalProperties":false})"));
  format.strict = true;
  return format;
}

class BedrockTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    fake_ = new CloudFake("bedrock_fake.py",
                          {"--region", "us-east-1", "--credentials", std::string(kKeyId) + ":" + kSecret,
                           "--web-identity-token", "eks-issued-token", "--role-arn",
                           "arn:aws:iam::123456789012:role/skills", "--container-token", "pod-identity-token"});
  }
  static void TearDownTestSuite() {
    delete fake_;
    fake_ = nullptr;
  }
  void SetUp() override {
    ASSERT_TRUE(fake_->started());
    fake_->Reset();
    fake_->Configure({{"credential_lifetime_s", 3600}});
  }

  // A provider whose credential chain reads `env` (keys in the environment unless told otherwise).
  std::unique_ptr<BedrockProvider> Make(std::map<std::string, std::string> env = {}) {
    if (env.empty()) env = {{"AWS_ACCESS_KEY_ID", kKeyId}, {"AWS_SECRET_ACCESS_KEY", kSecret}};
    env["AWS_EC2_METADATA_DISABLED"] = env.contains("AWS_EC2_METADATA_SERVICE_ENDPOINT") ? "false" : "true";
    EnvLookup lookup = [env](std::string_view name) -> std::optional<std::string> {
      auto it = env.find(std::string(name));
      return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    };
    auto chain = ResolveAwsChain(lookup, "us-east-1", "");
    EXPECT_TRUE(chain.has_value()) << chain.error().message;
    BedrockOptions options;
    options.region = "us-east-1";
    options.base_url = fake_->base_url();
    options.credentials = chain.value_or(AwsChain{});
    return std::make_unique<BedrockProvider>(options, http::MakeHttpClient(io_.get_executor()));
  }

  ChatResult Call(Provider& provider, const ChatRequest& request) {
    auto future = boost::asio::co_spawn(io_, provider.Chat(request), boost::asio::use_future);
    io_.restart();
    io_.run();
    return future.get();
  }

  static CloudFake* fake_;
  boost::asio::io_context io_;
};

CloudFake* BedrockTest::fake_ = nullptr;

TEST_F(BedrockTest, ANativeRequestIsSignedAndItsAnswerRead) {
  auto provider = Make();
  ChatRequest request = Request();
  request.response_format = Format(ResponseFormat::Kind::kJsonSchema);
  auto answer = Call(*provider, request);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(answer->text, R"({"ok":true})");
  EXPECT_EQ(answer->finish_reason, FinishReason::kStop);
  EXPECT_EQ(answer->usage.input_tokens, 10);
  EXPECT_EQ(answer->usage.output_tokens, 5);
  EXPECT_FALSE(answer->request_id.empty());
  auto sent = fake_->RequestsOf("converse");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].at("auth"), "ok");
  EXPECT_EQ(sent[0].at("path"), "/model/anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse");
  EXPECT_EQ(sent[0].at("model"), kModel);
  const std::string schema = json::serialize(request.response_format.Schema());
  EXPECT_EQ(
      json::serialize(sent[0].at("body")),
      json::serialize(json::parse(
          R"({"messages":[{"role":"user","content":[{"text":"Say ok as JSON."}]}],"system":[{"text":"Be brief."}],)"
          R"("inferenceConfig":{"maxTokens":64,"temperature":0.2},"outputConfig":{"textFormat":{"type":"json_schema",)"
          R"("structure":{"jsonSchema":{"schema":)" +
          json::serialize(json::value(schema)) + R"(,"name":"answer"}}}}})")));
  EXPECT_EQ(sent[0].at("headers").at("accept"), "application/json");
}

TEST_F(BedrockTest, ToolModeForcesOneToolAndItsInputIsTheAnswer) {
  fake_->Enqueue("converse", json::array{json::parse(R"({"status":200,"body":{"output":{"message":{"role":"assistant",
      "content":[{"toolUse":{"toolUseId":"t1","name":"answer","input":{"ok":false}}}]}},"stopReason":"tool_use",
      "usage":{"inputTokens":20,"outputTokens":7,"totalTokens":127,"cacheReadInputTokens":100}}})")});
  auto provider = Make();
  ChatRequest request = Request();
  request.response_format = Format(ResponseFormat::Kind::kTool);
  auto answer = Call(*provider, request);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_TRUE(answer->tool_call);
  EXPECT_EQ(answer->text, R"({"ok":false})");
  EXPECT_EQ(answer->usage.input_tokens, 120);  // the cache's reads are input too
  EXPECT_EQ(answer->usage.cached_input_tokens, 100);
  auto sent = fake_->RequestsOf("converse");
  ASSERT_EQ(sent.size(), 1u);
  const json::object& body = sent[0].at("body").as_object();
  EXPECT_FALSE(body.contains("outputConfig"));
  EXPECT_EQ(
      json::serialize(body.at("toolConfig")),
      json::serialize(json::object{
          {"tools",
           json::array{json::object{
               {"toolSpec", json::object{{"name", "answer"},
                                         {"inputSchema", json::object{{"json", request.response_format.Schema()}}}}}}}},
          {"toolChoice", json::object{{"tool", json::object{{"name", "answer"}}}}}}));
}

TEST_F(BedrockTest, StopReasonsMapToTruncationAndTheContentFilter) {
  auto answer_with = [](const char* reason) {
    return json::parse(
        std::string(
            R"({"status":200,"body":{"output":{"message":{"role":"assistant","content":[{"text":"{\"ok\""}]}},"stopReason":")") +
        reason + R"(","usage":{"inputTokens":1,"outputTokens":64,"totalTokens":65}}})");
  };
  fake_->Enqueue("converse", json::array{answer_with("max_tokens"), answer_with("guardrail_intervened"),
                                         answer_with("content_filtered")});
  auto provider = Make();
  EXPECT_EQ(Call(*provider, Request())->finish_reason, FinishReason::kLength);
  EXPECT_EQ(Call(*provider, Request())->finish_reason, FinishReason::kContentFilter);
  EXPECT_EQ(Call(*provider, Request())->finish_reason, FinishReason::kContentFilter);
}

TEST_F(BedrockTest, OnlyThrottlingFeedsTheRateLimitAndModelErrorsAreTerminal) {
  auto error = [](int status, const char* type, const char* message) {
    return json::object{{"status", status}, {"error_type", type}, {"message", message}};
  };
  fake_->Enqueue("converse", json::array{error(429, "ThrottlingException", "Too many requests, please wait."),
                                         error(429, "ModelNotReadyException", "The model is loading."),
                                         error(424, "ModelErrorException", "The model failed."),
                                         error(400, "ValidationException",
                                               "outputConfig.textFormat is not supported for this model"),
                                         error(503, "ServiceUnavailableException", "Service unavailable.")});
  auto provider = Make();
  auto throttled = Call(*provider, Request());
  ASSERT_FALSE(throttled.has_value());
  EXPECT_EQ(throttled.error().http_status, 429);
  EXPECT_EQ(throttled.error().type, "ThrottlingException");
  EXPECT_EQ(throttled.error().message, "Too many requests, please wait.");
  EXPECT_TRUE(throttled.error().retryable);
  EXPECT_TRUE(throttled.error().IsRateLimited());
  auto loading = Call(*provider, Request());
  EXPECT_EQ(loading.error().http_status, 429);
  EXPECT_TRUE(loading.error().retryable);
  EXPECT_FALSE(loading.error().IsRateLimited());
  auto failed = Call(*provider, Request());
  EXPECT_EQ(failed.error().type, "ModelErrorException");
  EXPECT_FALSE(failed.error().retryable);
  auto invalid = Call(*provider, Request());
  EXPECT_FALSE(invalid.error().retryable);
  EXPECT_EQ(invalid.error().param, "response_format");  // the model cannot take native mode
  auto unavailable = Call(*provider, Request());
  EXPECT_TRUE(unavailable.error().retryable);
  EXPECT_FALSE(unavailable.error().IsRateLimited());
}

TEST_F(BedrockTest, AModelNotReadyLeavesTheRateAloneAndAThrottleSetsIt) {
  auto limiter = std::make_shared<state::RequestLimiter>(state::RateLimit{}, RealClock());
  auto bedrock = std::shared_ptr<Provider>(Make());
  LimitedProvider limited(bedrock, limiter, RealClock());
  fake_->Enqueue(
      "converse",
      json::array{json::object{{"status", 429}, {"error_type", "ModelNotReadyException"}, {"message", "loading"}},
                  json::object{{"status", 429}, {"error_type", "ThrottlingException"}, {"message", "slow down"}}});
  auto loading = Call(limited, Request());
  ASSERT_FALSE(loading.has_value());
  EXPECT_FALSE(loading.error().IsRateLimited());
  EXPECT_FALSE(limiter->rate_per_minute().has_value());  // nothing learned: not the rate limit
  auto throttled = Call(limited, Request());
  ASSERT_FALSE(throttled.has_value());
  EXPECT_TRUE(throttled.error().IsRateLimited());
  EXPECT_TRUE(limiter->rate_per_minute().has_value());  // the pace now follows the 429
}

// A Bedrock throttle says no delay (design.md §12.0): its retry waits the computed backoff (2 s,
// shortened by up to a quarter) plus the rate limit's spread (up to a second), never less.
TEST_F(BedrockTest, AThrottlesRetryWaitsTheComputedBackoffAndItsSpread) {
  auto bedrock = std::shared_ptr<Provider>(Make());
  test_support::RecordingSleeper clock;
  clock.advance = true;
  auto limiter = std::make_shared<state::RequestLimiter>(state::RateLimit{}, clock);
  LimitedProvider limited(bedrock, limiter, clock);
  RetryingProvider retrying(limited, RetryingProviderOptions{[] { return 0.0; }, [] { return 0.5; }});
  fake_->Enqueue("converse", json::array{json::object{
                                 {"status", 429}, {"error_type", "ThrottlingException"}, {"message", "slow down"}}});
  const auto start = clock.Now();
  InvocationContext ctx("s", InvocationOptions{}, start + std::chrono::minutes(5), clock);
  ctx.set_started(start);
  ChatRequest request = Request();
  const TransientRetryPolicy policy;  // named: the coroutine holds a reference to it
  auto future = boost::asio::co_spawn(io_, retrying.Chat(request, policy, ctx), boost::asio::use_future);
  io_.restart();
  io_.run();
  Result<ChatResponse> answer = future.get();
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  ASSERT_EQ(ctx.attempts().size(), 1u);
  EXPECT_EQ(ctx.attempts()[0].http_status, 429);
  EXPECT_EQ(ctx.attempts()[0].delay_ms, 2500);  // 2000 (u = 0) + 0.5 x 1000
  EXPECT_EQ(clock.delays.front(), 2500);
  EXPECT_GE(answer->timing.waited_ms, 2500);
}

TEST_F(BedrockTest, AStreamHandsOnItsTextAndEndsWithTheUsage) {
  auto provider = Make();
  ChatRequest request = Request();
  std::vector<std::string> pieces;
  request.on_text = [&](std::string_view piece) {
    pieces.emplace_back(piece);
    return true;
  };
  auto answer = Call(*provider, request);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(pieces, (std::vector<std::string>{R"({"ok":)", "true}"}));
  EXPECT_EQ(answer->text, R"({"ok":true})");
  EXPECT_GT(answer->usage.input_tokens, 0);
  EXPECT_FALSE(answer->usage.estimated);
  auto sent = fake_->RequestsOf("converse-stream");
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].at("auth"), "ok");
  EXPECT_EQ(sent[0].at("headers").at("accept"), "application/vnd.amazon.eventstream");
}

json::object Event(const char* type, const char* payload) {
  return json::object{{"type", type}, {"payload", json::parse(payload)}};
}

TEST_F(BedrockTest, AStreamedToolCallIsAssembledFromItsFragments) {
  fake_->Enqueue(
      "converse-stream",
      json::array{json::object{
          {"split_every", 7},
          {"events",
           json::array{
               Event("messageStart", R"({"role":"assistant"})"),
               Event("contentBlockStart",
                     R"({"contentBlockIndex":0,"start":{"toolUse":{"toolUseId":"t1","name":"answer"}}})"),
               Event("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"toolUse":{"input":"{\"ok\""}}})"),
               Event("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"toolUse":{"input":":true}"}}})"),
               Event("contentBlockStop", R"({"contentBlockIndex":0})"),
               Event("messageStop", R"({"stopReason":"tool_use"})"),
               Event("metadata",
                     R"({"usage":{"inputTokens":3,"outputTokens":4,"totalTokens":7},"metrics":{"latencyMs":5}})")}}}});
  auto provider = Make();
  ChatRequest request = Request();
  request.response_format = Format(ResponseFormat::Kind::kTool);
  std::string streamed;
  request.on_text = [&](std::string_view piece) {
    streamed += piece;
    return true;
  };
  auto answer = Call(*provider, request);
  ASSERT_TRUE(answer.has_value()) << answer.error().message;
  EXPECT_EQ(streamed, R"({"ok":true})");
  EXPECT_TRUE(answer->tool_call);
  EXPECT_EQ(answer->text, R"({"ok":true})");
  EXPECT_EQ(answer->usage.input_tokens, 3);
  EXPECT_EQ(answer->usage.output_tokens, 4);
}

TEST_F(BedrockTest, AFrameWithABadCrcOrAThrottleInTheStreamEndsTheCall) {
  json::object corrupt = Event("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":"{"}})");
  corrupt["corrupt_crc"] = true;
  fake_->Enqueue(
      "converse-stream",
      json::array{
          json::object{{"events", json::array{Event("messageStart", R"({"role":"assistant"})"), corrupt}}},
          json::object{{"events", json::array{Event("messageStart", R"({"role":"assistant"})"),
                                              json::object{{"exception", "throttlingException"},
                                                           {"payload", json::parse(R"({"message":"slow down"})")}}}}}});
  auto provider = Make();
  ChatRequest request = Request();
  request.on_text = [](std::string_view) { return true; };
  auto corrupted = Call(*provider, request);
  ASSERT_FALSE(corrupted.has_value());
  EXPECT_EQ(corrupted.error().message, "an event frame's message CRC does not match");
  EXPECT_EQ(corrupted.error().reason, "malformed_body");  // damaged on its way: transient
  EXPECT_TRUE(corrupted.error().retryable);
  auto throttled = Call(*provider, request);
  ASSERT_FALSE(throttled.has_value());
  EXPECT_EQ(throttled.error().type, "ThrottlingException");
  EXPECT_EQ(throttled.error().message, "slow down");
  EXPECT_TRUE(throttled.error().IsRateLimited());
  EXPECT_TRUE(throttled.error().retryable);
}

TEST(EventStreamTest, FramesDecodeAcrossAnySplitAndACorruptPreludeIsCaught) {
  std::string bytes =
      EncodeEventFrame({{":event-type", "messageStop"}, {":message-type", "event"}}, R"({"stopReason":"end_turn"})") +
      EncodeEventFrame({{":event-type", "metadata"}}, "{}");
  for (std::size_t split = 1; split < bytes.size(); split += 5) {
    EventStreamDecoder decoder;
    std::vector<std::string> types;
    auto on = [&](const EventMessage& m) { types.emplace_back(m.Header(":event-type")); };
    EXPECT_FALSE(decoder.Feed(std::string_view(bytes).substr(0, split), on).has_value());
    EXPECT_FALSE(decoder.Feed(std::string_view(bytes).substr(split), on).has_value());
    EXPECT_EQ(types, (std::vector<std::string>{"messageStop", "metadata"}));
    EXPECT_FALSE(decoder.Pending());
  }
  std::string broken = bytes;
  broken[9] = static_cast<char>(broken[9] ^ 1);
  EventStreamDecoder decoder;
  auto problem = decoder.Feed(broken, [](const EventMessage&) {});
  ASSERT_TRUE(problem.has_value());
  EXPECT_EQ(*problem, "an event frame's prelude CRC does not match");
}

}  // namespace
}  // namespace skillrunner::providers::aws
