// Each fault kind of the simulated provider does exactly what the fault
// script documentation says.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "services/providers/simulated/simulated_provider.h"
#include "services/validation/compiled_schema.h"
#include "tests/support/run_awaitable.h"
#include "tests/support/simulation.h"

namespace skillrunner::providers {
namespace {

namespace json = boost::json;
using test_support::RunAwaitable;

constexpr std::string_view kSchema = R"({"type":"object",
  "required":["priority","category","summary","needs_human"],"additionalProperties":false,
  "properties":{"priority":{"type":"integer","minimum":1,"maximum":4},
    "category":{"enum":["billing","bug","account","feature_request","other"]},
    "summary":{"type":"string","maxLength":280},"needs_human":{"type":"boolean"}}})";

class SimulatedFaultTest : public ::testing::Test {
 protected:
  std::expected<ChatResponse, ProviderError> Ask(std::string_view faults, int attempt = 1,
                                                 SimulatedProviderOptions options = {}) {
    ChatRequest request;
    request.model = "m";
    request.messages = {{"user", "Ticket: my invoice is wrong"}};
    request.metadata.skill_id = "triage_ticket";
    request.metadata.task_id = "triage_ticket";
    request.metadata.attempt = attempt;
    request.metadata.answer_schema = &test_support::PersistentJson(kSchema);
    SimulatedProvider provider(std::move(options));
    test_support::ScriptSkill(provider, "triage_ticket", faults);
    return RunAwaitable(provider.Chat(request));
  }
  json::object Baseline() { return json::parse(Ask("null")->text).as_object(); }
  std::vector<FieldError> Errors(const std::string& text) {
    return (*validation::CompiledSchema::Compile(json::parse(kSchema)))->Validate(json::parse(text));
  }
};

std::string Spelled(std::int64_t n) {
  static const char* const kWords[] = {"zero", "one", "two", "three", "four"};
  return kWords[n];
}

TEST_F(SimulatedFaultTest, MissingFieldRemovesThePathOrTheFirstRequiredProperty) {
  json::object expected = Baseline();
  expected.erase("priority");
  EXPECT_EQ(json::parse(Ask(R"([{"attempt":1,"fault":"missing_field"}])")->text), expected);
  json::object without_summary = Baseline();
  without_summary.erase("summary");
  auto response = Ask(R"([{"attempt":1,"fault":"missing_field","path":"/summary"}])");
  EXPECT_EQ(json::parse(response->text), without_summary);
  EXPECT_EQ(Errors(response->text), (std::vector<FieldError>{{"/summary", "required property is missing"}}));
}

TEST_F(SimulatedFaultTest, WrongTypeReplacesTheValueByAnotherType) {
  json::object expected = Baseline();
  expected["priority"] = Spelled(expected["priority"].as_int64());
  auto response = Ask(R"([{"attempt":1,"fault":"wrong_type","path":"/priority"}])");
  EXPECT_EQ(json::parse(response->text), expected);
  auto errors = Errors(response->text);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "/priority");
  EXPECT_EQ(errors[0].message, "expected integer, found string \"" + Spelled(Baseline()["priority"].as_int64()) + "\"");

  json::object summary = Baseline();
  summary["summary"] = 42;
  EXPECT_EQ(json::parse(Ask(R"([{"attempt":1,"fault":"wrong_type","path":"/summary"}])")->text), summary);
  json::object category = Baseline();
  category["category"] = 42;  // an enum of strings: a number is another type
  EXPECT_EQ(json::parse(Ask(R"([{"attempt":1,"fault":"wrong_type","path":"/category"}])")->text), category);
  json::object flag = Baseline();
  flag["needs_human"] = "yes";
  EXPECT_EQ(json::parse(Ask(R"([{"attempt":1,"fault":"wrong_type","path":"/needs_human"}])")->text), flag);
}

