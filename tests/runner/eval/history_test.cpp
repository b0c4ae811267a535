#include "runner/eval/history/history.h"

#include <gtest/gtest.h>

#include <thread>

#include "tests/runner/eval/report_test_records.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;
using namespace report_records;

json::object Summary(std::string_view run_id, std::string_view started_at, std::string_view suite = "nightly",
                     double pass_rate = 0.9) {
  json::object summary{{"run_id", run_id},          {"suite", suite},   {"started_at", started_at},
                       {"finished_at", started_at}, {"status", "pass"}, {"breaches", json::array()}};
  summary["skills"] = json::object{{"extract", json::object{{"rubric_pass_rate", pass_rate}}}};
  return summary;
}

class HistoryTest : public ::testing::Test {
 protected:
  std::unique_ptr<History> OpenHistory() {
    auto history = History::Open(file_);
    EXPECT_TRUE(history.has_value()) << history.error().message;
    return history ? std::move(*history) : nullptr;
  }
  void Record(History& history, const json::object& summary, const std::vector<json::object>& records = {}) {
    auto recorded = history.RecordRun(eval::RunSummary::FromJson(summary), records);
    ASSERT_TRUE(recorded.has_value()) << recorded.error().message;
  }

  TempTree tree_;
  std::filesystem::path file_ = tree_.Path("eval-history.sqlite");
};

TEST_F(HistoryTest, LastBaselineIsTheNewestOtherRunOfTheSuite) {
  auto history = OpenHistory();
  Record(*history, Summary("r1", "2025-01-01T02:00:00Z"), {PassRecord("extract", "c1")});
  Record(*history, Summary("r2", "2025-01-02T02:00:00Z"), {FailRecord("extract", "c1")});
  Record(*history, Summary("o1", "2025-01-03T02:00:00Z", "other"));

  auto from_newer = history->LoadBaseline("nightly", "last", "r2");
  ASSERT_TRUE(from_newer.has_value()) << from_newer.error().message;
  ASSERT_TRUE(from_newer->has_value());
  EXPECT_EQ((*from_newer)->run_id, "r1");
  EXPECT_EQ((*from_newer)->started_at, "2025-01-01T02:00:00Z");
  EXPECT_EQ((*from_newer)->summary.ToJson(), RunSummary::FromJson(Summary("r1", "2025-01-01T02:00:00Z")).ToJson());
  EXPECT_EQ((*from_newer)->outcomes, (std::map<std::string, CaseOutcome>{{"extract/c1", CaseOutcome::kPass}}));

  // "Other" means any other run, even one that started later.
  auto from_older = history->LoadBaseline("nightly", "last", "r1");
  ASSERT_TRUE(from_older.has_value() && from_older->has_value());
  EXPECT_EQ((*from_older)->run_id, "r2");
}

TEST_F(HistoryTest, FirstRunOfASuiteHasNoLastBaseline) {
  auto history = OpenHistory();
  Record(*history, Summary("r1", "2025-01-01T02:00:00Z"));
  auto baseline = history->LoadBaseline("nightly", "last", "r1");
  ASSERT_TRUE(baseline.has_value()) << baseline.error().message;
  EXPECT_FALSE(baseline->has_value());
}

TEST_F(HistoryTest, ExplicitRunIdLoadsThatRun) {
  auto history = OpenHistory();
  Record(*history, Summary("r1", "2025-01-01T02:00:00Z", "nightly", 0.5));
  Record(*history, Summary("r2", "2025-01-02T02:00:00Z"));
  Record(*history, Summary("r3", "2025-01-03T02:00:00Z"));
  auto baseline = history->LoadBaseline("nightly", "r1", "r3");
  ASSERT_TRUE(baseline.has_value() && baseline->has_value());
  EXPECT_EQ((*baseline)->run_id, "r1");
  EXPECT_EQ((*baseline)->summary.Skill("extract")->rubric_pass_rate, 0.5);
}

