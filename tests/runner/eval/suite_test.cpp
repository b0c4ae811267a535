// Loading eval suites and datasets: what a user sees for every mistake.
#include "runner/eval/suite.h"

#include <gtest/gtest.h>

#include "services/handler/builtin_handlers.h"
#include "services/review/reviewer.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {

class SuiteTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skills/echo/skill.yaml",
                "id: echo_skill\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
    tree_.Write("skills/echo/cases.jsonl",
                "{\"id\": \"a\", \"input\": {\"x\": 1}, \"expected\": {\"x\": 1}}\n"
                "{\"id\": \"b\", \"input\": {\"x\": 2}, \"tags\": [\"t\"]}\n");
    tree_.Write("skills/gen/skill.yaml", R"(id: gen
template_type: LLM_JSON_GENERATION
model: sim-model
input_schema: { type: object }
output_schema: { type: object, required: [label], properties: { label: { type: string } } }
prompt: { system: Label it., user: "{{input}}" }
review: { rubric: quality }
)");
    tree_.Write("skills/gen/cases.jsonl", "{\"id\": \"g1\", \"input\": {}}\n");
    tree_.Write("rubrics/quality.yaml", "id: quality\ncriteria:\n  - { id: a, description: first }\n");
    tree_.Write("rubrics/other.yaml", "id: other\ncriteria:\n  - { id: b, description: second }\n");
    RegistryOptions options;
    options.skills_dir = tree_.Path("skills");
    options.rubrics_dir = tree_.Path("rubrics");
    options.is_known_handler = handler::IsKnownHandler;
    auto loaded = SkillRegistry::Load(options, BuiltinConfig());
    ASSERT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics.front().ToString();
    registry_ = loaded.registry;
  }

  // The diagnostics of loading `text` as suite.yaml, file names relative to the tree.
  std::vector<std::string> Errors(const std::string& text) {
    auto suite = LoadSuite(tree_.Write("suite.yaml", text), *registry_);
    std::vector<std::string> out;
    if (suite) return out;
    std::string root = tree_.root().string() + "/";
    for (const auto& d : suite.error()) {
      std::string line = d.ToString();
      if (line.starts_with(root)) line = line.substr(root.size());
      out.push_back(line);
    }
    return out;
  }

  testing::TempTree tree_;
  std::shared_ptr<const SkillRegistry> registry_;
};

TEST_F(SuiteTest, AGoodSuiteResolvesSkillsRubricsDatasetsAndThresholds) {
  auto suite = LoadSuite(tree_.Write("suite.yaml", R"(id: nightly
concurrency: 8
repeats: 2
skills:
  - skill: echo_skill
    expected: subset
    rubric: other
    judge_model: judge-model
    thresholds: { rubric_pass_rate: 0.5 }
  - skill: gen
thresholds: { schema_compliance: 0.98, rubric_pass_rate: 0.9, criterion_pass_rate: 0.8, criteria: { a: 0.95 } }
gate_unstable_criteria: true
rate_limits: { simulated: { requests_per_minute: 600 } }
)"),
                         *registry_);
  ASSERT_TRUE(suite) << suite.error().front().ToString();
  EXPECT_EQ(suite->id, "nightly");
  EXPECT_EQ(suite->concurrency, 8);
  EXPECT_EQ(suite->CaseCount(), 6u);  // (2 + 1) cases x 2 repeats
  EXPECT_TRUE(suite->gate_unstable_criteria);
  EXPECT_EQ(suite->rate_limits.at("simulated").requests_per_minute, 600);
  EXPECT_TRUE(suite->warnings.empty());
  const SuiteSkill& echo = suite->skills[0];
  EXPECT_EQ(echo.cases_file, tree_.Path("skills/echo/cases.jsonl"));
  EXPECT_EQ(echo.cases.size(), 2u);
  EXPECT_EQ(echo.cases[1].tags.size(), 1u);
  EXPECT_EQ(echo.expected, ExpectedMode::kSubset);
  EXPECT_EQ(echo.rubric, "other");
  EXPECT_EQ(echo.judge_model, "judge-model");
  EXPECT_FALSE(echo.judge_is_gate);
  EXPECT_EQ(echo.thresholds.rubric_pass_rate, 0.5);  // the entry's own wins
  EXPECT_EQ(echo.thresholds.schema_compliance, 0.98);
  const SuiteSkill& gen = suite->skills[1];
  EXPECT_EQ(gen.rubric, "quality");  // the review gate's
  EXPECT_EQ(gen.judge_model, "sim-model");
  EXPECT_TRUE(gen.judge_is_gate);
  // The judges are prepared at load: their ids, rubrics and routes.
  ASSERT_TRUE(echo.judge && gen.judge);
  EXPECT_EQ(echo.judge->review_id(), "echo_skill.eval");
  EXPECT_EQ(echo.judge->rubric->id, "other");
  EXPECT_EQ(echo.judge->generation.model, "judge-model");
  EXPECT_EQ(echo.judge->generation.provider, "simulated");
  EXPECT_EQ(gen.judge->review_id(), "gen.eval");
  EXPECT_EQ(gen.judge->rubric->id, "quality");
  EXPECT_EQ(gen.judge->generation.temperature, 0);
  EXPECT_EQ(gen.thresholds.criteria.at("a"), 0.95);
  EXPECT_EQ(gen.thresholds.criterion_pass_rate, 0.8);
}

