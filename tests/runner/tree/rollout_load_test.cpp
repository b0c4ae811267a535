// A skill's `rollout:` block and its candidate at load (design.md §11.2): what loads, and each
// refusal with its file, line and column.
#include <gtest/gtest.h>

#include <thread>

#include "runner/tree/skill_registry.h"
#include "runner/tree/tree_index.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {

constexpr const char* kBody = R"(template_type: LLM_JSON_GENERATION
model: sim-model
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema: { type: object, required: [name], properties: { name: { type: string } } }
prompt: { user: "Name someone for {{input.text}}" }
)";

class RolloutLoadTest : public ::testing::Test {
 protected:
  std::vector<std::string> Load() {
    RegistryOptions options;
    options.skills_dir = tree_.Path("skills");
    options.rubrics_dir = tree_.Path("rubrics");
    options.is_known_handler = [](std::string_view) { return false; };
    auto loaded = SkillRegistry::Load(options, BuiltinConfig());
    registry_ = loaded.registry;
    std::vector<std::string> out;
    const std::string prefix = tree_.root().string() + "/";
    for (const auto& d : loaded.diagnostics) {
      std::string text = d.ToString();
      for (std::size_t at; (at = text.find(prefix)) != std::string::npos;) text.erase(at, prefix.size());
      out.push_back(text);
    }
    return out;
  }
  void WriteStable(const std::string& rollout) {
    tree_.Write("skills/greet/skill.yaml", std::string("id: greet\nversion: 1\n") + kBody + rollout);
  }
  void WriteCandidate(const std::string& head, const std::string& tail = "") {
    tree_.Write("skills/greet/candidate.yaml", head + kBody + tail);
  }

  testing::TempTree tree_;
  std::shared_ptr<const SkillRegistry> registry_;
};

TEST_F(RolloutLoadTest, ACandidateLoadsBesideItsStableVersion) {
  WriteStable("rollout:\n  candidate: candidate.yaml\n  steps: [0.05, 0.25, 0.5]\n  sticky: /text\n");
  WriteCandidate("id: greet\nversion: 2\n");
  EXPECT_EQ(Load(), std::vector<std::string>{});
  const Skill* skill = registry_->FindSkill("greet");
  ASSERT_NE(skill, nullptr);
  ASSERT_TRUE(skill->rollout);
  ASSERT_NE(skill->candidate, nullptr);
  EXPECT_EQ(skill->candidate->version, 2);
  EXPECT_EQ(skill->rollout->traffic, 0.05);
  EXPECT_EQ(skill->rollout->steps, (std::vector<double>{0.05, 0.25, 0.5}));
  EXPECT_EQ(skill->rollout->sticky, "/text");
  // Without a review, ok is what can be counted.
  EXPECT_EQ(skill->rollout->decide.measures, std::vector<rollout::Measure>{rollout::Measure::kOk});
  EXPECT_EQ(skill->rollout->key.name.substr(0, 18), "greet@1..2/sha256:");
  EXPECT_EQ(skill->rollout->key.candidate_digest.size(), 7u + 64u);
  // An edited candidate is another rollout: another digest.
  const std::string before = skill->rollout->key.name;
  WriteCandidate("id: greet\nversion: 2\n", "temperature: 0.2\n");
  EXPECT_EQ(Load(), std::vector<std::string>{});
  EXPECT_NE(registry_->FindSkill("greet")->rollout->key.name, before);
}

TEST_F(RolloutLoadTest, ACandidateThatIsNotItsSkillOneVersionOnIsRefusedWhereItSaysSo) {
  WriteStable("rollout: { candidate: candidate.yaml, traffic: 0.1 }\n");
  tree_.Write("skills/greet/candidate.yaml", R"(id: greeter
version: 1
template_type: LLM_JSON_GENERATION
model: sim-model
input_schema: { type: object }
output_schema: { type: object, required: [name], properties: { name: { type: string } } }
prompt: { user: "Name someone" }
rollout: { candidate: other.yaml, traffic: 0.5 }
)");
  EXPECT_EQ(Load(), (std::vector<std::string>{
                        "skills/greet/candidate.yaml:1:5: /id: a candidate has its skill's id \"greet\" (this file "
                        "says \"greeter\")",
                        "skills/greet/candidate.yaml:2:10: /version: a candidate's version is higher than its stable "
                        "version's: skill.yaml has version 1, this file 1",
                        "skills/greet/candidate.yaml:5:15: /input_schema: a candidate keeps its skill's input_schema "
                        "(callers' stubs are built against it): change the schema in a new version of its own, "
                        "without a rollout",
                        "skills/greet/candidate.yaml:8:10: /rollout: a candidate has no rollout of its own"}));
  EXPECT_EQ(registry_->FindSkill("greet"), nullptr);
  EXPECT_NE(registry_->FailedSkill("greet"), std::nullopt);
}

