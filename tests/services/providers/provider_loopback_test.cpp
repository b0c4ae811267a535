// The HTTP providers and the transient policy against a real loopback server.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <set>
#include <sstream>

#include "services/providers/anthropic_provider.h"
#include "services/providers/gemini_provider.h"
#include "services/providers/openai_provider.h"
#include "services/providers/retrying_provider.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/openai_spec.h"

namespace skillrunner::providers {
namespace {
namespace json = boost::json;
using test_support::kTestApiKey;
using test_support::LoopbackServer;
using test_support::OpenAiAnswer;

std::optional<std::string> TestEnv(std::string_view name) {
  if (name == "OPENAI_API_KEY" || name == "ANTHROPIC_API_KEY" || name == "GEMINI_API_KEY") {
    return std::string(kTestApiKey);
  }
  return std::nullopt;
}

ChatRequest SimpleRequest() {
  ChatRequest request;
  request.model = "gpt-4o-mini";
  request.messages = {{"system", "Be brief."}, {"user", "Say ok as JSON."}};
  request.temperature = 0.5;
  request.max_output_tokens = 64;
  return request;
}

class ProviderLoopbackTest : public ::testing::Test {
 protected:
  std::unique_ptr<Provider> MakeOpenAi() {
    OpenAiOptions options;
    options.base_url = server_.base_url() + "/v1";
    return std::make_unique<OpenAiProvider>(options, http::MakeHttpClient(io_.get_executor()), TestEnv);
  }
  std::unique_ptr<Provider> MakeGemini() {
    GeminiOptions options;
    options.base_url = server_.base_url();
    return std::make_unique<GeminiProvider>(options, http::MakeHttpClient(io_.get_executor()), TestEnv);
  }
  std::unique_ptr<Provider> MakeAnthropic() {
    AnthropicOptions options;
    options.base_url = server_.base_url();
    return std::make_unique<AnthropicProvider>(options, http::MakeHttpClient(io_.get_executor()), TestEnv);
  }
  Result<ChatResponse> Send(Provider& provider, ChatRequest request = SimpleRequest(),
                            std::chrono::milliseconds deadline = std::chrono::minutes(5)) {
    RetryingProvider retrying(provider, RetryingProviderOptions{[] { return 0.0; }, {}});
    const auto start = sleeper_.Now();
    ctx_ = std::make_unique<InvocationContext>("s", InvocationOptions{}, start + deadline, sleeper_);
    ctx_->set_started(start);  // as SkillRunner does: the deadline counts from the same instant
    auto future = boost::asio::co_spawn(io_, retrying.Chat(request, policy_, *ctx_), boost::asio::use_future);
    io_.restart();
    io_.run();
    return future.get();
  }

  LoopbackServer server_;
  boost::asio::io_context io_;
  test_support::RecordingSleeper sleeper_;
  TransientRetryPolicy policy_;
  std::unique_ptr<InvocationContext> ctx_;
};

TEST_F(ProviderLoopbackTest, RateLimitWithRetryAfterMsWaitsThatLongOnce) {
  auto provider = MakeOpenAi();
  server_.Enqueue({.status = 429,
                   .headers = {{"retry-after-ms", "150"}},
                   .body = test_support::OpenAiError("Rate limit reached", "requests")});
  server_.Enqueue({.body = OpenAiAnswer(R"({"ok":true})")});
  auto result = Send(*provider);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->text, R"({"ok":true})");
  // The server's 150 ms, plus a spread of up to a quarter of it, a second at most (design.md §9.6).
  ASSERT_EQ(sleeper_.delays.size(), 1u);
  EXPECT_GE(sleeper_.delays[0], 150);
  EXPECT_LE(sleeper_.delays[0], 187);
  EXPECT_EQ(server_.request_count(), 2u);
  ASSERT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kTransient);
  EXPECT_EQ(ctx_->attempts()[0].http_status, 429);
  EXPECT_EQ(ctx_->attempts()[0].delay_ms, sleeper_.delays[0]);
  EXPECT_EQ(ctx_->metrics().transient_retries, 1);
}