TEST_F(SimulatedFaultTest, OutOfRangeBreaksTheBoundAtPathOrTheFirstBoundedValue) {
  json::object expected = Baseline();
  expected["priority"] = 5;  // maximum 4
  EXPECT_EQ(json::parse(Ask(R"([{"attempt":1,"fault":"out_of_range"}])")->text), expected);
  auto response = Ask(R"([{"attempt":1,"fault":"out_of_range","path":"/summary"}])");
  json::object answer = json::parse(response->text).as_object();
  EXPECT_EQ(answer["summary"].as_string().size(), 281u);
  EXPECT_EQ(Errors(response->text),
            (std::vector<FieldError>{{"/summary", "expected at most 280 characters, found 281"}}));
  // Nothing bounded at the path: acts as wrong_type.
  EXPECT_EQ(json::parse(Ask(R"([{"attempt":1,"fault":"out_of_range","path":"/needs_human"}])")->text).at("needs_human"),
            "yes");
}

TEST_F(SimulatedFaultTest, ExtraFieldAddsAnUnexpectedProperty) {
  json::object expected = Baseline();
  expected["comment"] = "Added for context.";
  auto response = Ask(R"([{"attempt":1,"fault":"extra_field"}])");
  EXPECT_EQ(json::parse(response->text), expected);
  EXPECT_EQ(Errors(response->text), (std::vector<FieldError>{{"/comment", "unexpected property \"comment\""}}));
  EXPECT_TRUE(
      json::parse(Ask(R"([{"attempt":1,"fault":"extra_field","path":"/notes"}])")->text).as_object().contains("notes"));
}

TEST_F(SimulatedFaultTest, TextFaultsWrapOrCutTheJson) {
  std::string json_text = Ask("null")->text;
  auto fence = Ask(R"([{"attempt":1,"fault":"fence"}])");
  EXPECT_EQ(fence->text, "```json\n" + json_text + "\n```");
  EXPECT_EQ(fence->finish_reason, FinishReason::kStop);
  auto prose = Ask(R"([{"attempt":1,"fault":"prose"}])");
  EXPECT_EQ(prose->text, "Here is the JSON you asked for:\n" + json_text + "\nLet me know if you need anything else.");
  auto both = Ask(R"([{"attempt":1,"fault":"prose"},{"attempt":1,"fault":"fence"}])");
  EXPECT_EQ(both->text,
            "Here is the JSON you asked for:\n```json\n" + json_text + "\n```\nLet me know if you need anything else.");
  auto invalid = Ask(R"([{"attempt":1,"fault":"invalid_json"}])");
  EXPECT_EQ(invalid->text, json_text.substr(0, json_text.size() / 2));
  EXPECT_EQ(invalid->finish_reason, FinishReason::kStop);
  boost::system::error_code ec;
  (void)json::parse(invalid->text, ec);
  EXPECT_TRUE(ec);
  auto truncated = Ask(R"([{"attempt":1,"fault":"truncate"}])");
  EXPECT_EQ(truncated->text, json_text.substr(0, json_text.size() / 2));
  EXPECT_EQ(truncated->finish_reason, FinishReason::kLength);
  EXPECT_EQ(truncated->usage.output_tokens, EstimateTokens(truncated->text));
}

TEST_F(SimulatedFaultTest, RefusalAndContentFilterGiveNoText) {
  auto refusal = Ask(R"([{"attempt":1,"fault":"refusal"}])");
  EXPECT_EQ(refusal->text, "");
  EXPECT_EQ(refusal->refusal, "I can't help with that.");
  EXPECT_EQ(refusal->finish_reason, FinishReason::kRefusal);
  EXPECT_EQ(refusal->usage.output_tokens, 0);
  auto filtered = Ask(R"([{"attempt":1,"fault":"content_filter"}])");
  EXPECT_EQ(filtered->text, "");
  EXPECT_FALSE(filtered->refusal);
  EXPECT_EQ(filtered->finish_reason, FinishReason::kContentFilter);
}

TEST_F(SimulatedFaultTest, RateLimitIsARetryable429WithRetryAfter) {
  auto plain = Ask(R"([{"attempt":1,"fault":"rate_limit"}])");
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().kind, ProviderError::Kind::kHttp);
  EXPECT_EQ(plain.error().http_status, 429);
  EXPECT_EQ(plain.error().type, "rate_limit_error");
  EXPECT_TRUE(plain.error().retryable);
  EXPECT_EQ(plain.error().retry_after, std::chrono::milliseconds(1000));
  EXPECT_TRUE(plain.error().request_id.starts_with("sim-"));
  EXPECT_EQ(Ask(R"([{"attempt":1,"fault":"rate_limit","retry_after_ms":150}])").error().retry_after,
            std::chrono::milliseconds(150));
  EXPECT_EQ(Ask(R"([{"attempt":1,"fault":"rate_limit","retry_after_s":2}])").error().retry_after,
            std::chrono::milliseconds(2000));
}