TEST_F(SuiteTest, SchemaErrorsNameLineColumnAndSuggestTheKey) {
  EXPECT_EQ(Errors("id: nightly\nconcurency: 4\nskills:\n  - skill: gen\n    expected: partial\n"),
            (std::vector<std::string>{
                "suite.yaml:2:1: /concurency: unexpected property \"concurency\" (did you mean \"concurrency\"?)",
                "suite.yaml:5:15: /skills/0/expected: expected one of [\"exact\",\"subset\"], found \"partial\"",
            }));
}

TEST_F(SuiteTest, UnknownSkillsRubricsAndDuplicatesNameTheirLine) {
  EXPECT_EQ(Errors(R"(id: nightly
skills:
  - skill: echo_skil
  - skill: gen
    rubric: qualty
  - skill: gen
)"),
            (std::vector<std::string>{
                "suite.yaml:3:12: /skills/0/skill: unknown skill \"echo_skil\" (did you mean \"echo_skill\"?)",
                "suite.yaml:5:13: /skills/1/rubric: unknown rubric \"qualty\" (did you mean \"quality\"?)",
                "suite.yaml:6:12: /skills/2/skill: skill \"gen\" is listed twice",
            }));
}

TEST_F(SuiteTest, AHandlerSkillNeedsAJudgeModelToBeJudged) {
  EXPECT_EQ(Errors("id: s\nskills:\n  - skill: echo_skill\n    rubric: quality\n"),
            (std::vector<std::string>{
                "suite.yaml:4:13: /skills/0/rubric: skill \"echo_skill\" has no model of its own; set judge_model "
                "to judge it",
            }));
}

TEST_F(SuiteTest, AJudgeModelTheConfigCannotRouteIsNamedAtItsLine) {
  // A config without default_provider: models outside its table go nowhere.
  Config config = BuiltinConfig();
  config.default_provider.clear();
  config.models["sim-model"] = ModelConfig{"sim-model", "simulated", OutputMode::kNative, {}, {}, {}};
  RegistryOptions options;
  options.skills_dir = tree_.Path("skills");
  options.rubrics_dir = tree_.Path("rubrics");
  options.is_known_handler = handler::IsKnownHandler;
  auto loaded = SkillRegistry::Load(options, config);
  ASSERT_TRUE(loaded.diagnostics.empty()) << loaded.diagnostics.front().ToString();
  auto suite = LoadSuite(tree_.Write("suite.yaml", "id: s\nskills:\n  - skill: gen\n    judge_model: nowhere-model\n"),
                         *loaded.registry);
  ASSERT_FALSE(suite);
  ASSERT_EQ(suite.error().size(), 1u);
  EXPECT_EQ(suite.error().front().ToString(),
            tree_.Path("suite.yaml").string() +
                ":4:18: /skills/0/judge_model: the judge model \"nowhere-model\" is not in the models table and "
                "there is no default_provider");
}