TEST_F(HistoryTest, UnknownExplicitRunIdIsAnErrorThatNamesIt) {
  auto history = OpenHistory();
  Record(*history, Summary("r1", "2025-01-01T02:00:00Z"));
  auto baseline = history->LoadBaseline("nightly", "2024-12-31-nope", "r1");
  ASSERT_FALSE(baseline.has_value());
  EXPECT_EQ(baseline.error().code, ErrorCode::kConfigInvalid);  // the user named that run
  EXPECT_EQ(baseline.error().message, "baseline run 2024-12-31-nope is not in the eval history " + file_.string());
}

TEST_F(HistoryTest, ExplicitRunIdOfAnotherSuiteIsAnError) {
  auto history = OpenHistory();
  Record(*history, Summary("o1", "2025-01-01T02:00:00Z", "other"));
  auto baseline = history->LoadBaseline("nightly", "o1", "r9");
  ASSERT_FALSE(baseline.has_value());
  EXPECT_EQ(baseline.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(baseline.error().message, "baseline run o1 belongs to suite other, not nightly");
}

TEST_F(HistoryTest, TrendReturnsTheNewestRunsOldestFirst) {
  auto history = OpenHistory();
  // Recorded out of order: the trend follows started_at, not insertion.
  Record(*history, Summary("r3", "2025-01-03T02:00:00Z"));
  Record(*history, Summary("r1", "2025-01-01T02:00:00Z"));
  Record(*history, Summary("r4", "2025-01-04T02:00:00Z"));
  Record(*history, Summary("r2", "2025-01-02T02:00:00Z"));
  Record(*history, Summary("o1", "2025-01-05T02:00:00Z", "other"));

  auto trend = history->Trend("nightly", 3);
  ASSERT_TRUE(trend.has_value()) << trend.error().message;
  std::vector<std::string> ids;
  for (const TrendPoint& point : *trend) ids.push_back(point.run_id);
  EXPECT_EQ(ids, (std::vector<std::string>{"r2", "r3", "r4"}));
  EXPECT_EQ(trend->front().started_at, "2025-01-02T02:00:00Z");
  // The summary as recorded, read back as the type.
  EXPECT_EQ(trend->front().summary.ToJson(), RunSummary::FromJson(Summary("r2", "2025-01-02T02:00:00Z")).ToJson());
  EXPECT_EQ(trend->front().summary.Skill("extract")->rubric_pass_rate, 0.9);

  auto all = history->Trend("nightly", 100);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->size(), 4u);
  EXPECT_TRUE(history->Trend("absent", 10)->empty());
}

TEST_F(HistoryTest, RecordingARunIdAgainReplacesIt) {
  auto history = OpenHistory();
  Record(*history, Summary("r1", "2025-01-01T02:00:00Z", "nightly", 1.0),
         {PassRecord("extract", "c1"), PassRecord("extract", "c2")});
  // A resumed run records the same id again, now with more cases.
  Record(*history, Summary("r1", "2025-01-01T02:00:00Z", "nightly", 0.5),
         {FailRecord("extract", "c1"), PassRecord("extract", "c3")});

  auto baseline = history->LoadBaseline("nightly", "r1", "r2");
  ASSERT_TRUE(baseline.has_value() && baseline->has_value());
  EXPECT_EQ((*baseline)->summary.Skill("extract")->rubric_pass_rate, 0.5);
  EXPECT_EQ((*baseline)->outcomes, (std::map<std::string, CaseOutcome>{{"extract/c1", CaseOutcome::kFail},
                                                                       {"extract/c3", CaseOutcome::kPass}}));
  EXPECT_EQ(history->Trend("nightly", 10)->size(), 1u);
}

