// `skillrunner rollout status|pause|resume|rollback|promote` over the state dir, as an operator
// runs them (design.md §11.2).
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using test_support::ShellQuote;
using test_support::Skillrunner;

constexpr const char* kBody = R"(template_type: LLM_JSON_GENERATION
model: sim-model
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema: { type: object, required: [name], properties: { name: { type: string } } }
)";

class RolloutCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skills/greet/skill.yaml", std::string("id: greet\nversion: 1\n") + kBody +
                                               "prompt: { user: \"Name someone for {{input.text}}\" }\n"
                                               "rollout: { candidate: candidate.yaml, traffic: 0.1 }\n");
    tree_.Write("skills/greet/candidate.yaml", std::string("id: greet\nversion: 2\n") + kBody +
                                                   "prompt: { user: \"Name a person for {{input.text}}\" }\n");
    std::filesystem::create_directories(tree_.Path("rubrics"));
  }
  // `skillrunner --provider simulated ARGS --state-dir STATE`, stdout and stderr together.
  test_support::CommandResult Run(const std::string& args, const std::string& env = "") {
    return Skillrunner(tree_.root(), "--provider simulated " + args + " --state-dir " + ShellQuote(State()), "2>&1",
                       env);
  }
  std::string State() const { return tree_.Path("state").string(); }
  std::string ReadTree(const std::string& rel) const {
    std::ifstream in(tree_.Path(rel));
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

  testing::TempTree tree_;
};

TEST_F(RolloutCliTest, StatusPauseResumeAndTheirRefusals) {
  auto status = Run("rollout status --json");
  ASSERT_EQ(status.status, 0) << status.out;
  json::value rollouts = json::parse(status.out).at("rollouts");
  ASSERT_EQ(rollouts.as_array().size(), 1u);
  EXPECT_EQ(rollouts.at(0).at("state"), "running");
  EXPECT_EQ(rollouts.at(0).at("traffic"), 0.1);
  EXPECT_EQ(rollouts.at(0).at("measures"), json::parse(R"([{"measure":"ok","stable":{"n":0,"successes":0},)"
                                                       R"("candidate":{"n":0,"successes":0},"estimate":0.0,)"
                                                       R"("lower":-1.0,"upper":1.0,"alpha":0.05,)"
                                                       R"("decision":"undecided"}])"));
  auto paused = Run("rollout pause greet");
  EXPECT_EQ(paused.status, 0);
  EXPECT_EQ(paused.out, "greet: pause sent (serve applies it within a second)\n");
  EXPECT_EQ(
      Run("rollout status greet").out,
      "greet: version 1 -> 2, paused, traffic 10% (step 0)\n"
      "  ok           stable 0/0, candidate 0/0, difference +0.000 in [-1.000, +1.000] at alpha 0.05: undecided\n"
      "  last decision: paused by an operator at " +
          std::string(json::parse(Run("rollout status --json").out).at("rollouts").at(0).at("decided_at").as_string()) +
          "\n");
  EXPECT_EQ(Run("rollout resume greet").status, 0);
  auto again = Run("rollout resume greet");
  EXPECT_EQ(again.status, 2);
  EXPECT_EQ(again.out, "skillrunner rollout: cannot resume the rollout of \"greet\": it is running\n");
  auto unknown = Run("rollout pause gret");
  EXPECT_EQ(unknown.status, 2);
  EXPECT_EQ(unknown.out, "skillrunner rollout: unknown skill \"gret\" (did you mean \"greet\"?)\n");
  // The state dir may come from systemd's STATE_DIRECTORY instead of the flag.
  auto from_env = Skillrunner(tree_.root(), "--provider simulated rollout status --json", "2>&1",
                              "STATE_DIRECTORY=" + ShellQuote(State()));
  EXPECT_EQ(json::parse(from_env.out).at("rollouts").at(0).at("state"), "running") << from_env.out;
}

// With state.redis the rollouts' state is in Redis: a Redis that does not answer is exit status 3
// (try again), not a state read from elsewhere.
TEST_F(RolloutCliTest, ARedisThatDoesNotAnswerIsExitStatusThree) {
  tree_.Write("redis.yaml",
              "providers:\n  sim: { kind: simulated }\nmodels:\n  sim-model: { provider: sim }\n"
              "state: { redis: \"redis://127.0.0.1:1\", timeout_ms: 300 }\n");
  auto paused = Run("--config redis.yaml rollout pause greet");
  EXPECT_EQ(paused.status, 3) << paused.out;
  EXPECT_NE(paused.out.find("skillrunner rollout: Redis (state.redis) does not answer: the rollouts' state is there\n"),
            std::string::npos)
      << paused.out;
  EXPECT_FALSE(std::filesystem::exists(tree_.Path("state")));  // nothing went to the state dir instead
}

TEST_F(RolloutCliTest, PromoteWritesTheCandidateOverTheSkillAndPrintsTheDiff) {
  auto refused = Run("rollout promote greet");
  EXPECT_EQ(refused.status, 2);
  auto promoted = Run("rollout promote greet --force");
  ASSERT_EQ(promoted.status, 0) << promoted.out;
  const std::string file = "skills/greet/skill.yaml";  // as the tree names it, relative: a git diff's labels
  EXPECT_NE(promoted.out.find("--- a/" + file + "\n+++ b/" + file + "\n"), std::string::npos) << promoted.out;
  EXPECT_NE(promoted.out.find("-version: 1\n+version: 2\n"), std::string::npos) << promoted.out;
  EXPECT_NE(promoted.out.find("-rollout: { candidate: candidate.yaml, traffic: 0.1 }\n"), std::string::npos);
  EXPECT_NE(promoted.out.find("promoted greet to version 2: commit these changes, then reload serve\n"),
            std::string::npos);
  EXPECT_EQ(ReadTree("skills/greet/skill.yaml"), std::string("id: greet\nversion: 2\n") + kBody +
                                                     "prompt: { user: \"Name a person for {{input.text}}\" }\n");
  EXPECT_FALSE(std::filesystem::exists(tree_.Path("skills/greet/candidate.yaml")));
  auto status = Run("rollout status");
  EXPECT_EQ(status.status, 0);
  EXPECT_EQ(status.out, "no rollouts in this tree\n");
}

}  // namespace
}  // namespace skillrunner