TEST_F(RolloutLoadTest, ARolloutBlockThatCannotWorkIsRefusedWhereItSaysSo) {
  WriteStable(R"(rollout:
  candidate: missing.yaml
  traffic: 0.1
  steps: [0.2, 0.2]
  sticky: customer
  decide: { measures: [ok, review_pass] }
)");
  EXPECT_EQ(Load(), (std::vector<std::string>{
                        "skills/greet/skill.yaml:11:16: /rollout/steps/1: steps rise strictly: 0.2 after 0.2",
                        "skills/greet/skill.yaml:10:12: /rollout/traffic: the traffic is where the steps start: 0.1 is "
                        "not steps[0] (0.2); leave traffic out, or make them equal",
                        "skills/greet/skill.yaml:12:11: /rollout/sticky: \"customer\" is not a JSON pointer into the "
                        "input (/customer_id, say)",
                        "skills/greet/skill.yaml:13:23: /rollout/decide/measures: review_pass counts review verdicts, "
                        "and this skill has none: add rollout.review (a rubric or skill and a sample), or measure [ok] "
                        "alone"}));
  WriteStable("rollout: { candidate: missing.yaml, traffic: 0.1 }\n");
  EXPECT_EQ(Load(), (std::vector<std::string>{"skills/greet/skill.yaml:8:23: /rollout/candidate: no file "
                                              "\"missing.yaml\" in skills/greet (the candidate is a skill "
                                              "descriptor there)"}));
}

TEST_F(RolloutLoadTest, AnOnlineReviewWithoutOneJudgeAndARolloutOfAHandlerAreRefused) {
  WriteStable("rollout: { candidate: candidate.yaml, traffic: 0.1, review: { rubric: q, skill: j } }\n");
  WriteCandidate("id: greet\nversion: 2\n");
  EXPECT_EQ(Load(), (std::vector<std::string>{"skills/greet/skill.yaml:8:61: /rollout/review: give the online "
                                              "review a rubric or an LLM_REVIEW skill, not both"}));
  WriteStable("rollout: { candidate: candidate.yaml, traffic: 0.1, review: { sample: 0.5 } }\n");
  EXPECT_EQ(Load(), (std::vector<std::string>{"skills/greet/skill.yaml:8:61: /rollout/review: the online review "
                                              "needs a judge: rubric: ID or skill: ID (this skill has no review "
                                              "gate to share)"}));
  tree_.Write("skills/greet/skill.yaml",
              "id: greet\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n"
              "rollout: { candidate: candidate.yaml, traffic: 0.1 }\n");
  // (This tree knows no handlers: "echo" is reported too.)
  EXPECT_EQ(Load(), (std::vector<std::string>{"skills/greet/skill.yaml:2:10: /handler: unknown handler \"echo\"",
                                              "skills/greet/skill.yaml:5:10: /rollout: only LLM_JSON_GENERATION "
                                              "skills roll out a candidate (this one is handler)"}));
}

TEST_F(RolloutLoadTest, ASpendCapNeedsAPricedJudgeAndTheCandidateIsAFileOfItsOwn) {
  tree_.Write("rubrics/q.yaml", "id: q\ncriteria:\n  - { id: a, description: Fine. }\n");
  WriteStable(
      "rollout:\n  candidate: candidate.yaml\n  traffic: 0.1\n"
      "  review: { rubric: q, max_cost_usd_per_hour: 5 }\n");
  WriteCandidate("id: greet\nversion: 2\n");
  EXPECT_EQ(Load(), (std::vector<std::string>{
                        "skills/greet/skill.yaml:11:47: /rollout/review/max_cost_usd_per_hour: a spend cap needs the "
                        "judge model's price: give \"sim-model\" a price in the config's models table"}));
  WriteStable("rollout: { candidate: skill.yaml, traffic: 0.1 }\n");
  EXPECT_EQ(Load(), (std::vector<std::string>{"skills/greet/skill.yaml:8:23: /rollout/candidate: the candidate is a "
                                              "file of its own beside skill.yaml (candidate.yaml, say)"}));
}

TEST_F(RolloutLoadTest, AReviewGateOnOneVersionAloneIsWarnedOf) {
  tree_.Write("rubrics/q.yaml", "id: q\ncriteria:\n  - { id: a, description: Fine. }\n");
  WriteStable("review: { rubric: q }\nrollout: { candidate: candidate.yaml, traffic: 0.1 }\n");
  WriteCandidate("id: greet\nversion: 2\n");
  EXPECT_EQ(Load(), (std::vector<std::string>{
                        "skills/greet/skill.yaml:9:10: warning: /rollout: review_pass counts review gates' verdicts, "
                        "and only skill.yaml has a review gate: the calls of candidate.yaml give none, so this rollout "
                        "can never step up; give both the same review:, or add rollout.review to judge both versions "
                        "alike [rollout-one-sided]"}));
  ASSERT_NE(registry_->FindSkill("greet"), nullptr);  // a warning: it loads
  WriteCandidate("id: greet\nversion: 2\nreview: { rubric: q }\n");
  EXPECT_EQ(Load(), std::vector<std::string>{});
}

TEST_F(RolloutLoadTest, TheTreeIndexStampsTheCandidate) {
  WriteStable("rollout: { candidate: candidate.yaml, traffic: 0.1 }\n");
  WriteCandidate("id: greet\nversion: 2\n");
  RegistryOptions options;
  options.skills_dir = tree_.Path("skills");
  options.rubrics_dir = tree_.Path("rubrics");
  options.is_known_handler = [](std::string_view) { return false; };
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto loaded = SkillRegistry::Load(options, BuiltinConfig());
  // Files written in the same clock tick as the load are not trusted: the index needs them older.
  auto index = IndexTree(options, loaded, "test", CoarseNowNs());
  ASSERT_TRUE(index);
  EXPECT_EQ(TreeChange(*index, options), "");
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  WriteCandidate("id: greet\nversion: 2\n", "temperature: 0.3\n");
  EXPECT_NE(TreeChange(*index, options), "");
}

}  // namespace
}  // namespace skillrunner