TEST_F(HistoryTest, OutcomesAreKeyedLikeCaseKeyWithRepeats) {
  auto history = OpenHistory();
  Record(*history, Summary("r1", "2025-01-01T02:00:00Z"),
         {PassRecord("extract", "c1", 1), FailRecord("extract", "c1", 2), ErrorRecord("extract", "dir/c2"),
          JudgeErrorRecord("summarise", "c1")});
  auto baseline = history->LoadBaseline("nightly", "last", "r2");
  ASSERT_TRUE(baseline.has_value() && baseline->has_value());
  EXPECT_EQ((*baseline)->outcomes, (std::map<std::string, CaseOutcome>{{"extract/c1#1", CaseOutcome::kPass},
                                                                       {"extract/c1#2", CaseOutcome::kFail},
                                                                       {"extract/dir/c2", CaseOutcome::kError},
                                                                       {"summarise/c1", CaseOutcome::kJudgeError}}));
  EXPECT_EQ(CaseKey(PassRecord("extract", "c1", 2)), "extract/c1#2");
}

// design.md §10.1: each gate of a case comes back, the skill's own review gate
// (its verdict on the result) and the case's own checks included.
TEST_F(HistoryTest, EveryGateOfACaseIsKeptTheReviewGateIncluded) {
  auto history = OpenHistory();
  json::object gated = PassRecord("extract", "c1");
  gated["result"].as_object()["review"] = json::object{{"pass", false}};
  gated["expected_match"] = true;
  gated["check_pass"] = true;
  json::object checked = FailRecord("extract", "c2");
  checked["check_pass"] = false;
  Record(*history, Summary("r1", "2025-01-01T02:00:00Z"), {gated, checked, PassRecord("extract", "c3")});
  auto baseline = history->LoadBaseline("nightly", "last", "r2");
  ASSERT_TRUE(baseline.has_value() && baseline->has_value());
  const CaseGates& c1 = (*baseline)->gates.at("extract/c1");
  EXPECT_EQ(c1.schema, true);
  EXPECT_EQ(c1.expected, true);
  EXPECT_EQ(c1.rubric, true);
  EXPECT_EQ(c1.review_gate, false);
  EXPECT_EQ(c1.checks, true);
  const CaseGates& c2 = (*baseline)->gates.at("extract/c2");
  EXPECT_EQ(c2.rubric, false);
  EXPECT_EQ(c2.review_gate, std::nullopt);
  EXPECT_EQ(c2.checks, false);
  EXPECT_EQ((*baseline)->gates.at("extract/c3").checks, std::nullopt);  // a case without checks
}

TEST_F(HistoryTest, FolderThatDoesNotExistIsAClearError) {
  std::filesystem::path file = tree_.Path("no/such/folder/eval-history.sqlite");
  auto history = History::Open(file);
  ASSERT_FALSE(history.has_value());
  EXPECT_EQ(history.error().code, ErrorCode::kConfigInvalid);  // --history names a folder that is not there
  EXPECT_EQ(history.error().message, "cannot open eval history " + file.string() + ": folder " +
                                         tree_.Path("no/such/folder").string() + " does not exist");
}

TEST_F(HistoryTest, SummaryWithoutRunIdIsRefused) {
  auto history = OpenHistory();
  auto recorded = history->RecordRun(eval::RunSummary::FromJson(ParseObject(R"({"suite": "nightly"})")), {});
  ASSERT_FALSE(recorded.has_value());
  EXPECT_EQ(recorded.error().code, ErrorCode::kInternal);
  EXPECT_EQ(recorded.error().message,
            "cannot record run in " + file_.string() + ": the summary has no \"run_id\" or no \"suite\"");
}