TEST_F(ProviderLoopbackTest, TwentyRefusedCallsDoNotAllComeBackAtOnce) {
  auto provider = MakeOpenAi();
  for (int i = 0; i < 20; ++i) {
    server_.Enqueue({.status = 429,
                     .headers = {{"retry-after-ms", "100"}},
                     .body = test_support::OpenAiError("Rate limit reached", "requests")});
    server_.Enqueue({.body = OpenAiAnswer(R"({"ok":true})")});
    ASSERT_TRUE(Send(*provider));
  }
  ASSERT_EQ(sleeper_.delays.size(), 20u);
  std::set<std::int64_t> distinct(sleeper_.delays.begin(), sleeper_.delays.end());
  EXPECT_GE(distinct.size(), 10u);  // 20 draws over 1000 ms; equal ones are rare
  for (std::int64_t delay : sleeper_.delays) {
    EXPECT_GE(delay, 100);
    EXPECT_LT(delay, 1100);
  }
}

TEST_F(ProviderLoopbackTest, InsufficientQuotaIsOneRequestAndAProviderErrorNamingIt) {
  auto provider = MakeOpenAi();
  std::string body =
      R"({"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
      "type": "insufficient_quota", "param": null, "code": "insufficient_quota"}})";
  server_.SetDefault({.status = 429, .body = body});
  auto result = Send(*provider);
  ASSERT_FALSE(result);
  EXPECT_EQ(server_.request_count(), 1u);
  EXPECT_TRUE(sleeper_.delays.empty());
  EXPECT_EQ(result.error().code, ErrorCode::kProviderError);
  EXPECT_EQ(result.error().message,
            "the provider's quota is spent, so waiting will not help: HTTP 429: You exceeded your current quota, "
            "please check your plan and billing details.");
}

TEST_F(ProviderLoopbackTest, UnauthorizedIsOneRequestAndProviderError) {
  auto provider = MakeOpenAi();
  server_.SetDefault(
      {.status = 401, .body = test_support::OpenAiError("Incorrect API key provided", "invalid_request_error")});
  auto result = Send(*provider);
  ASSERT_FALSE(result);
  EXPECT_EQ(server_.request_count(), 1u);
  EXPECT_EQ(result.error().code, ErrorCode::kProviderError);
  EXPECT_EQ(result.error().message, "the provider refused the request: HTTP 401: Incorrect API key provided");
  EXPECT_EQ(result.error().details.at("http_status"), 401);
  EXPECT_EQ(result.error().details.at("provider_type"), "invalid_request_error");
}

TEST_F(ProviderLoopbackTest, ServiceUnavailableForeverIsFourRequestsThenUnavailable) {
  auto provider = MakeOpenAi();
  server_.SetDefault({.status = 503, .body = test_support::OpenAiError("overloaded", "server_error")});
  auto result = Send(*provider);
  ASSERT_FALSE(result);
  EXPECT_EQ(server_.request_count(), 4u);
  EXPECT_EQ(result.error().code, ErrorCode::kProviderUnavailable);
  ASSERT_EQ(sleeper_.delays.size(), 3u);
  EXPECT_GE(sleeper_.delays[0], 1500);
  EXPECT_LE(sleeper_.delays[0], 2000);
  EXPECT_GE(sleeper_.delays[2], 6000);
  EXPECT_LE(sleeper_.delays[2], 8000);
}

TEST_F(ProviderLoopbackTest, AnHourLongRetryAfterFailsAtOnce) {
  auto provider = MakeOpenAi();
  server_.SetDefault(
      {.status = 429, .headers = {{"retry-after", "3600"}}, .body = test_support::OpenAiError("quota", "requests")});
  auto result = Send(*provider);
  ASSERT_FALSE(result);
  EXPECT_EQ(server_.request_count(), 1u);
  EXPECT_TRUE(sleeper_.delays.empty());
  EXPECT_EQ(result.error().code, ErrorCode::kProviderUnavailable);
  EXPECT_EQ(result.error().details.at("retry_after_ms"), 3600000);
}

// A deadline that ends during the backoff wait after a provider timeout: the
// timeout first, the skipped retry second.
TEST_F(ProviderLoopbackTest, ATimeoutWithNoTimeLeftToRetrySaysSoInThatOrder) {
  auto provider = MakeOpenAi();
  server_.SetDefault({.body = OpenAiAnswer("{}"), .delay = std::chrono::milliseconds(2000)});
  ChatRequest request = SimpleRequest();
  request.timeout = std::chrono::milliseconds(400);
  auto result = Send(*provider, request, std::chrono::milliseconds(1000));
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kTimeout);
  EXPECT_EQ(result.error().message,
            "invocation timed out after 1000 ms: the provider failed (no answer within 400 ms) with no time left to "
            "retry");
  EXPECT_EQ(result.error().details.at("timeout_ms"), 1000);
  EXPECT_EQ(server_.request_count(), 1u);
  ASSERT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kTransient);
  EXPECT_EQ(ctx_->attempts()[0].errors.at(0).message, "no answer within 400 ms");
}

