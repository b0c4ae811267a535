// The review gate composed in the core (design.md §5.3, §9.1): the attempt log is
// appended once per attempt, in the order the requests were made, and every
// provider request carries the invocation's metadata.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <mutex>

#include "runner/skill_runner.h"
#include "runner/skill_services.h"
#include "services/handler/process_runner.h"
#include "services/providers/simulated/simulated_provider.h"
#include "tests/support/run_awaitable.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;

// The simulated provider, recording the metadata of every request.
class RecordingProvider : public providers::Provider {
 public:
  explicit RecordingProvider(providers::SimulatedProvider& inner) : inner_(inner) {}
  boost::asio::awaitable<providers::ChatResult> Chat(const providers::ChatRequest& request) override {
    {
      std::lock_guard lock(mutex_);
      seen.push_back(request.metadata);
    }
    co_return co_await inner_.Chat(request);
  }
  std::vector<providers::RequestMetadata> seen;

 private:
  providers::SimulatedProvider& inner_;
  std::mutex mutex_;
};

class GateAttemptLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("rubrics/quality.yaml",
                "id: quality\ncriteria:\n  - { id: good, description: It is good., required: true }\n");
    tree_.Write("skills/gated/skill.yaml", R"(id: gated
template_type: LLM_JSON_GENERATION
model: sim-model
prompt: { user: "Count {{input.text}}" }
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema: { type: object, required: [n], additionalProperties: false, properties: { n: { type: integer } } }
review: { rubric: quality, retry_once: true }
simulation:
  faults:
    - { attempt: 1, fault: wrong_type, path: /n }
    - { attempt: 3, fault: verdict, verdict: fail }
)");
    RegistryOptions options;
    options.skills_dir = tree_.Path("skills");
    options.rubrics_dir = tree_.Path("rubrics");
    auto loaded = SkillRegistry::Load(options, BuiltinConfig());
    ASSERT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics[0].ToString();
    auto simulation = providers::ParseSkillSimulation(loaded.registry->FindSkill("gated")->descriptor.at("simulation"));
    ASSERT_TRUE(simulation) << simulation.error().message;
    std::map<std::string, providers::SkillSimulation, std::less<>> skills;
    skills.emplace("gated", std::move(*simulation));
    simulated_.SetSkillSimulations(std::move(skills));
    runner_ = std::make_unique<SkillRunner>(loaded.registry);
    auto lookup = [this](std::string_view) -> providers::Provider* { return &recording_; };
    InstallServices(*runner_, ServiceDeps{lookup, process_runner_, downgrades_, sessions_});
  }

  testing::TempTree tree_;
  providers::SimulatedProvider simulated_{providers::SimulatedProviderOptions{}};
  RecordingProvider recording_{simulated_};
  handler::AsioProcessRunner process_runner_;
  generation::ModelDowngrades downgrades_;
  generation::SessionMemory sessions_;
  std::unique_ptr<SkillRunner> runner_;
};

TEST_F(GateAttemptLogTest, AttemptsAreRecordedOnceInRequestOrderWithTheirFinalKinds) {
  InvocationOptions options;
  options.seed = 7;
  auto outcome = test_support::RunAwaitable(runner_->Invoke("gated", json::parse(R"({"text": "sheep"})"), options));
  ASSERT_TRUE(outcome) << outcome.error().error.message;
  // generation (invalid) -> its retry (accepted, then rejected by the review)
  // -> the judge -> the regeneration -> the judge again.
  std::vector<AttemptKind> kinds;
  std::vector<int> numbers;
  for (const Attempt& attempt : outcome->attempts) {
    kinds.push_back(attempt.kind);
    numbers.push_back(attempt.n);
  }
  EXPECT_EQ(kinds, (std::vector<AttemptKind>{AttemptKind::kValidation, AttemptKind::kReview, AttemptKind::kOk,
                                             AttemptKind::kOk, AttemptKind::kOk}));
  EXPECT_EQ(numbers, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(outcome->attempts[1].errors,
            (std::vector<FieldError>{
                {"", "review: The output does not satisfy \"good\"."},
                {"", "review: good: " +
                         std::string(
                             outcome->review->at("first").at("criteria_results").at(0).at("reasoning").as_string())}}));
  EXPECT_EQ(outcome->review->at("pass"), true);
  EXPECT_EQ(outcome->review->at("first").at("pass"), false);
  EXPECT_EQ(outcome->metrics.attempts, 5);
  EXPECT_EQ(outcome->metrics.validation_retries, 1);
  EXPECT_EQ(outcome->metrics.mode, RunMode::kValidationLoop);

  ASSERT_EQ(recording_.seen.size(), 5u);
  std::vector<std::string> tasks;
  for (std::size_t i = 0; i < recording_.seen.size(); ++i) {
    const auto& meta = recording_.seen[i];
    EXPECT_EQ(meta.attempt, static_cast<int>(i) + 1);
    EXPECT_EQ(meta.skill_id, "gated");
    EXPECT_EQ(meta.invocation_id, recording_.seen[0].invocation_id);
    EXPECT_EQ(meta.seed, 7u);
    ASSERT_NE(meta.answer_schema, nullptr);
    tasks.push_back(meta.task_id);
  }
  EXPECT_TRUE(recording_.seen[0].invocation_id.starts_with("inv-"));
  EXPECT_EQ(tasks, (std::vector<std::string>{"gated", "gated", "gated.review", "gated", "gated.review"}));
  EXPECT_TRUE(recording_.seen[2].answer_schema->at("properties").as_object().contains("criteria_results"));
  EXPECT_EQ(*recording_.seen[0].answer_schema, json::parse(R"({"type":"object","required":["n"],
      "additionalProperties":false,"properties":{"n":{"type":"integer"}}})"));
}

TEST_F(GateAttemptLogTest, EachInvocationHasItsOwnId) {
  auto first = test_support::RunAwaitable(runner_->Invoke("gated", json::parse(R"({"text": "a"})")));
  auto second = test_support::RunAwaitable(runner_->Invoke("gated", json::parse(R"({"text": "b"})")));
  ASSERT_TRUE(first && second);
  ASSERT_EQ(recording_.seen.size(), 10u);
  EXPECT_NE(recording_.seen[0].invocation_id, recording_.seen[5].invocation_id);
  EXPECT_FALSE(recording_.seen[0].seed.has_value());
}

}  // namespace
}  // namespace skillrunner