// Reads the file with Python's own sqlite3 module: the tables and columns are
// what design.md §6.3 and §10.6 promise, in WAL mode, at schema version 4.
TEST_F(HistoryTest, FileHoldsRunsOutcomesAndVerdictsInWalMode) {
  {
    auto history = OpenHistory();
    json::object priced = FailRecord("extract", "c2", 3);
    priced["result"].as_object()["metrics"].as_object()["cost_usd"] = 0.00125;
    priced["judge_usage"] = json::object{{"input_tokens", 50}, {"output_tokens", 5}, {"cost_usd", 0.00025}};
    Record(*history, Summary("r1", "2025-01-01T02:00:00Z"), {PassRecord("extract", "c1"), priced});
  }
  std::string output = testing::RunPython(tree_, R"(
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("pragma journal_mode").fetchone()[0], db.execute("pragma user_version").fetchone()[0])
print(db.execute("select run_id, suite, started_at, status from runs").fetchall())
print(db.execute('select skill, case_id, "repeat", outcome, duration_ms, input_tokens, output_tokens, cost_usd from case_outcomes order by case_id').fetchall())
print(db.execute('select case_id, "repeat", criterion_id, verdict from criterion_verdicts order by case_id, criterion_id').fetchall())
)",
                                          file_);
  EXPECT_EQ(output,
            "wal 7\n"
            "[('r1', 'nightly', '2025-01-01T02:00:00Z', 'pass')]\n"
            "[('extract', 'c1', 0, 'pass', 300, 100, 20, None), ('extract', 'c2', 3, 'fail', 300, 100, 20, 0.0015)]\n"
            "[('c1', 0, 'complete', 'pass'), ('c1', 0, 'faithful', 'pass'), "
            "('c2', 3, 'complete', 'indeterminate'), ('c2', 3, 'faithful', 'fail')]\n");
}

TEST_F(HistoryTest, SchemaNewerThanTheProgramIsRefused) {
  { OpenHistory(); }
  testing::RunPython(tree_, "import sqlite3, sys\nsqlite3.connect(sys.argv[1]).execute('pragma user_version = 8')\n",
                     file_);
  auto history = History::Open(file_);
  ASSERT_FALSE(history.has_value());
  EXPECT_EQ(history.error().code, ErrorCode::kInternal);
  EXPECT_EQ(history.error().message, "cannot open eval history " + file_.string() +
                                         ": schema version 8 is newer than this skillrunner understands (7)");
}