TEST_F(SuiteTest, BadDatasetLinesNameFileAndLine) {
  tree_.Write(
      "skills/echo/broken.jsonl",
      "{\"id\": \"a\", \"input\": {}}\n"
      "{\"id\": \"b\", \"input\": \n"
      "\n"
      "{\"id\": \"a\", \"input\": {}}\n"
      "{\"input\": {}}\n"
      "{\"id\": \"c\", \"input\": {}, \"expect\": {}}\n"
      "{\"id\": \"d\"}\n"
      "[1, 2]\n"
      "{\"id\": \"e\", \"input\": {}, \"human\": {\"faithful\": \"yes\"}}\n"
      "{\"id\": \"f\", \"input\": {}, \"human\": [\"pass\"]}\n"
      "{\"id\": \"g\", \"input\": {}, \"criteria\": {\"id\": \"x\"}}\n"
      "{\"id\": \"h\", \"input\": {}, \"criteria\": [{\"id\": \"x\", \"description\": \"X.\", \"weight\": 2}]}\n"
      "{\"id\": \"i\", \"input\": {}, \"criteria\": [{\"id\": \"x\", \"description\": \"X.\", \"required\": 1}]}\n"
      "{\"id\": \"j\", \"input\": {}, \"criteria\": [{\"id\": \"x\", \"description\": \"X.\"},"
      " {\"id\": \"x\", \"description\": \"Y.\"}]}\n"
      "{\"id\": \"k\", \"input\": {}, \"criteria\": [{\"id\": \"\", \"description\": \"X.\"}]}\n");
  EXPECT_EQ(
      Errors("id: s\nskills:\n  - skill: echo_skill\n    cases: broken.jsonl\n"),
      (std::vector<std::string>{
          "skills/echo/broken.jsonl:2:1: not valid JSON: incomplete JSON",
          "skills/echo/broken.jsonl:4:1: duplicate case id \"a\" (first used on line 1)",
          "skills/echo/broken.jsonl:5:1: missing key \"id\"",
          "skills/echo/broken.jsonl:6:1: unexpected key \"expect\" (a case has id, input, expected, tags, human, "
          "checks, exec_check, reference, criteria)",
          "skills/echo/broken.jsonl:7:1: case \"d\": missing key \"input\"",
          "skills/echo/broken.jsonl:8:1: a case must be a JSON object (id, input, expected, tags, human, checks, "
          "exec_check, reference, criteria)",
          "skills/echo/broken.jsonl:9:1: case \"e\": human[\"faithful\"] must be \"pass\" or \"fail\"",
          "skills/echo/broken.jsonl:10:1: case \"f\": \"human\" must be an object of criterion ids to \"pass\" "
          "or \"fail\"",
          "skills/echo/broken.jsonl:11:1: case \"g\": /criteria: must be an array of {\"id\", \"description\", "
          "\"required\"?}",
          "skills/echo/broken.jsonl:12:1: case \"h\": /criteria/0: unexpected key \"weight\" (a criterion has id, "
          "description, required)",
          "skills/echo/broken.jsonl:13:1: case \"i\": /criteria/0/required: must be true or false",
          "skills/echo/broken.jsonl:14:1: case \"j\": /criteria/1/id: \"x\" is listed twice",
          "skills/echo/broken.jsonl:15:1: case \"k\": /criteria/0/id: must be a non-empty string",
      }));
}

TEST_F(SuiteTest, AMissingDatasetIsNamedAtTheSuiteLine) {
  auto errors = Errors("id: s\nskills:\n  - skill: echo_skill\n    cases: nowhere.jsonl\n");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0], "suite.yaml:4:12: /skills/0/cases: cannot read the dataset of skill \"echo_skill\": " +
                           tree_.Path("skills/echo/nowhere.jsonl").string());
}