TEST_F(ProviderLoopbackTest, DroppedConnectionIsRetried) {
  auto provider = MakeOpenAi();
  server_.Enqueue({.drop_connection = true});
  server_.Enqueue({.body = OpenAiAnswer("{}")});
  auto result = Send(*provider);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kTransient);
}

TEST_F(ProviderLoopbackTest, OpenAiRequestIsExactlyTheDocumentedShape) {
  auto provider = MakeOpenAi();
  server_.Enqueue({.headers = {{"x-request-id", "req_123"}}, .body = OpenAiAnswer("{}", "stop", 11, 2)});
  auto result = Send(*provider);
  ASSERT_TRUE(result);
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/v1/chat/completions");
  EXPECT_EQ(requests[0].Header("authorization"), std::string("Bearer ") + kTestApiKey);
  EXPECT_EQ(requests[0].Header("content-type"), "application/json");
  EXPECT_EQ(json::parse(requests[0].body), json::parse(R"({"model":"gpt-4o-mini","messages":[
      {"role":"system","content":"Be brief."},{"role":"user","content":"Say ok as JSON."}],
      "temperature":0.5,"max_completion_tokens":64})"));
  EXPECT_EQ(result->request_id, "req_123");
  EXPECT_EQ(result->usage.input_tokens, 11);
  EXPECT_EQ(result->usage.output_tokens, 2);
  EXPECT_FALSE(result->usage.estimated);
  EXPECT_EQ(result->usage.cached_input_tokens, 0);
  ASSERT_NE(test_support::OpenAiRequestSchema(), nullptr) << test_support::OpenAiSpecDir();
  ASSERT_NE(test_support::OpenAiResponseSchema(), nullptr) << test_support::OpenAiSpecDir();
  EXPECT_TRUE(test_support::OpenAiRequestSchema()->Validate(json::parse(requests[0].body)).empty());
  EXPECT_TRUE(test_support::OpenAiResponseSchema()->Validate(json::parse(OpenAiAnswer("{}"))).empty());
}

// Azure OpenAI (design.md §9.3): a deployment URL, the key in api-key, the
// api-version query on every request; its error body and retry-after-ms are
// read as OpenAI's.
TEST_F(ProviderLoopbackTest, AnAzureDeploymentGetsTheApiKeyHeaderAndTheQueryOnEveryRequest) {
  OpenAiOptions options;
  options.name = "azure";
  options.base_url = server_.base_url() + "/openai/deployments/gpt4o-prod";
  options.api_key_env = "OPENAI_API_KEY";
  options.auth_header = "api-key";
  options.query = {{"api-version", "2024-10-21"}, {"note", "a b&c"}};
  OpenAiProvider provider(options, http::MakeHttpClient(io_.get_executor()), TestEnv);
  server_.Enqueue({.status = 429,
                   .headers = {{"retry-after-ms", "250"}, {"x-request-id", "az-1"}},
                   .body = R"({"error":{"code":"429","message":"Requests to the ChatCompletions_Create )"
                           R"(Operation have exceeded call rate limit."}})"});
  server_.Enqueue({.body = OpenAiAnswer("{}")});
  auto result = Send(provider);
  ASSERT_TRUE(result) << result.error().message;
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 2u);
  for (const auto& request : requests) {
    EXPECT_EQ(request.target, "/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21&note=a%20b%26c");
    EXPECT_EQ(request.Header("api-key"), kTestApiKey);
    EXPECT_EQ(request.Header("authorization"), "");
  }
  ASSERT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].errors.at(0).message,
            "HTTP 429: Requests to the ChatCompletions_Create Operation have exceeded call rate limit.");
  ASSERT_EQ(sleeper_.delays.size(), 1u);
  EXPECT_GE(sleeper_.delays[0], 250);  // retry-after-ms, plus the rate-limit spread
  EXPECT_LT(sleeper_.delays[0], 1250);
}

