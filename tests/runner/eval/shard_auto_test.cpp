// `skillrunner eval --shard auto` (design.md §10.3): the real program takes its
// slice from the variables a Kubernetes Indexed Job or a GitLab `parallel:`
// job sets, and refuses, naming the variable, anything it cannot use.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <set>

#include "tests/runner/eval/eval_cli_support.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;
using eval_test::ReadFile;
using eval_test::ReadRecords;

constexpr int kCases = 12;

class ShardAutoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skills/echo/skill.yaml",
                "id: echo\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
    std::string cases;
    for (int i = 1; i <= kCases; ++i)
      cases += "{\"id\": \"c" + std::to_string(i) + "\", \"input\": {\"n\": " + std::to_string(i) + "}}\n";
    tree_.Write("skills/echo/cases.jsonl", cases);
    tree_.Write("suite.yaml", "id: night\nskills:\n  - skill: echo\n");
  }

  eval_test::Ran Eval(const std::string& args, const std::string& env_vars) {
    return eval_test::Skillrunner(tree_.root(), "--skills skills eval suite.yaml " + args, env_vars);
  }

  std::string ShardOf(const std::string& out) {
    return std::string(json::parse(ReadFile(tree_.Path(out + "/summary.json"))).at("shard").as_string());
  }

  std::set<std::string> CasesOf(const std::string& out) {
    std::set<std::string> ids;
    for (const auto& record : ReadRecords(tree_.Path(out + "/results.jsonl"))) {
      ids.insert(std::string(record.at("case").as_string()));
    }
    return ids;
  }

  // A refusal: exit 2, the one line, and nothing run.
  void ExpectRefused(const std::string& env_vars, const std::string& message) {
    auto ran = Eval("--out out/refused --shard auto", env_vars);
    EXPECT_EQ(ran.status, 2) << env_vars;
    EXPECT_EQ(ran.err, "skillrunner eval: --shard auto: " + message + "\n") << env_vars;
    EXPECT_FALSE(std::filesystem::exists(tree_.Path("out/refused/results.jsonl"))) << env_vars;
  }

  testing::TempTree tree_;
};

TEST_F(ShardAutoTest, AnIndexedJobsShardsRunTheirSlicesAndMergeIntoTheWholeSuite) {
  for (int i = 0; i < 3; ++i) {
    const std::string out = "out/k" + std::to_string(i);
    auto ran = Eval("--out " + out + " --shard auto --run-id night1",
                    "JOB_COMPLETION_INDEX=" + std::to_string(i) + " JOB_COMPLETIONS=3");
    ASSERT_EQ(ran.status, 0) << ran.err;
    EXPECT_EQ(ShardOf(out), std::to_string(i) + "/3");
  }
  // The same cases as the explicit slice.
  ASSERT_EQ(Eval("--out out/explicit --shard 1/3", "").status, 0);
  EXPECT_EQ(CasesOf("out/k1"), CasesOf("out/explicit"));
  EXPECT_LT(CasesOf("out/k1").size(), static_cast<std::size_t>(kCases));
  auto merged = eval_test::Skillrunner(tree_.root(), "--skills skills eval merge --out out/all out/k0 out/k1 out/k2");
  ASSERT_EQ(merged.status, 0) << merged.err;
  EXPECT_EQ(CasesOf("out/all").size(), static_cast<std::size_t>(kCases));
}

TEST_F(ShardAutoTest, GitLabsOneBasedNodeIndexIsShardIndexMinusOne) {
  auto ran = Eval("--out out/g --shard auto", "CI_NODE_INDEX=2 CI_NODE_TOTAL=3");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ShardOf("out/g"), "1/3");
  ASSERT_EQ(Eval("--out out/explicit --shard 1/3", "").status, 0);
  EXPECT_EQ(CasesOf("out/g"), CasesOf("out/explicit"));
  ASSERT_EQ(Eval("--out out/last --shard auto", "CI_NODE_INDEX=3 CI_NODE_TOTAL=3").status, 0);
  EXPECT_EQ(ShardOf("out/last"), "2/3");
}

