#include "runner/skill_runner.h"

#include <gtest/gtest.h>

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "tests/support/run_awaitable.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;

// A service that answers a fixed value (or waits forever), recording calls;
// its answer's attempt is left for the runner to record.
class ScriptedService : public SkillService {
 public:
  explicit ScriptedService(json::value answer, bool hang = false) : answer_(std::move(answer)), hang_(hang) {}
  boost::asio::awaitable<Result<Produced>> Run(const Skill&, const json::value& input, InvocationContext&) override {
    ++calls;
    last_input = input;
    if (hang_) {
      boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, std::chrono::hours(1));
      co_await timer.async_wait(boost::asio::use_awaitable);
    }
    Attempt attempt;
    attempt.kind = AttemptKind::kOk;
    attempt.raw = json::serialize(answer_);
    co_return Produced{answer_, std::make_unique<Attempt>(std::move(attempt))};
  }
  int calls = 0;
  json::value last_input;

 private:
  json::value answer_;
  bool hang_;
};

class SkillRunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skills/echoer/skill.yaml", R"(id: echoer
handler: echo
input_schema:
  type: object
  required: [n]
  properties: { n: { type: integer, maximum: 10 }, tags: { type: array, items: { type: string } } }
output_schema:
  type: object
  required: [n]
  properties: { n: { type: integer } }
)");
    tree_.Write("skills/gen/skill.yaml", R"(id: gen
template_type: LLM_JSON_GENERATION
model: any
prompt: { user: "{{input.n}}" }
timeout_ms: 50
input_schema: { type: object }
output_schema: { type: object }
)");
    RegistryOptions options;
    options.skills_dir = tree_.Path("skills");
    options.rubrics_dir = tree_.Path("rubrics");
    auto loaded = SkillRegistry::Load(options, BuiltinConfig());
    ASSERT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics[0].ToString();
    runner_ = std::make_unique<SkillRunner>(loaded.registry);
  }

  InvocationOutcome Invoke(std::string_view skill, std::string_view input) {
    return test_support::RunAwaitable(runner_->Invoke(skill, json::parse(input)));
  }

  testing::TempTree tree_;
  std::unique_ptr<SkillRunner> runner_;
};

TEST_F(SkillRunnerTest, UnknownSkillIsSkillNotFoundWithAHint) {
  auto outcome = Invoke("echoes", "{}");
  ASSERT_FALSE(outcome);
  outcome.error().metrics.duration_ms = 0;  // the one field that depends on the clock
  EXPECT_EQ(
      json::serialize(ToJson(outcome)),
      R"J({"error":{"code":"SKILL_NOT_FOUND","message":"unknown skill \"echoes\" (did you mean \"echoer\"?)","attempts":[],"metrics":{"mode":"","attempts":0,"validation_retries":0,"transient_retries":0,"fallbacks":0,"escalated":false,"input_tokens":0,"output_tokens":0,"cost_usd":null,"tokens_estimated":false,"duration_ms":0}}})J");
}

// Called with its default options from inside a coroutine, as a skill's own
// code would (g++ 12 once freed an invalid pointer here when the options
// were a default argument).
TEST_F(SkillRunnerTest, DefaultOptionsFromInsideACoroutine) {
  auto service = std::make_shared<ScriptedService>(json::parse(R"({"n":1})"));
  runner_->RegisterService(TemplateType::kHandler, service);
  auto outcome = test_support::RunAwaitable([](SkillRunner& runner) -> boost::asio::awaitable<InvocationOutcome> {
    auto first = co_await runner.Invoke("echoer", json::parse(R"({"n": 1})"));
    if (!first) co_return first;
    co_return co_await runner.Invoke("echoer", json::parse(R"({"n": 2})"));
  }(*runner_));
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(outcome->output, json::parse(R"({"n":1})"));
  EXPECT_EQ(service->calls, 2);
}

TEST_F(SkillRunnerTest, BadInputIsInputInvalidWithEveryPointerAndNoWork) {
  auto service = std::make_shared<ScriptedService>(json::parse(R"({"n":1})"));
  runner_->RegisterService(TemplateType::kHandler, service);
  auto outcome = Invoke("echoer", R"({"n": 11, "tags": ["a", 2]})");
  ASSERT_FALSE(outcome);
  const Error& error = outcome.error().error;
  EXPECT_EQ(error.code, ErrorCode::kInputInvalid);
  EXPECT_EQ(error.message, "input does not match the input_schema of skill \"echoer\" (2 errors)");
  ASSERT_EQ(error.errors.size(), 2u);
  EXPECT_EQ(error.errors[0], (FieldError{"/n", "expected at most 10, found 11"}));
  EXPECT_EQ(error.errors[1], (FieldError{"/tags/1", "expected string, found number 2"}));
  EXPECT_EQ(service->calls, 0);
}

TEST_F(SkillRunnerTest, DispatchesToTheServiceAndChecksItsOutput) {
  auto service = std::make_shared<ScriptedService>(json::parse(R"({"n":"three"})"));
  runner_->RegisterService(TemplateType::kHandler, service);
  auto outcome = Invoke("echoer", R"({"n": 3})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(service->calls, 1);
  EXPECT_EQ(outcome.error().error.code, ErrorCode::kHandlerFailed);
  EXPECT_EQ(outcome.error().error.message,
            "handler output does not match the output_schema of skill \"echoer\" (1 error)");
  ASSERT_EQ(outcome.error().attempts.size(), 1u);
  EXPECT_EQ(outcome.error().attempts[0].kind, AttemptKind::kHandler);
  EXPECT_EQ(outcome.error().attempts[0].errors[0], (FieldError{"/n", "expected integer, found string \"three\""}));
}

TEST_F(SkillRunnerTest, SuccessCarriesOutputAttemptsAndMetrics) {
  runner_->RegisterService(TemplateType::kHandler, std::make_shared<ScriptedService>(json::parse(R"({"n":3})")));
  auto outcome = Invoke("echoer", R"({"n": 3})");
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->skill, "echoer");
  EXPECT_EQ(json::serialize(outcome->output), R"({"n":3})");
  EXPECT_EQ(outcome->metrics.mode, RunMode::kHandler);
  EXPECT_EQ(outcome->metrics.attempts, 1);
  ASSERT_EQ(outcome->attempts.size(), 1u);
  EXPECT_EQ(outcome->attempts[0].n, 1);
}

TEST_F(SkillRunnerTest, TemplateTypeWithoutAServiceSaysSo) {
  auto outcome = Invoke("gen", R"({"n": 1})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().error.code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(outcome.error().error.message,
            "no service is registered for template_type LLM_JSON_GENERATION (skill \"gen\"): "
            "this build of skillrunner cannot run it");
}

TEST_F(SkillRunnerTest, AServiceThatOverrunsTheDeadlineIsTimeout) {
  runner_->RegisterService(TemplateType::kLlmJsonGeneration,
                           std::make_shared<ScriptedService>(json::object{}, /*hang=*/true));
  auto outcome = Invoke("gen", R"({"n": 1})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().error.code, ErrorCode::kTimeout);
  EXPECT_EQ(outcome.error().error.message, "invocation timed out after 50 ms");
}

}  // namespace
}  // namespace skillrunner
