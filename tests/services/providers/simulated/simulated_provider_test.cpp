#include "services/providers/simulated/simulated_provider.h"

#include <gtest/gtest.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <optional>

#include "services/validation/compiled_schema.h"
#include "tests/support/run_awaitable.h"
#include "tests/support/simulation.h"

namespace skillrunner::providers {
namespace {

namespace json = boost::json;
using test_support::RunAwaitable;

constexpr std::string_view kTriageSchema = R"({"type":"object",
  "required":["priority","category","summary","needs_human"],"additionalProperties":false,
  "properties":{"priority":{"type":"integer","minimum":1,"maximum":4},
    "category":{"enum":["billing","bug","account","feature_request","other"]},
    "summary":{"type":"string","maxLength":280},"needs_human":{"type":"boolean"}}})";

ChatRequest TriageRequest(std::uint64_t seed = 0) {
  ChatRequest request;
  request.model = "llama3.1:8b";
  request.messages = {{"system", "You triage support tickets."}, {"user", "Subject: Refund\n\nI was charged twice."}};
  request.metadata.skill_id = "triage_ticket";
  request.metadata.task_id = "triage_ticket";
  request.metadata.seed = seed;
  request.metadata.answer_schema = &test_support::PersistentJson(kTriageSchema);
  return request;
}

std::expected<ChatResponse, ProviderError> Ask(const ChatRequest& request, SimulatedProviderOptions options = {}) {
  SimulatedProvider provider(std::move(options));
  return RunAwaitable(provider.Chat(request));
}

std::vector<FieldError> Validate(const ChatResponse& response) {
  auto schema = validation::CompiledSchema::Compile(json::parse(kTriageSchema));
  return (*schema)->Validate(json::parse(response.text));
}

TEST(SimulatedProviderTest, SameRequestGivesSameBytes) {
  auto first = Ask(TriageRequest());
  auto second = Ask(TriageRequest());
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->text, second->text);
  EXPECT_EQ(first->request_id, second->request_id);
  EXPECT_TRUE(Validate(*first).empty()) << first->text;
}

TEST(SimulatedProviderTest, DifferentSeedGivesDifferentBytes) {
  std::set<std::string> texts;
  for (std::uint64_t seed = 0; seed < 8; ++seed) texts.insert(Ask(TriageRequest(seed))->text);
  EXPECT_GT(texts.size(), 4u);
  EXPECT_NE(Ask(TriageRequest(1))->request_id, Ask(TriageRequest(2))->request_id);
  SimulatedProviderOptions options;
  options.seed = 99;
  EXPECT_NE(Ask(TriageRequest(), options)->request_id, Ask(TriageRequest())->request_id);
}

TEST(SimulatedProviderTest, ResponseCarriesEstimatedUsageAndIdentity) {
  ChatRequest request = TriageRequest();
  auto response = Ask(request);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->finish_reason, FinishReason::kStop);
  EXPECT_EQ(response->model, "llama3.1:8b");
  EXPECT_EQ(response->http_status, 200);
  EXPECT_EQ(response->raw_body, response->text);
  EXPECT_FALSE(response->refusal);
  ASSERT_EQ(response->request_id.size(), 20u);
  EXPECT_TRUE(response->request_id.starts_with("sim-"));
  EXPECT_EQ(
      response->request_id, "sim-" + [&] {
        char hex[17];
        std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(SimulationSeed(request, 0, 0)));
        return std::string(hex);
      }());
  EXPECT_TRUE(response->usage.estimated);
  // "You triage support tickets." (27) + "Subject: Refund\n\nI was charged twice." (37) = 64 -> 16
  EXPECT_EQ(response->usage.input_tokens, 16);
  EXPECT_EQ(response->usage.output_tokens, EstimateTokens(response->text));
  EXPECT_EQ(response->text, json::serialize(json::parse(response->text)));  // compact
}

TEST(SimulatedProviderTest, FallsBackToResponseFormatSchemaThenEmptyObject) {
  ChatRequest request = TriageRequest();
  request.response_format.kind = ResponseFormat::Kind::kJsonSchema;
  request.response_format.schema = std::make_shared<const json::value>(*request.metadata.answer_schema);
  request.metadata.answer_schema = nullptr;
  EXPECT_TRUE(Validate(*Ask(request)).empty());
  request.response_format.schema = nullptr;
  EXPECT_EQ(Ask(request)->text, "{}");
}

TEST(SimulatedProviderTest, EstimateTokensCountsCodePoints) {
  EXPECT_EQ(EstimateTokens("héllo wörld"), 3);  // 11 code points, 13 bytes
  EXPECT_EQ(EstimateTokens(""), 0);
  EXPECT_EQ(EstimateTokens("abcd"), 1);
  EXPECT_EQ(EstimateTokens("abcde"), 2);
  EXPECT_EQ(EstimateTokens("日本語の"), 1);
}