// A file an older skillrunner wrote (schema version 1) gains the cost column
// and keeps its rows; their cost is unknown (NULL).
TEST_F(HistoryTest, AVersionOneFileIsMigratedAndKeepsItsRows) {
  testing::RunPython(tree_, R"(
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""
CREATE TABLE runs (run_id TEXT PRIMARY KEY NOT NULL, suite TEXT NOT NULL, started_at TEXT, finished_at TEXT,
                   summary TEXT NOT NULL, status TEXT);
CREATE TABLE case_outcomes (run_id TEXT NOT NULL, skill TEXT NOT NULL, case_id TEXT NOT NULL,
  "repeat" INTEGER NOT NULL, outcome TEXT NOT NULL, duration_ms INTEGER, input_tokens INTEGER,
  output_tokens INTEGER, PRIMARY KEY (run_id, skill, case_id, "repeat"));
CREATE TABLE criterion_verdicts (run_id TEXT NOT NULL, skill TEXT NOT NULL, case_id TEXT NOT NULL,
  "repeat" INTEGER NOT NULL, criterion_id TEXT NOT NULL, verdict TEXT NOT NULL,
  PRIMARY KEY (run_id, skill, case_id, "repeat", criterion_id));
INSERT INTO case_outcomes VALUES ('r0', 'extract', 'c1', 0, 'pass', 10, 1, 2);
PRAGMA user_version = 1;
""")
)",
                     file_);
  {
    auto history = OpenHistory();
    Record(*history, Summary("r1", "2025-01-01T02:00:00Z"), {PassRecord("extract", "c1")});
  }
  std::string output = testing::RunPython(tree_, R"(
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("pragma user_version").fetchone()[0])
print(db.execute('select run_id, case_id, cost_usd from case_outcomes order by run_id').fetchall())
)",
                                          file_);
  EXPECT_EQ(output, "7\n[('r0', 'c1', None), ('r1', 'c1', None)]\n");
}

// design.md §10.6: each batch id of a run is recorded as its batch is created
// (once, however often it is recorded), read back by run, kept when the
// finished run is recorded over it; a version-3 file gains the table.
TEST_F(HistoryTest, BatchIdsAreRecordedOnceAndReadBackByRun) {
  { OpenHistory(); }
  testing::RunPython(
      tree_,
      "import sqlite3, sys\ndb = sqlite3.connect(sys.argv[1])\n"
      "db.executescript('DROP TABLE batches; DROP TABLE pins; DROP TABLE case_records; DROP TABLE run_measures; "
      "ALTER TABLE runs DROP COLUMN git_ref; ALTER TABLE runs DROP COLUMN models; "
      "ALTER TABLE case_outcomes DROP COLUMN check_ok; PRAGMA user_version = 3;')\n",
      file_);
  auto history = History::Open(file_);
  ASSERT_TRUE(history.has_value()) << history.error().message;
  const HistoryBatch first{"llm", 1, "msgbatch_1", false, "2026-01-01T00:00:01Z"};
  const HistoryBatch adopted{"llm", 2, "msgbatch_2", true, "2026-01-01T00:00:02Z"};
  ASSERT_TRUE((*history)->RecordBatch("r1", adopted).has_value());
  ASSERT_TRUE((*history)->RecordBatch("r1", first).has_value());
  ASSERT_TRUE((*history)->RecordBatch("r1", first).has_value());
  ASSERT_TRUE((*history)->RecordBatch("r2", HistoryBatch{"g", 1, "batches/9", false, "x"}).has_value());
  Record(**history, Summary("r1", "2025-01-01T02:00:00Z"), {PassRecord("extract", "c1")});
  auto batches = (*history)->Batches("r1");
  ASSERT_TRUE(batches.has_value()) << batches.error().message;
  EXPECT_EQ(*batches, (std::vector<HistoryBatch>{first, adopted}));
  EXPECT_TRUE((*history)->Batches("r3")->empty());
  history->reset();
  EXPECT_EQ(
      testing::RunPython(tree_, R"(
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("pragma user_version").fetchone()[0])
print(db.execute("select run_id, provider, round, batch_id, adopted from batches order by run_id, round").fetchall())
)",
                         file_),
      "7\n[('r1', 'llm', 1, 'msgbatch_1', 0), ('r1', 'llm', 2, 'msgbatch_2', 1), ('r2', 'g', 1, 'batches/9', 0)]\n");
}

// Shards on one machine write the same file at once; WAL and the busy
// timeout make them wait for each other instead of failing.
TEST_F(HistoryTest, TwoWritersOnOneFileBothSucceed) {
  { OpenHistory(); }
  auto writer = [&](std::string prefix, std::vector<std::string>* errors) {
    auto history = History::Open(file_);
    if (!history) return errors->push_back(history.error().message);
    for (int i = 0; i < 20; ++i) {
      std::string id = prefix + std::to_string(i);
      auto recorded = (*history)->RecordRun(
          eval::RunSummary::FromJson(Summary(id, "2025-01-01T00:00:" + std::to_string(10 + i) + "Z")),
          {PassRecord("extract", "c1"), FailRecord("extract", "c2")});
      if (!recorded) errors->push_back(recorded.error().message);
    }
  };
  std::vector<std::string> errors_a, errors_b;
  std::thread a(writer, "a", &errors_a);
  std::thread b(writer, "b", &errors_b);
  a.join();
  b.join();
  EXPECT_TRUE(errors_a.empty()) << errors_a.front();
  EXPECT_TRUE(errors_b.empty()) << errors_b.front();
  auto history = OpenHistory();
  EXPECT_EQ(history->Trend("nightly", 100)->size(), 40u);
}

}  // namespace
}  // namespace skillrunner::eval