TEST_F(ShardAutoTest, TheKubernetesPairWinsOverGitLabs) {
  auto ran =
      Eval("--out out/both --shard auto", "JOB_COMPLETION_INDEX=0 JOB_COMPLETIONS=2 CI_NODE_INDEX=3 CI_NODE_TOTAL=3");
  ASSERT_EQ(ran.status, 0) << ran.err;
  EXPECT_EQ(ShardOf("out/both"), "0/2");
}

TEST_F(ShardAutoTest, AHalfSetPairIsRefusedNamingTheMissingVariable) {
  ExpectRefused("JOB_COMPLETION_INDEX=1",
                "JOB_COMPLETION_INDEX is set but JOB_COMPLETIONS is not (set it in the Job's pod template to the "
                "Job's spec.completions)");
  ExpectRefused("JOB_COMPLETIONS=3",
                "JOB_COMPLETIONS is set but JOB_COMPLETION_INDEX is not (Kubernetes sets it in the pods of a Job "
                "with completionMode: Indexed)");
  // GitLab sets CI_NODE_TOTAL=1 in every job without parallel:.
  ExpectRefused("CI_NODE_TOTAL=1",
                "CI_NODE_TOTAL is set but CI_NODE_INDEX is not (GitLab sets it only in a job with parallel:)");
  ExpectRefused("CI_NODE_INDEX=1",
                "CI_NODE_INDEX is set but CI_NODE_TOTAL is not (GitLab sets both in a job with parallel:)");
  // A half-set Kubernetes pair is not skipped for a whole GitLab one.
  ExpectRefused("JOB_COMPLETION_INDEX=1 CI_NODE_INDEX=1 CI_NODE_TOTAL=2",
                "JOB_COMPLETION_INDEX is set but JOB_COMPLETIONS is not (set it in the Job's pod template to the "
                "Job's spec.completions)");
}

TEST_F(ShardAutoTest, NeitherPairIsRefusedSayingWhichVariablesItReads) {
  ExpectRefused("",
                "no shard in the environment: it reads JOB_COMPLETION_INDEX and JOB_COMPLETIONS (a Kubernetes "
                "Indexed Job) or CI_NODE_INDEX and CI_NODE_TOTAL (GitLab parallel:)");
}

TEST_F(ShardAutoTest, IndexesOutOfRangeAndNonNumbersAreRefused) {
  ExpectRefused("JOB_COMPLETION_INDEX=3 JOB_COMPLETIONS=3",
                "JOB_COMPLETION_INDEX=3 with JOB_COMPLETIONS=3: need 0 <= JOB_COMPLETION_INDEX < JOB_COMPLETIONS");
  ExpectRefused("JOB_COMPLETION_INDEX=0 JOB_COMPLETIONS=0",
                "JOB_COMPLETION_INDEX=0 with JOB_COMPLETIONS=0: need 0 <= JOB_COMPLETION_INDEX < JOB_COMPLETIONS");
  ExpectRefused("CI_NODE_INDEX=0 CI_NODE_TOTAL=3",
                "CI_NODE_INDEX=0 with CI_NODE_TOTAL=3: need 1 <= CI_NODE_INDEX <= CI_NODE_TOTAL");
  ExpectRefused("CI_NODE_INDEX=4 CI_NODE_TOTAL=3",
                "CI_NODE_INDEX=4 with CI_NODE_TOTAL=3: need 1 <= CI_NODE_INDEX <= CI_NODE_TOTAL");
  ExpectRefused("JOB_COMPLETION_INDEX=1 JOB_COMPLETIONS=three",
                "JOB_COMPLETIONS must be a whole number, got \"three\"");
  ExpectRefused("CI_NODE_INDEX= CI_NODE_TOTAL=2", "CI_NODE_INDEX must be a whole number, got \"\"");
}

}  // namespace
}  // namespace skillrunner::eval
