// design.md §11.3: the 1,000 x 1,000 history is a benchmark (bench/view_bench.cpp); CI
// checks a 20 x 200 one: every page's answer is there and holds to its schema.
#include <gtest/gtest.h>

#include "runner/eval/history/history_reader.h"
#include "runner/view/view_api.h"
#include "tests/docs/protocol_schemas.h"
#include "tests/support/history_fixture.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::view {
namespace {
namespace json = boost::json;

TEST(ViewHistorySmokeTest, EveryPageOfATwentyRunHistoryAnswers) {
  testing::TempTree tree;
  const auto file = tree.Path("eval-history.sqlite");
  ASSERT_EQ(test_support::GenerateHistory(file, {20, 200, 7, "nightly"}), "");
  auto reader = eval::HistoryReader::Open(file);
  ASSERT_TRUE(reader.has_value()) << reader.error().message;
  ViewApi api(**reader);

  ApiAnswer suites = api.Get({"suites"}, {});
  ASSERT_EQ(suites.status, 200);
  EXPECT_EQ(suites.body.at("suites").at(0).at("runs"), 20);
  ApiAnswer suite = api.Get({"suites", "nightly"}, {});
  ASSERT_EQ(suite.status, 200);
  EXPECT_EQ(suite.body.at("runs").as_array().size(), 20u);
  EXPECT_EQ(testing::SchemaViolations("view/suite.schema.json", suite.body), "");
  // Three skills, each with schema, outcome, rubric and two criteria.
  EXPECT_EQ(suite.body.at("series").as_array().size(), 15u);

  const std::string last = test_support::GeneratedRunId(19);
  ApiAnswer run = api.Get({"runs", last}, {});
  ASSERT_EQ(run.status, 200);
  EXPECT_EQ(run.body.at("cases").as_array().size(), 200u);
  EXPECT_EQ(testing::SchemaViolations("view/run.schema.json", run.body), "");
  ApiAnswer compare = api.Get({"compare"}, {{"a", last}});
  ASSERT_EQ(compare.status, 200);
  EXPECT_EQ(compare.body.at("b").at("run_id"), json::value(test_support::GeneratedRunId(18)));
  EXPECT_FALSE(compare.body.at("flips").as_array().empty());
  EXPECT_EQ(testing::SchemaViolations("view/compare.schema.json", compare.body), "");
  ApiAnswer across = api.Get({"cases"}, {{"suite", "nightly"}, {"skill", "extract_contact"}, {"case", "case-0"}});
  ASSERT_EQ(across.status, 200);
  EXPECT_EQ(across.body.at("runs").as_array().size(), 20u);
  ApiAnswer one = api.Get({"runs", last, "case"}, {{"skill", "triage_ticket"}, {"case", "case-1"}});
  ASSERT_EQ(one.status, 200);
  EXPECT_EQ(one.body.at("record").at("case"), "case-1");
}

}  // namespace
}  // namespace skillrunner::view