TEST_F(ProviderLoopbackTest, OpenAiCachedPromptTokensAreRead) {
  auto provider = MakeOpenAi();
  json::value body = json::parse(OpenAiAnswer("{}", "stop", 1200, 8));
  body.at("usage").as_object()["prompt_tokens_details"] = json::object{{"cached_tokens", 1024}};
  server_.Enqueue({.body = json::serialize(body)});
  auto result = Send(*provider);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->usage.input_tokens, 1200);
  EXPECT_EQ(result->usage.cached_input_tokens, 1024);
}

// A generateContent answer with `parts`, `finish` and usage.
std::string GeminiAnswer(const std::string& text, const std::string& finish = "STOP") {
  json::object body{
      {"candidates",
       json::array{json::object{{"content", {{"role", "model"}, {"parts", json::array{json::object{{"text", text}}}}}},
                                {"finishReason", finish}}}},
      {"usageMetadata",
       {{"promptTokenCount", 40},
        {"candidatesTokenCount", 7},
        {"cachedContentTokenCount", 32},
        {"totalTokenCount", 47}}},
      {"modelVersion", "gemini-2.5-flash-001"},
      {"responseId", "resp-1"}};
  return json::serialize(body);
}

TEST_F(ProviderLoopbackTest, GeminiRequestAndAnswerFollowGenerateContent) {
  auto provider = MakeGemini();
  server_.Enqueue({.body = GeminiAnswer(R"({"ok":true})")});
  ChatRequest request = SimpleRequest();
  request.model = "gemini-2.5-flash";
  request.messages.push_back({"assistant", "{}"});
  request.messages.push_back({"user", "Again."});
  request.metadata.seed = 42;
  request.response_format.kind = ResponseFormat::Kind::kJsonSchema;
  request.response_format.name = "ok";
  request.response_format.schema =
      std::make_shared<const json::value>(json::parse(R"({"type":"object","properties":{"ok":{"type":"boolean"}}})"));
  auto result = Send(*provider, request);
  ASSERT_TRUE(result) << result.error().message;
  auto requests = server_.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].target, "/v1beta/models/gemini-2.5-flash:generateContent");
  EXPECT_EQ(requests[0].Header("x-goog-api-key"), kTestApiKey);
  EXPECT_EQ(requests[0].Header("authorization"), "");
  EXPECT_EQ(json::parse(requests[0].body), json::parse(R"({
      "systemInstruction":{"parts":[{"text":"Be brief."}]},
      "contents":[{"role":"user","parts":[{"text":"Say ok as JSON."}]},{"role":"model","parts":[{"text":"{}"}]},
                  {"role":"user","parts":[{"text":"Again."}]}],
      "generationConfig":{"temperature":0.5,"maxOutputTokens":64,"seed":42,"responseMimeType":"application/json",
                          "responseJsonSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}})"));
  EXPECT_EQ(result->text, R"({"ok":true})");
  EXPECT_EQ(result->finish_reason, FinishReason::kStop);
  EXPECT_EQ(result->usage.input_tokens, 40);
  EXPECT_EQ(result->usage.output_tokens, 7);
  EXPECT_EQ(result->usage.cached_input_tokens, 32);
  EXPECT_FALSE(result->usage.estimated);
  EXPECT_EQ(result->model, "gemini-2.5-flash-001");
  EXPECT_EQ(result->request_id, "resp-1");
  // JSON mode: the mime type alone.
  server_.Enqueue({.body = GeminiAnswer("{}")});
  request.response_format.kind = ResponseFormat::Kind::kJsonObject;
  ASSERT_TRUE(Send(*provider, request));
  EXPECT_EQ(json::parse(server_.requests()[1].body).at("generationConfig"),
            json::parse(R"({"temperature":0.5,"maxOutputTokens":64,"seed":42,"responseMimeType":"application/json"})"));
}