TEST_F(SimulatedFaultTest, UnavailableIsARetryableServerError) {
  auto plain = Ask(R"([{"attempt":1,"fault":"unavailable"}])");
  ASSERT_FALSE(plain);
  EXPECT_EQ(plain.error().http_status, 503);
  EXPECT_EQ(plain.error().type, "server_error");
  EXPECT_TRUE(plain.error().retryable);
  EXPECT_FALSE(plain.error().retry_after);
  auto overloaded = Ask(R"([{"attempt":1,"fault":"unavailable","status":529,"retry_after_ms":250}])");
  EXPECT_EQ(overloaded.error().http_status, 529);
  EXPECT_EQ(overloaded.error().type, "overloaded_error");
  EXPECT_EQ(overloaded.error().retry_after, std::chrono::milliseconds(250));
}

TEST_F(SimulatedFaultTest, FaultsApplyOnlyToTheirAttempts) {
  const char* script = R"([{"attempt":[1,2],"fault":"rate_limit"},{"attempt":3,"fault":"fence"}])";
  EXPECT_FALSE(Ask(script, 1));
  EXPECT_FALSE(Ask(script, 2));
  EXPECT_TRUE(Ask(script, 3)->text.starts_with("```json"));
  EXPECT_EQ(Ask(script, 4)->text, Ask("null")->text);  // same request, no fault: the same answer
}

TEST_F(SimulatedFaultTest, ConfigFaultsTargetSkillsAndLoseToSkillFaults) {
  SimulatedProviderOptions options;
  options.faults = json::parse(R"([{"attempt":1,"fault":"refusal","skill":"triage_ticket"},
                                   {"attempt":2,"fault":"content_filter","skill":"other"}])");
  EXPECT_EQ(Ask("null", 1, options)->finish_reason, FinishReason::kRefusal);
  EXPECT_EQ(Ask("null", 2, options)->finish_reason, FinishReason::kStop);
  EXPECT_EQ(Ask(R"([{"attempt":1,"fault":"fence"}])", 1, options)->finish_reason, FinishReason::kStop);
}

}  // namespace
}  // namespace skillrunner::providers

namespace skillrunner::providers {
namespace {

// `probability`: a refusal at 0.4 hits about 40% of 1,000 different inputs, the same input always
// draws the same, and 0 never fires.
TEST(SimulatedFaultProbabilityTest, AnEntryFiresOnItsShareOfInputsAndTheSameInputAlwaysDrawsTheSame) {
  // Whether `provider` refuses input number `i` of skill "s" on its first attempt.
  auto refuses = [](SimulatedProvider& provider, int i) {
    ChatRequest request;
    request.model = "m";
    request.messages = {{"user", "input " + std::to_string(i)}};
    request.metadata.skill_id = "s";
    request.metadata.task_id = "s";
    request.metadata.attempt = 1;
    return RunAwaitable(provider.Chat(request))->finish_reason == FinishReason::kRefusal;
  };
  SimulatedProvider provider({});
  test_support::ScriptSkill(provider, "s", R"([{"attempt":1,"fault":"refusal","probability":0.4}])");
  SimulatedProvider never({});
  test_support::ScriptSkill(never, "s", R"([{"attempt":1,"fault":"refusal","probability":0}])");
  int refused = 0;
  for (int i = 0; i < 1000; ++i) {
    const bool first = refuses(provider, i);
    refused += first ? 1 : 0;
    if (i < 50) {
      EXPECT_EQ(refuses(provider, i), first) << i;
      EXPECT_FALSE(refuses(never, i)) << i;
    }
  }
  EXPECT_NEAR(refused, 400, 47);  // 3 standard deviations of a binomial(1000, 0.4)
}

}  // namespace
}  // namespace skillrunner::providers
