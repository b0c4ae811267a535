// design.md §11.3: the history in SQLite (a file, the default) and in PostgreSQL (a URL) is the
// same history: the same migrations, the same rows, the same answers. Every test here runs on
// both; the PostgreSQL ones (".../Postgres") on the cluster ctest starts for the run.
#include <gtest/gtest.h>

#include "runner/eval/history/history.h"
#include "runner/eval/history/history_reader.h"
#include "runner/eval/history/rollout_log.h"
#include "tests/runner/eval/report_test_records.h"
#include "tests/support/postgres_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;
using testing::FailRecord;
using testing::PassRecord;

json::object Summary(std::string_view run_id, std::string_view started_at) {
  return json::object{{"run_id", run_id},          {"suite", "nightly"}, {"started_at", started_at},
                      {"finished_at", started_at}, {"status", "pass"},   {"breaches", json::array()},
                      {"git_ref", "abc"}};
}

class HistoryDialectTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() == "sqlite") {
      location_ = tree_.Path("eval-history.sqlite").string();
      return;
    }
    const auto& pg = test_support::PostgresCluster::Shared();
    SKILLRUNNER_NEED_POSTGRES(pg);
    location_ = pg.NewDatabase(::testing::UnitTest::GetInstance()->current_test_info()->name());
  }

  std::unique_ptr<History> Open() {
    auto history = History::Open(location_);
    EXPECT_TRUE(history.has_value()) << history.error().message;
    return history ? std::move(*history) : nullptr;
  }

  testing::TempTree tree_;
  std::string location_;
};

TEST_P(HistoryDialectTest, MigrationsMakeTheSchemaOnceAndAgainChangeNothing) {
  ASSERT_NE(Open(), nullptr);
  auto again = Open();
  ASSERT_NE(again, nullptr);
  auto recorded = again->RecordRun(eval::RunSummary::FromJson(Summary("r1", "2025-01-01T02:00:00Z")),
                                   {PassRecord("extract", "c1")});
  ASSERT_TRUE(recorded.has_value()) << recorded.error().message;
  auto reader = HistoryReader::Open(location_);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  auto measures = (*reader)->RunMeasures("r1");
  ASSERT_TRUE(measures.has_value()) << measures.error().message;
  EXPECT_EQ(measures->front(), (MeasureCount{"extract", "schema", 1, 1}));
}

TEST_P(HistoryDialectTest, BaselinesPinsTrendsAndBatchesReadBackWhatWasWritten) {
  auto history = Open();
  ASSERT_NE(history, nullptr);
  ASSERT_TRUE(history
                  ->RecordRun(eval::RunSummary::FromJson(Summary("r1", "2025-01-01T02:00:00Z")),
                              {PassRecord("extract", "c1", 2)})
                  .has_value());
  ASSERT_TRUE(history
                  ->RecordRun(eval::RunSummary::FromJson(Summary("r2", "2025-01-02T02:00:00Z")),
                              {FailRecord("extract", "c1", 2)})
                  .has_value());
  // Recording a run id again replaces it.
  ASSERT_TRUE(history
                  ->RecordRun(eval::RunSummary::FromJson(Summary("r2", "2025-01-02T02:00:00Z")),
                              {FailRecord("extract", "c1", 2)})
                  .has_value());
  auto last = history->LoadBaseline("nightly", "last", "r2");
  ASSERT_TRUE(last.has_value() && last->has_value()) << (last ? "" : last.error().message);
  EXPECT_EQ((*last)->run_id, "r1");
  EXPECT_EQ((*last)->outcomes, (std::map<std::string, CaseOutcome>{{"extract/c1#2", CaseOutcome::kPass}}));
  EXPECT_EQ((*last)->verdicts.at("extract/c1#2").at("faithful"), "pass");
  auto pinned = history->Pin("r2");
  ASSERT_TRUE(pinned.has_value()) << pinned.error().message;
  EXPECT_EQ(*pinned, "nightly");
  auto from_pin = history->LoadBaseline("nightly", "pinned", "r3");
  ASSERT_TRUE(from_pin.has_value() && from_pin->has_value());
  EXPECT_EQ((*from_pin)->run_id, "r2");
  auto trend = history->Trend("nightly", 10);
  ASSERT_TRUE(trend.has_value());
  ASSERT_EQ(trend->size(), 2u);
  EXPECT_EQ(trend->back().summary.git_ref, "abc");
  HistoryBatch batch{"openai", 1, "batch_1", false, "2025-01-02T02:00:00Z"};
  ASSERT_TRUE(history->RecordBatch("r2", batch).has_value());
  ASSERT_TRUE(history->RecordBatch("r2", batch).has_value());
  auto batches = history->Batches("r2");
  ASSERT_TRUE(batches.has_value());
  EXPECT_EQ(*batches, std::vector<HistoryBatch>{batch});
  auto missing = history->LoadBaseline("nightly", "nope", "r2");
  ASSERT_FALSE(missing.has_value());
  EXPECT_EQ(missing.error().message, "baseline run nope is not in the eval history " + history->name());
}