TEST_F(ProviderLoopbackTest, GeminiFinishReasonsAndABlockedPromptMapAsDesignSays) {
  auto provider = MakeGemini();
  const std::vector<std::pair<std::string, FinishReason>> reasons = {{"STOP", FinishReason::kStop},
                                                                     {"MAX_TOKENS", FinishReason::kLength},
                                                                     {"SAFETY", FinishReason::kRefusal},
                                                                     {"PROHIBITED_CONTENT", FinishReason::kRefusal},
                                                                     {"BLOCKLIST", FinishReason::kRefusal},
                                                                     {"SPII", FinishReason::kRefusal},
                                                                     {"RECITATION", FinishReason::kContentFilter},
                                                                     {"LANGUAGE", FinishReason::kOther},
                                                                     {"OTHER", FinishReason::kOther}};
  for (const auto& [reason, mapped] : reasons) {
    server_.Enqueue({.body = GeminiAnswer("{}", reason)});
    auto result = Send(*provider);
    ASSERT_TRUE(result) << reason;
    EXPECT_EQ(result->finish_reason, mapped) << reason;
    EXPECT_EQ(result->refusal,
              mapped == FinishReason::kRefusal ? std::optional<std::string>("finishReason " + reason) : std::nullopt)
        << reason;
  }
  server_.Enqueue({.body = R"({"promptFeedback":{"blockReason":"SAFETY"},"usageMetadata":{"promptTokenCount":9}})"});
  auto blocked = Send(*provider);
  ASSERT_TRUE(blocked);
  EXPECT_EQ(blocked->finish_reason, FinishReason::kRefusal);
  EXPECT_EQ(blocked->refusal, "the prompt was blocked (SAFETY)");
  EXPECT_EQ(blocked->text, "");
  EXPECT_EQ(blocked->usage.input_tokens, 9);
  // Neither a candidate nor a block reason: an answer we cannot understand, tried again.
  server_.SetDefault({.body = R"({"usageMetadata":{"promptTokenCount":9}})"});
  auto empty = Send(*provider);
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code, ErrorCode::kProviderUnavailable);
  EXPECT_EQ(empty.error().message,
            "the provider is still failing after 3 retries: HTTP 200: the answer has no candidates");
}

TEST_F(ProviderLoopbackTest, GeminiErrorEnvelopeRetryInfoIsTheWaitAndABadRequestIsFinal) {
  auto provider = MakeGemini();
  server_.Enqueue({.status = 429,
                   .body = R"({"error":{"code":429,"message":"You exceeded your current quota, )"
                           R"(please check your plan and billing details.","status":"RESOURCE_EXHAUSTED",)"
                           R"("details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure"},)"
                           R"({"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}})"});
  server_.Enqueue(
      {.status = 503, .body = R"({"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}})"});
  server_.Enqueue({.body = GeminiAnswer("{}")});
  auto result = Send(*provider);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(ctx_->attempts().size(), 2u);
  EXPECT_EQ(ctx_->attempts()[0].errors.at(0).message,
            "HTTP 429: You exceeded your current quota, please check your plan and billing details.");
  EXPECT_EQ(ctx_->attempts()[1].errors.at(0).message, "HTTP 503: The model is overloaded.");
  ASSERT_EQ(sleeper_.delays.size(), 2u);
  EXPECT_GE(sleeper_.delays[0], 1500);  // RetryInfo, plus the rate-limit spread
  EXPECT_LT(sleeper_.delays[0], 2500);
  EXPECT_EQ(sleeper_.delays[1], 2000);  // the backoff (no retry-after)
  server_.Enqueue({.status = 400,
                   .body = R"({"error":{"code":400,"message":"Invalid JSON payload received.",)"
                           R"("status":"INVALID_ARGUMENT"}})"});
  auto bad = Send(*provider);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kProviderError);
  EXPECT_EQ(bad.error().message, "the provider refused the request: HTTP 400: Invalid JSON payload received.");
  EXPECT_EQ(bad.error().details.at("provider_type"), "INVALID_ARGUMENT");
  // A quota with no RetryInfo is spent: waiting will not help.
  server_.Enqueue({.status = 429,
                   .body = R"({"error":{"code":429,"message":"You exceeded your current quota, )"
                           R"(please check your plan and billing details.","status":"RESOURCE_EXHAUSTED"}})"});
  auto spent = Send(*provider);
  ASSERT_FALSE(spent);
  EXPECT_EQ(spent.error().code, ErrorCode::kProviderError);
}