TEST_F(SuiteTest, RateLimitsForAnUnknownProviderAreAWarning) {
  auto suite = LoadSuite(tree_.Write("suite.yaml",
                                     "id: s\nskills:\n  - skill: gen\n"
                                     "rate_limits:\n  simulatd: { requests_per_minute: 60 }\n"),
                         *registry_);
  ASSERT_TRUE(suite);
  ASSERT_EQ(suite->warnings.size(), 1u);
  EXPECT_EQ(suite->warnings[0].ToString(),
            tree_.Path("suite.yaml").string() +
                ":5:3: warning: /rate_limits/simulatd: the config has no provider \"simulatd\"; its limits are "
                "ignored (did you mean \"simulated\"?)");
}

// Found by tests/fuzz/suite_yaml_fuzz.cpp: the schema takes 1.0 as an
// integer, and reading it with as_int64 threw out of the loader.
TEST_F(SuiteTest, IntegersWrittenWithAFractionOfZeroAreThoseIntegers) {
  auto suite = LoadSuite(tree_.Write("suite.yaml", "id: s\nconcurrency: 4.0\nrepeats: 2.\nskills:\n  - skill: gen\n"),
                         *registry_);
  ASSERT_TRUE(suite) << suite.error().front().ToString();
  EXPECT_EQ(suite->concurrency, 4);
  EXPECT_EQ(suite->repeats, 2);
  EXPECT_EQ(Errors("id: s\nrepeats: 2.5\nskills:\n  - skill: gen\n"),
            (std::vector<std::string>{"suite.yaml:2:10: /repeats: expected integer, found number 2.5"}));
}

TEST_F(SuiteTest, AnUnreadableSuiteFileSaysSo) {
  auto suite = LoadSuite(tree_.Path("missing.yaml"), *registry_);
  ASSERT_FALSE(suite);
  EXPECT_EQ(suite.error().front().ToString(), tree_.Path("missing.yaml").string() + ": cannot read suite file");
}

}  // namespace
}  // namespace skillrunner::eval

namespace skillrunner::eval {
namespace {

// design.md §10.6: the batch block's keys, with the defaults for those left out,
// and a skill's `batch: false`.
TEST_F(SuiteTest, TheBatchBlockReadsItsKeysWithDefaultsAndASkillCanOptOut) {
  auto suite = LoadSuite(tree_.Write("suite.yaml",
                                     "id: nightly\nbatch: { max_requests: 500, poll_interval_s: 2.5, "
                                     "fallback: online }\nskills:\n  - skill: gen\n    batch: false\n"
                                     "  - skill: echo_skill\n"),
                         *registry_);
  ASSERT_TRUE(suite) << suite.error().front().ToString();
  ASSERT_TRUE(suite->batch);
  EXPECT_EQ(suite->batch->max_requests, 500u);
  EXPECT_EQ(suite->batch->send_after_s, 15);
  EXPECT_EQ(suite->batch->poll_interval_s, 2.5);
  EXPECT_TRUE(suite->batch->fallback_online);
  EXPECT_FALSE(suite->skills[0].batch);
  EXPECT_TRUE(suite->skills[1].batch);
  auto online = LoadSuite(tree_.Write("suite.yaml", "id: nightly\nskills:\n  - skill: gen\n"), *registry_);
  ASSERT_TRUE(online);
  EXPECT_FALSE(online->batch);
}

TEST_F(SuiteTest, BadBatchValuesNameTheKeyAndWhatIsAllowed) {
  EXPECT_EQ(
      Errors("id: nightly\nbatch:\n  max_requests: 0\n  poll_interval_s: 0\n  fallback: retry\n"
             "  send_after: 3\nskills:\n  - skill: gen\n    batch: sometimes\n"),
      (std::vector<std::string>{
          "suite.yaml:3:17: /batch/max_requests: expected at least 1, found 0",
          "suite.yaml:4:20: /batch/poll_interval_s: expected more than 0, found 0",
          "suite.yaml:5:13: /batch/fallback: expected one of [\"fail\",\"online\"], found \"retry\"",
          "suite.yaml:6:3: /batch/send_after: unexpected property \"send_after\" (did you mean \"send_after_s\"?)",
          "suite.yaml:9:12: /skills/0/batch: expected boolean, found string \"sometimes\"",
      }));
}

}  // namespace
}  // namespace skillrunner::eval