TEST_P(HistoryDialectTest, TheViewersReaderSeesRunsRecordsAndCasesAcrossRuns) {
  auto history = Open();
  ASSERT_NE(history, nullptr);
  ASSERT_TRUE(
      history
          ->RecordRun(eval::RunSummary::FromJson(Summary("r1", "2025-01-01T02:00:00Z")), {PassRecord("extract", "c1")})
          .has_value());
  ASSERT_TRUE(
      history
          ->RecordRun(eval::RunSummary::FromJson(Summary("r2", "2025-01-02T02:00:00Z")), {FailRecord("extract", "c1")})
          .has_value());
  auto reader = HistoryReader::Open(location_);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  auto suites = (*reader)->Suites();
  ASSERT_TRUE(suites.has_value()) << suites.error().message;
  ASSERT_EQ(suites->size(), 1u);
  EXPECT_EQ(suites->front().runs, 2);
  EXPECT_EQ(suites->front().last.run_id, "r2");
  EXPECT_EQ(suites->front().last.git_ref, "abc");
  auto records = (*reader)->Records("r2");
  ASSERT_TRUE(records.has_value());
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ(records->front(), FailRecord("extract", "c1"));
  auto across = (*reader)->CaseAcrossRuns("nightly", "extract", "c1", 0, 10);
  ASSERT_TRUE(across.has_value()) << across.error().message;
  ASSERT_EQ(across->size(), 2u);
  EXPECT_EQ(across->front().run_id, "r1");
  auto previous = (*reader)->Previous(suites->front().last);
  ASSERT_TRUE(previous.has_value() && previous->has_value());
  EXPECT_EQ((*previous)->run_id, "r1");
}

// serve's rollout log: what its thread writes (every item, once it is closed) the reader reads back.
TEST_P(HistoryDialectTest, ARolloutsPointsAndSamplesAreWrittenByTheLogAndReadBack) {
  {
    auto log = RolloutLog::Open(location_);
    ASSERT_TRUE(log.has_value()) << log.error().message;
    for (int i = 0; i < 3; ++i) {
      json::object status{
          {"tallies", json::array{json::object{{"measure", "ok"},
                                               {"stable", json::object{{"n", 10 * i}, {"successes", 9 * i}}},
                                               {"candidate", json::object{{"n", i}, {"successes", i}}}}}}};
      (*log)->Add(RolloutPoint{"greet@1..2/sha256:ab", "greet", 1, 2, "2025-01-01T02:00:0" + std::to_string(i) + "Z",
                               i == 2 ? "decision" : "snapshot", "host:1", i == 2 ? "rolled_back" : "running", 0.1,
                               i == 2 ? "worse" : "", 0.05, 0.05, status});
    }
    for (bool pass : {true, false, true}) {
      (*log)->Add(RolloutSample{"greet@1..2/sha256:ab", "greet", "candidate", 2, "2025-01-01T02:00:01Z", "host:1", pass,
                                json::object{{"input", json::object{}}, {"output", "x"}, {"review", nullptr}}});
    }
  }
  auto reader = HistoryReader::Open(location_);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  auto points = (*reader)->RolloutPoints(2);
  ASSERT_TRUE(points.has_value()) << points.error().message;
  ASSERT_EQ(points->size(), 2u);  // the newest two, oldest first
  EXPECT_EQ(points->front().at, "2025-01-01T02:00:01Z");
  EXPECT_EQ(points->back().state, "rolled_back");
  EXPECT_EQ(points->back().status.at("tallies").at(0).at("stable").at("n"), 20);
  auto samples = (*reader)->RolloutSamples();
  ASSERT_TRUE(samples.has_value()) << samples.error().message;
  ASSERT_EQ(samples->size(), 1u);
  EXPECT_EQ(samples->front().arm, "candidate");
  EXPECT_EQ(samples->front().judged, 3);
  EXPECT_EQ(samples->front().passed, 2);
}

std::string DialectName(const ::testing::TestParamInfo<std::string>& info) {
  return info.param == "sqlite" ? "Sqlite" : "Postgres";
}

INSTANTIATE_TEST_SUITE_P(Dialects, HistoryDialectTest, ::testing::Values("sqlite", "postgres"), DialectName);

TEST(HistoryPostgresUrlTest, AUrlWithAPasswordIsRefusedWithThePasswordHidden) {
  auto history = History::Open("postgresql://eval:hunter2@db.example/history");
  ASSERT_FALSE(history.has_value());
  EXPECT_EQ(history.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(history.error().message,
            "cannot open eval history postgresql://eval:***@db.example/history: the history URL "
            "postgresql://eval:***@db.example/history holds a password: give it through PGPASSWORD or PGPASSFILE "
            "instead (a URL is shown in messages and logs)");
}

}  // namespace
}  // namespace skillrunner::eval