// A 2xx whose body is not a chat completion (a proxy's HTML page, a body cut on its way) is
// transient: retried within the transient budget, each attempt saying why and keeping the first
// 200 bytes of what came.
TEST_F(ProviderLoopbackTest, AnAnswerThatIsNotAChatCompletionIsRetriedAsTransient) {
  auto provider = MakeOpenAi();
  const std::string page = "<html>gateway" + std::string(300, '.') + "</html>";
  server_.Enqueue({.headers = {{"x-request-id", "req_bad"}}, .body = page});
  server_.Enqueue({.body = R"({"id":"x","choices":[]})"});
  server_.SetDefault({.body = test_support::OpenAiAnswer(R"({"ok":true})")});
  auto answered = Send(*provider);
  ASSERT_TRUE(answered) << answered.error().message;
  ASSERT_EQ(ctx_->attempts().size(), 2u);
  const Attempt& html = ctx_->attempts()[0];
  EXPECT_EQ(html.kind, AttemptKind::kTransient);
  EXPECT_EQ(html.reason, "malformed_body");
  EXPECT_EQ(html.raw, page.substr(0, 200));
  EXPECT_EQ(html.errors.at(0).message, "HTTP 200: the answer is not a JSON object");
  EXPECT_EQ(ctx_->attempts()[1].errors.at(0).message, "HTTP 200: the answer has no choices");
  EXPECT_EQ(ctx_->attempts()[1].raw, R"({"id":"x","choices":[]})");
  EXPECT_EQ(sleeper_.delays.size(), 2u);  // the backoff, as for a 503
  EXPECT_EQ(server_.request_count(), 3u);
  // Malformed every time: the transient budget ends it.
  server_.SetDefault({.body = "{\"id\":\"chatcmpl-1\",\"choices\":[{\"message\":{\"content\":\"{\\\"na"});
  auto spent = Send(*provider);
  ASSERT_FALSE(spent);
  EXPECT_EQ(spent.error().code, ErrorCode::kProviderUnavailable);
  EXPECT_EQ(spent.error().message,
            "the provider is still failing after 3 retries: HTTP 200: the answer is not a JSON object");
}

TEST_F(ProviderLoopbackTest, AnthropicAnswerWithoutContentIsTransientUntilTheBudgetEnds) {
  auto provider = MakeAnthropic();
  server_.SetDefault({.headers = {{"request-id", "req_a"}}, .body = R"({"type":"message"})"});
  auto result = Send(*provider);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kProviderUnavailable);
  EXPECT_EQ(result.error().message,
            "the provider is still failing after 3 retries: HTTP 200: the answer has no content array");
  EXPECT_EQ(result.error().details.at("request_id"), "req_a");
  EXPECT_EQ(server_.request_count(), 4u);
  EXPECT_EQ(ctx_->attempts().back().reason, "malformed_body");
}

TEST_F(ProviderLoopbackTest, MissingUsageIsEstimatedFromCodePoints) {
  auto provider = MakeOpenAi();
  json::value body = json::parse(OpenAiAnswer("héllo wörld"));
  body.as_object().erase("usage");
  server_.Enqueue({.body = json::serialize(body)});
  auto result = Send(*provider);
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->usage.estimated);
  EXPECT_EQ(result->usage.output_tokens, 3);  // 11 code points / 4, rounded up
}

TEST_F(ProviderLoopbackTest, MissingKeyIsConfigInvalidBeforeAnyRequest) {
  OpenAiOptions options;
  options.base_url = "https://api.openai.example/v1";
  options.api_key_env = "SKILLRUNNER_TEST_NO_SUCH_KEY";
  OpenAiProvider provider(options, http::MakeHttpClient(io_.get_executor()), TestEnv);
  auto result = Send(provider);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(result.error().message,
            "the environment variable SKILLRUNNER_TEST_NO_SUCH_KEY (the API key of provider \"openai\") is not set");
  EXPECT_EQ(server_.request_count(), 0u);
}