TEST(SimulatedProviderTest, FinishReasonNames) {
  EXPECT_EQ(FinishReasonName(FinishReason::kStop), "stop");
  EXPECT_EQ(FinishReasonName(FinishReason::kLength), "length");
  EXPECT_EQ(FinishReasonName(FinishReason::kRefusal), "refusal");
  EXPECT_EQ(FinishReasonName(FinishReason::kContentFilter), "content_filter");
  EXPECT_EQ(FinishReasonName(FinishReason::kOther), "other");
}

TEST(SimulatedProviderTest, FactoryReadsSettingsAndRejectsBadOnes) {
  auto ok = MakeSimulatedProvider(json::parse(R"({"kind":"simulated","latency_ms":5,"seed":7,
      "faults":[{"attempt":1,"fault":"fence","skill":"x"}]})")
                                      .as_object());
  EXPECT_TRUE(ok.has_value());
  auto options = SimulatedProviderOptionsFromSettings(json::parse(R"({"latency_ms":5,"seed":7})").as_object());
  ASSERT_TRUE(options);
  EXPECT_EQ(options->latency, std::chrono::milliseconds(5));
  EXPECT_EQ(options->seed, 7u);
  auto bad_latency = MakeSimulatedProvider(json::parse(R"({"latency_ms":-1})").as_object());
  ASSERT_FALSE(bad_latency);
  EXPECT_EQ(bad_latency.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(bad_latency.error().message, "latency_ms: expected a non-negative integer, found -1");
  auto bad_faults = MakeSimulatedProvider(json::parse(R"({"faults":[{"attempt":1,"fault":"nope"}]})").as_object());
  ASSERT_FALSE(bad_faults);
  EXPECT_EQ(bad_faults.error().message, "faults/0/fault: unknown fault \"nope\"");
  auto not_array = MakeSimulatedProvider(json::parse(R"({"faults":{}})").as_object());
  ASSERT_FALSE(not_array);
  EXPECT_EQ(not_array.error().message, "faults: expected an array of fault entries, found {}");
  EXPECT_THROW(SimulatedProvider(SimulatedProviderOptions{{}, json::parse("[1]"), 0}), std::invalid_argument);
}

TEST(SimulatedProviderTest, ABadSkillSimulationBlockIsRefusedNamingThePlace) {
  auto parsed = ParseSkillSimulation(json::parse(R"({"faults": [{"attempt": 1, "fault": "nope"}]})"));
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().message, "/faults/0/fault: unknown fault \"nope\"");
  auto seed = ParseSkillSimulation(json::parse(R"({"seed": -1})"));
  ASSERT_FALSE(seed);
  EXPECT_EQ(seed.error().message, "/seed: expected a non-negative integer, found -1");
}

TEST(SimulatedProviderTest, ASkillsScriptAppliesToItsOwnRequestsOnly) {
  SimulatedProvider provider{SimulatedProviderOptions{}};
  test_support::ScriptSkill(provider, "triage_ticket", R"([{"attempt": 1, "fault": "refusal"}])");
  ChatRequest request = TriageRequest();
  auto refused = RunAwaitable(provider.Chat(request));
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->finish_reason, FinishReason::kRefusal);
  request.metadata.skill_id = "other_skill";
  auto answered = RunAwaitable(provider.Chat(request));
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->finish_reason, FinishReason::kStop);
  EXPECT_TRUE(Validate(*answered).empty());
}

TEST(SimulatedProviderTest, LatencyWaitsAndCancellationEndsTheWait) {
  SimulatedProviderOptions options;
  options.latency = std::chrono::milliseconds(20);
  auto start = std::chrono::steady_clock::now();
  auto response = Ask(TriageRequest(), options);
  EXPECT_TRUE(response);
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(20));

  options.latency = std::chrono::hours(1);
  SimulatedProvider provider(options);
  boost::asio::io_context io;
  boost::asio::cancellation_signal signal;
  std::optional<std::expected<ChatResponse, ProviderError>> result;
  ChatRequest request = TriageRequest();
  boost::asio::co_spawn(io, provider.Chat(request),
                        boost::asio::bind_cancellation_slot(
                            signal.slot(), [&](std::exception_ptr, std::expected<ChatResponse, ProviderError> r) {
                              result = std::move(r);
                            }));
  boost::asio::post(io, [&] { signal.emit(boost::asio::cancellation_type::terminal); });
  io.run_for(std::chrono::seconds(10));
  ASSERT_TRUE(result.has_value());
  ASSERT_FALSE(result->has_value());
  EXPECT_EQ(result->error().kind, ProviderError::Kind::kCancelled);
}

}  // namespace
}  // namespace skillrunner::providers
