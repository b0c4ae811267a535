// design.md §12.3: a case record is read by its keys in runner/eval/records only (CaseRecord's parse and
// serialize, record_fields.h's accessors); the run loop, the summary, the history, the reports and the
// viewer ask those. A run's summary likewise: RunSummary (runner/eval/records/run_summary.h) is its one
// parse and serialize, and no file outside records holds a summary as JSON or reads one by its keys. This test reads
// every source file of runner/eval (records excepted) and runner/view and names each line that reads or writes a
// record's member by its key, as those files used to: TextAt(&record, "case"), record.if_contains("review"),
// record["expected_match"] = ...
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

namespace skillrunner {
namespace {
namespace fs = std::filesystem;

// A record is named `record`, `r` or `stored` wherever these files hold one.
const std::regex kKeyRead(
    R"re((TextAt|ObjectAt|ArrayAt|NumberAt|IntAt)\(&(record|r|stored)\b, "|\b(record|r|stored)(\.|->)(if_contains|contains|at)\("|\brecord\[")re");

// A summary held as JSON (`json::object summary`), or read by its keys: summary.at("status"),
// TextAt(&summary, "run_id"), ObjectAt(&run.summary, "totals"), summary["baseline"].
const std::regex kSummaryRead(
    R"re(json::object&? summary\b|\bsummary(\.|->)(if_contains|contains|at)\("|\bsummary\["|At\(&?(\w+(\.|->))?summary\b, ")re");

std::vector<std::string> KeyReadsUnder(const fs::path& root, const fs::path& except,
                                       const std::regex& pattern = kKeyRead) {
  std::vector<std::string> found;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    const fs::path& file = entry.path();
    if (!entry.is_regular_file() || (file.extension() != ".cpp" && file.extension() != ".h")) continue;
    if (!except.empty() && file.lexically_relative(except).native().rfind("..", 0) != 0) continue;
    std::ifstream in(file);
    int number = 0;
    for (std::string line; std::getline(in, line);) {
      ++number;
      if (std::regex_search(line, pattern)) {
        found.push_back(file.lexically_relative(SKILLRUNNER_SOURCE_DIR).string() + ":" + std::to_string(number) + ": " +
                        line);
      }
    }
  }
  return found;
}

TEST(RecordKeysTest, NoFileOutsideRecordsReadsACaseRecordByItsKeys) {
  const fs::path source(SKILLRUNNER_SOURCE_DIR);
  std::vector<std::string> found = KeyReadsUnder(source / "runner" / "eval", source / "runner" / "eval" / "records");
  for (std::string& line : KeyReadsUnder(source / "runner" / "view", {})) found.push_back(std::move(line));
  EXPECT_EQ(found, std::vector<std::string>{}) << "read it through CaseRecord or record_fields.h instead";
}

TEST(RecordKeysTest, NoFileOutsideRecordsHoldsOrReadsASummaryAsJson) {
  const fs::path source(SKILLRUNNER_SOURCE_DIR);
  const fs::path records = source / "runner" / "eval" / "records";
  std::vector<std::string> found = KeyReadsUnder(source / "runner" / "eval", records, kSummaryRead);
  for (std::string& line : KeyReadsUnder(source / "runner" / "view", {}, kSummaryRead))
    found.push_back(std::move(line));
  EXPECT_EQ(found, std::vector<std::string>{}) << "read it through RunSummary instead";
  for (const char* line :
       {R"(  const json::object* totals = ObjectAt(&summary, "totals");)", R"(  summary["baseline"] = comparison;)",
        R"(std::string Header(const json::object& summary) {)", R"(  ArrayAt(&run.summary, "versions"))",
        R"(  for (const auto& b : summary.at("breaches").as_array()) {)"}) {
    EXPECT_TRUE(std::regex_search(line, kSummaryRead)) << line;
  }
  EXPECT_FALSE(std::regex_search(std::string(R"(  for (const Breach& breach : summary.breaches) {)"), kSummaryRead));
}

TEST(RecordKeysTest, TheCheckFindsTheFormsItLooksFor) {
  for (const char* line : {R"(  std::string id(TextAt(&record, "case"));)", R"(  if (record.contains("error")) {)",
                           R"(  const auto* review = r.if_contains("review");)", R"(  record["checks"] = verdicts;)",
                           R"(  stored->at("result"))"}) {
    EXPECT_TRUE(std::regex_search(line, kKeyRead)) << line;
  }
  EXPECT_FALSE(std::regex_search(std::string(R"(  std::string id(CaseIdOf(record));)"), kKeyRead));
}

}  // namespace
}  // namespace skillrunner