TEST_F(ProviderLoopbackTest, AnthropicRequestAndAnswerFollowTheMessagesApi) {
  auto provider = MakeAnthropic();
  server_.Enqueue({.headers = {{"request-id", "req_ant_1"}},
                   .body = R"({"id":"msg_1","type":"message","role":"assistant","model":"claude-x",
                     "content":[{"type":"text","text":"{\"ok\":true}"}],"stop_reason":"end_turn",
                     "usage":{"input_tokens":30,"output_tokens":5,"cache_read_input_tokens":24}})"});
  ChatRequest request = SimpleRequest();
  request.response_format.kind = ResponseFormat::Kind::kJsonSchema;
  request.response_format.schema = std::make_shared<const json::value>(
      json::parse(R"({"type":"object","additionalProperties":false,"properties":{"ok":{"type":"boolean"}}})"));
  auto result = Send(*provider, request);
  ASSERT_TRUE(result) << result.error().message;
  auto requests = server_.requests();
  EXPECT_EQ(requests[0].target, "/v1/messages");
  EXPECT_EQ(requests[0].Header("x-api-key"), kTestApiKey);
  EXPECT_EQ(requests[0].Header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(requests[0].Header("authorization"), "");
  EXPECT_EQ(json::parse(requests[0].body), json::parse(R"({"model":"gpt-4o-mini","max_tokens":64,
      "system":"Be brief.","messages":[{"role":"user","content":"Say ok as JSON."}],"temperature":0.5,
      "output_config":{"format":{"type":"json_schema","schema":{"type":"object","additionalProperties":false,"properties":{"ok":{"type":"boolean"}}}}}})"));
  EXPECT_EQ(result->text, R"({"ok":true})");
  EXPECT_EQ(result->request_id, "req_ant_1");
  // design.md §9.4: every input token processed, the 24 read from the cache included.
  EXPECT_EQ(result->usage.input_tokens, 54);
  EXPECT_EQ(result->usage.cached_input_tokens, 24);
}

TEST_F(ProviderLoopbackTest, AnthropicToolUseAnswersAndRefusalsAreUnderstood) {
  auto provider = MakeAnthropic();
  server_.Enqueue({.body = R"({"content":[{"type":"tool_use","id":"t","name":"emit","input":{"a":1}}],
                     "stop_reason":"tool_use","usage":{"input_tokens":1,"output_tokens":1}})"});
  server_.Enqueue({.body = R"({"content":[],"stop_reason":"refusal","stop_details":{"type":"refusal",
                     "category":"cyber","explanation":"not allowed"},"usage":{"input_tokens":1,"output_tokens":0}})"});
  auto tool = Send(*provider);
  ASSERT_TRUE(tool);
  EXPECT_EQ(tool->text, R"({"a":1})");
  EXPECT_EQ(tool->finish_reason, FinishReason::kStop);
  auto refusal = Send(*provider);
  ASSERT_TRUE(refusal);
  EXPECT_EQ(refusal->finish_reason, FinishReason::kRefusal);
  EXPECT_EQ(refusal->refusal, "not allowed");
}

TEST_F(ProviderLoopbackTest, AnthropicOverloaded529IsTransient) {
  auto provider = MakeAnthropic();
  server_.Enqueue(
      {.status = 529,
       .body = R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"},"request_id":"req_9"})"});
  server_.Enqueue(
      {.body =
           R"({"content":[{"type":"text","text":"{}"}],"stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}})"});
  auto result = Send(*provider);
  ASSERT_TRUE(result);
  EXPECT_EQ(ctx_->attempts()[0].http_status, 529);
  EXPECT_EQ(server_.request_count(), 2u);
}

TEST_F(ProviderLoopbackTest, TheKeyNeverReachesLogsOrErrors) {
  auto sink_stream = std::make_shared<std::ostringstream>();
  auto logger =
      std::make_shared<spdlog::logger>("capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(*sink_stream));
  logger->set_level(spdlog::level::trace);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(logger);
  auto provider = MakeOpenAi();
  // Like OpenAI, the server echoes the (masked) key in its message.
  std::string echoed = std::string("Incorrect API key provided: ") + kTestApiKey + " (sk-tes***6d5e)";
  server_.Enqueue({.status = 503, .body = test_support::OpenAiError(echoed, "server_error")});
  server_.SetDefault({.status = 401, .body = test_support::OpenAiError(echoed, "invalid_request_error")});
  auto result = Send(*provider);
  spdlog::set_default_logger(previous);
  ASSERT_FALSE(result);
  std::string everything = sink_stream->str() + result.error().message + json::serialize(result.error().details);
  for (const auto& attempt : ctx_->attempts()) everything += json::serialize(ToJson(attempt));
  EXPECT_EQ(everything.find(kTestApiKey), std::string::npos) << everything;
  EXPECT_EQ(everything.find("sk-tes***"), std::string::npos) << everything;
  EXPECT_NE(sink_stream->str().find("HTTP 503"), std::string::npos) << "the retry was logged";
  EXPECT_NE(everything.find("Incorrect API key provided"), std::string::npos);
}

}  // namespace
}  // namespace skillrunner::providers
