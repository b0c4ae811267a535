// design.md §11.3: `history: postgresql://...` shared by many writers. Real `skillrunner eval`
// processes, at once, into one database of the real PostgreSQL cluster ctest starts; then
// --baseline last, eval merge and view against it.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <boost/json/parse.hpp>
#include <filesystem>

#include "tests/runner/eval/eval_cli_support.h"
#include "tests/support/postgres_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
namespace fs = std::filesystem;
using eval_test::ReadFile;

constexpr int kCases = 12;

class EvalPostgresTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto& pg = test_support::PostgresCluster::Shared();
    SKILLRUNNER_NEED_POSTGRES(pg);
    url_ = pg.NewDatabase(::testing::UnitTest::GetInstance()->current_test_info()->name());
    tree_.Write("skills/echo/skill.yaml",
                "id: echo\nhandler: echo\ninput_schema: { type: object }\noutput_schema: { type: object }\n");
    std::string cases;
    for (int i = 1; i <= kCases; ++i) {
      cases += "{\"id\": \"c" + std::to_string(i) + "\", \"input\": {\"n\": " + std::to_string(i) + "}}\n";
    }
    tree_.Write("skills/echo/cases.jsonl", cases);
    tree_.Write("suite.yaml", "id: night\nskills:\n  - skill: echo\n");
    // The config names the history: no command below passes --history but the first ones.
    tree_.Write("skillrunner.yaml", "history: \"" + url_ + "\"\n");
  }

  std::string Sql(const std::string& sql) { return test_support::PostgresCluster::Shared().Psql(url_, sql); }

  testing::TempTree tree_;
  std::string url_;
};

TEST_F(EvalPostgresTest, FourEvalsAtOnceIntoOneDatabaseAllAppearAndTheNextComparesWithTheLast) {
  std::vector<pid_t> pids;
  for (int i = 0; i < 4; ++i) {
    pids.push_back(eval_test::Spawn(
        tree_.root(), {"--skills", "skills", "eval", "suite.yaml", "--out", "out/n" + std::to_string(i), "--history",
                       url_, "--git-ref", "ref" + std::to_string(i)}));
  }
  for (pid_t pid : pids) {
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  }
  EXPECT_EQ(Sql("SELECT count(*), count(DISTINCT git_ref) FROM runs"), "4|4");
  EXPECT_EQ(Sql("SELECT count(*) FROM case_records"), std::to_string(4 * kCases));
  EXPECT_EQ(Sql("SELECT count(*) FROM case_outcomes WHERE outcome = 'pass'"), std::to_string(4 * kCases));

  auto next = eval_test::Skillrunner(tree_.root(), "--skills skills eval suite.yaml --out out/n4 --baseline last");
  ASSERT_EQ(next.status, 0) << next.err;
  json::value summary = json::parse(ReadFile(tree_.Path("out/n4/summary.json")));
  EXPECT_EQ(summary.at_pointer("/baseline/status"), "compared");
  EXPECT_EQ(Sql("SELECT count(*) FROM runs"), "5");

  auto exported = eval_test::Skillrunner(tree_.root(), "view --export site");
  ASSERT_EQ(exported.status, 0) << exported.err;
  // index, rollouts, the suite, 5 runs, a compare for each run with a baseline, and the 12 cases of
  // the newest. Each run but the first to start has one run before it; the first has one too when a
  // run that started after it finished first (its summary's baseline, "last" at its end): 4 or 5.
  std::size_t compares = 0;
  for (const auto& entry : fs::directory_iterator(tree_.Path("site/compare"))) compares += entry.is_regular_file();
  EXPECT_GE(compares, 4u);
  EXPECT_LE(compares, 5u);
  EXPECT_EQ(exported.err, "view: wrote " + std::to_string(20 + compares) + " page(s) to site (open index.html)\n");
  EXPECT_NE(ReadFile(tree_.Path("site/index.html")).find("\"runs\":5"), std::string::npos);
}

TEST_F(EvalPostgresTest, ShardsRecordNothingAndTheirMergeRecordsTheRun) {
  for (const char* shard : {"0/2", "1/2"}) {
    const std::string out = std::string("out/s") + shard[0];
    auto ran = eval_test::Skillrunner(
        tree_.root(), "--skills skills eval suite.yaml --out " + out + " --shard " + shard + " --run-id night-1");
    ASSERT_EQ(ran.status, 0) << ran.err;
  }
  auto merged = eval_test::Skillrunner(tree_.root(), "--skills skills eval merge out/s0 out/s1 --out out/merged");
  ASSERT_EQ(merged.status, 0) << merged.err;
  EXPECT_EQ(Sql("SELECT run_id, (SELECT count(*) FROM case_records) FROM runs"), "night-1|" + std::to_string(kCases));
}

TEST_F(EvalPostgresTest, ADatabaseThatDoesNotAnswerIsARunErrorThatNamesIt) {
  const std::string gone = "postgresql:///nodb?host=/nonexistent&port=5432&user=skillrunner";
  auto ran =
      eval_test::Skillrunner(tree_.root(), "--skills skills eval suite.yaml --out out/x --history '" + gone + "'");
  EXPECT_EQ(ran.status, 2);
  EXPECT_NE(ran.err.find("cannot open eval history " + gone +
                         ": connection to server on socket "
                         "\"/nonexistent/.s.PGSQL.5432\" failed: No such file or directory"),
            std::string::npos)
      << ran.err;
}

// design.md §12.3: a login the server refuses is found before any case runs, and no --out folder is
// made. The test cluster trusts its Unix socket, so the refusal here is a role it does not have: the
// same moment of the connection, the server's own "FATAL" in the message.
TEST_F(EvalPostgresTest, ALoginTheServerRefusesStopsTheRunBeforeAnyCase) {
  const std::string refused = url_.substr(0, url_.rfind("&user=")) + "&user=nobody_here";
  auto ran = eval_test::Skillrunner(
      tree_.root(), "--skills skills eval suite.yaml --out out/refused --history '" + refused + "' --baseline last");
  EXPECT_EQ(ran.status, 2) << ran.err;
  EXPECT_NE(ran.err.find("skillrunner eval: history: cannot open eval history "), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("role \"nobody_here\" does not exist"), std::string::npos) << ran.err;
  EXPECT_NE(ran.err.find("(checked before any case ran)"), std::string::npos) << ran.err;
  EXPECT_FALSE(fs::exists(tree_.Path("out/refused")));
}

}  // namespace
}  // namespace skillrunner
