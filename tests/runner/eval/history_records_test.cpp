// design.md §11.3: schema 6 keeps what the viewer reads: each case's whole
// record (long texts capped), each run's measures, its commit and models; and
// HistoryReader opens a history read-only, never changing or migrating it.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "runner/eval/history/history.h"
#include "runner/eval/history/history_reader.h"
#include "tests/runner/eval/report_test_records.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;
using namespace testing;

json::object Summary(std::string_view run_id, std::string_view started_at) {
  return json::object{{"run_id", run_id},          {"suite", "nightly"}, {"started_at", started_at},
                      {"finished_at", started_at}, {"status", "pass"},   {"breaches", json::array()},
                      {"git_ref", "4f2c9e1"}};
}

std::string FileBytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class HistoryRecordsTest : public ::testing::Test {
 protected:
  void RecordRun(const json::object& summary, const std::vector<json::object>& records) {
    auto history = History::Open(file_);
    ASSERT_TRUE(history.has_value()) << history.error().message;
    auto recorded = (*history)->RecordRun(eval::RunSummary::FromJson(summary), records);
    ASSERT_TRUE(recorded.has_value()) << recorded.error().message;
  }
  std::unique_ptr<HistoryReader> Reader() {
    auto reader = HistoryReader::Open(file_);
    EXPECT_TRUE(reader.has_value()) << reader.error().message;
    return reader ? std::move(*reader) : nullptr;
  }

  TempTree tree_;
  std::filesystem::path file_ = tree_.Path("eval-history.sqlite");
};

TEST_F(HistoryRecordsTest, ARunKeepsItsRecordsMeasuresCommitAndModels) {
  json::object pass = PassRecord("extract", "c1");
  pass["result"].as_object()["metrics"].as_object()["model"] = "gpt-4o-mini";
  RecordRun(Summary("r1", "2025-01-01T02:00:00Z"),
            {pass, FailRecord("extract", "c2", 2), ErrorRecord("extract", "c3")});
  std::string output = RunPython(tree_, R"(
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
print(db.execute("select run_id, git_ref, models from runs").fetchall())
print(db.execute('select skill, measure, successes, n from run_measures order by rowid').fetchall())
print(db.execute("""select case_id, "repeat", json_extract(record, '$.review.pass') from case_records order by case_id""").fetchall())
)",
                                 file_);
  EXPECT_EQ(output,
            "[('r1', '4f2c9e1', '[\"gpt-4o-mini\"]')]\n"
            "[('extract', 'schema', 2, 3), ('extract', 'outcome', 1, 3), ('extract', 'rubric', 1, 2), "
            "('extract', 'criterion:complete', 1, 1), ('extract', 'criterion:faithful', 1, 2)]\n"
            "[('c1', 0, 1), ('c2', 2, 0), ('c3', 0, None)]\n");

  auto reader = Reader();
  ASSERT_NE(reader, nullptr);
  auto record = reader->Record("r1", "extract", "c1", 0);
  ASSERT_TRUE(record.has_value() && record->has_value());
  EXPECT_EQ(**record, pass);
  auto run = reader->Run("r1");
  ASSERT_TRUE(run.has_value() && run->has_value());
  EXPECT_EQ((*run)->git_ref, "4f2c9e1");
  EXPECT_EQ((*run)->models, std::vector<std::string>{"gpt-4o-mini"});
}

TEST_F(HistoryRecordsTest, ATextOver64KiBIsCutAndSaysHowLongItWas) {
  json::object record = PassRecord("extract", "long");
  const std::string raw(70'000, 'x');
  record["result"].as_object()["attempts"].as_array()[0].as_object()["raw"] = raw;
  RecordRun(Summary("r1", "2025-01-01T02:00:00Z"), {record});
  auto stored = Reader()->Record("r1", "extract", "long", 0);
  ASSERT_TRUE(stored.has_value() && stored->has_value());
  const json::value& cut = (**stored).at("result").at("attempts").at(0).at("raw");
  EXPECT_EQ(cut.as_string(), std::string(65'536, 'x') + " [cut: 70000 bytes in all]");
  EXPECT_EQ((**stored).at("result").at("output"), record.at("result").at("output"));
}

TEST_F(HistoryRecordsTest, ReadingNeverChangesTheFile) {
  RecordRun(Summary("r1", "2025-01-01T02:00:00Z"), {PassRecord("extract", "c1")});
  RecordRun(Summary("r2", "2025-01-02T02:00:00Z"), {FailRecord("extract", "c1")});
  // Checkpointed and closed by the writer: the file alone holds the history.
  const std::string before = FileBytes(file_);
  {
    auto reader = Reader();
    ASSERT_NE(reader, nullptr);
    auto runs = reader->Runs("nightly", 10);
    ASSERT_TRUE(runs.has_value());
    ASSERT_EQ(runs->size(), 2u);
    EXPECT_EQ(runs->front().run_id, "r1");
    auto previous = reader->Previous(runs->back());
    ASSERT_TRUE(previous.has_value() && previous->has_value());
    EXPECT_EQ((*previous)->run_id, "r1");
    auto across = reader->CaseAcrossRuns("nightly", "extract", "c1", 0, 10);
    ASSERT_TRUE(across.has_value());
    ASSERT_EQ(across->size(), 2u);
    EXPECT_EQ(across->back().run_id, "r2");
  }
  EXPECT_EQ(FileBytes(file_), before);
}

TEST_F(HistoryRecordsTest, AnOlderHistoryIsNotUpgradedByReadingIt) {
  RunPython(tree_, "import sqlite3, sys\nsqlite3.connect(sys.argv[1]).execute('pragma user_version = 5')\n", file_);
  auto reader = HistoryReader::Open(file_);
  ASSERT_FALSE(reader.has_value());
  EXPECT_EQ(reader.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(reader.error().message,
            "cannot open eval history " + file_.string() +
                ": it was written by an older skillrunner (schema 5); view opens a history read-only and never "
                "upgrades it: record one run into it first (skillrunner eval SUITE --history " +
                file_.string() + ")");
  EXPECT_EQ(
      RunPython(
          tree_,
          "import sqlite3, sys\nprint(sqlite3.connect(sys.argv[1]).execute('pragma user_version').fetchone()[0])\n",
          file_),
      "5\n");
}

TEST_F(HistoryRecordsTest, AMissingHistoryIsNamed) {
  auto reader = HistoryReader::Open(tree_.Path("nope.sqlite"));
  ASSERT_FALSE(reader.has_value());
  EXPECT_EQ(reader.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(reader.error().message,
            "cannot open eval history " + tree_.Path("nope.sqlite").string() + ": no such file");
  EXPECT_FALSE(std::filesystem::exists(tree_.Path("nope.sqlite")));
}

}  // namespace
}  // namespace skillrunner::eval
