// design.md §11.3: the viewer's JSON API over a history of two runs of a
// drifting suite (7 cases flip pass -> fail, 1 fail -> pass, of 20).
#include "runner/view/view_api.h"

#include <gtest/gtest.h>

#include "runner/eval/history/history.h"
#include "runner/view/json_diff.h"
#include "tests/docs/protocol_schemas.h"
#include "tests/runner/eval/report_test_records.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::view {
namespace {
namespace json = boost::json;
using testing::FailRecord;
using testing::ParseObject;
using testing::PassRecord;

json::object Summary(std::string_view run_id, std::string_view started_at, json::array breaches = {}) {
  return json::object{{"run_id", run_id},
                      {"suite", "nightly"},
                      {"started_at", started_at},
                      {"finished_at", started_at},
                      {"status", breaches.empty() ? "pass" : "breached"},
                      {"breaches", std::move(breaches)},
                      {"git_ref", std::string("ref-") + std::string(run_id)},
                      {"skills", json::object{{"extract", json::object{{"cases", 20}}}}},
                      {"totals", json::object{{"cases", 20}, {"cost_usd", nullptr}}}};
}

// Night one: c1..c19 pass, c20 fails. Night two: c1..c7 fail with another output, c20 passes.
std::vector<json::object> Night(int night) {
  std::vector<json::object> records;
  for (int i = 1; i <= 20; ++i) {
    const std::string id = "c" + std::to_string(i);
    const bool fails = night == 1 ? i == 20 : i <= 7;
    json::object record = fails ? FailRecord("extract", id) : PassRecord("extract", id);
    if (night == 2 && i <= 7) record["result"].as_object()["output"] = json::object{{"name", "Ada L."}};
    records.push_back(std::move(record));
  }
  return records;
}

class ViewApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto history = eval::History::Open(file_);
    ASSERT_TRUE(history.has_value()) << history.error().message;
    json::array breach{json::object{{"skill", "extract"},
                                    {"measure", "case_pass_rate"},
                                    {"kind", "regression"},
                                    {"message", "extract: case pass rate fell"}}};
    ASSERT_TRUE(
        (*history)->RecordRun(eval::RunSummary::FromJson(Summary("r1", "2025-01-01T02:00:00Z")), Night(1)).has_value());
    ASSERT_TRUE((*history)
                    ->RecordRun(eval::RunSummary::FromJson(Summary("r2", "2025-01-02T02:00:00Z", breach)), Night(2))
                    .has_value());
    auto reader = eval::HistoryReader::Open(file_);
    ASSERT_TRUE(reader.has_value()) << reader.error().message;
    reader_ = std::move(*reader);
    api_ = std::make_unique<ViewApi>(*reader_);
  }

  const json::object& Find(const json::array& items, std::string_view key, std::string_view value) {
    for (const json::value& item : items) {
      if (item.as_object().at(key) == json::value(json::string(value))) return item.as_object();
    }
    static const json::object none;
    ADD_FAILURE() << "no item with " << key << " = " << value;
    return none;
  }

  testing::TempTree tree_;
  std::filesystem::path file_ = tree_.Path("eval-history.sqlite");
  std::unique_ptr<eval::HistoryReader> reader_;
  std::unique_ptr<ViewApi> api_;
};

TEST_F(ViewApiTest, SuitesListEachSuiteWithItsNewestRun) {
  ApiAnswer answer = api_->Get({"suites"}, {});
  ASSERT_EQ(answer.status, 200) << json::serialize(answer.body);
  EXPECT_EQ(answer.body, ParseObject(R"({"history": ")" + file_.string() + R"(", "suites": [
    {"suite": "nightly", "runs": 2, "skills": ["extract"], "models": [],
     "last": {"run_id": "r2", "suite": "nightly", "started_at": "2025-01-02T02:00:00Z",
              "finished_at": "2025-01-02T02:00:00Z", "git_ref": "ref-r2", "status": "breached"}}]})"));
}

TEST_F(ViewApiTest, ASuitesTrendHasEachMeasureWithItsWilsonBandAndBreaches) {
  ApiAnswer answer = api_->Get({"suites", "nightly"}, {});
  ASSERT_EQ(answer.status, 200) << json::serialize(answer.body);
  const json::array& runs = answer.body.at("runs").as_array();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].at("run_id"), "r1");
  EXPECT_EQ(runs[1].at("breaches").as_array().size(), 1u);
  const json::array& series = answer.body.at("series").as_array();
  const json::object& outcome = Find(series, "measure", "outcome");
  EXPECT_EQ(outcome.at("label"), "case pass");
  EXPECT_EQ(outcome.at("points"), ParseObject(R"({"p": [
    {"successes": 19, "n": 20, "rate": 0.95, "low": 0.763869, "high": 0.991119, "run_id": "r1", "breached": false},
    {"successes": 13, "n": 20, "rate": 0.65, "low": 0.432854, "high": 0.818808, "run_id": "r2", "breached": true}]})")
                                      .at("p"));
  EXPECT_EQ(answer.body.at("git_refs"), json::array({"ref-r1", "ref-r2"}));

  // limit: the newest runs only.
  ApiAnswer newest = api_->Get({"suites", "nightly"}, {{"limit", "1"}});
  ASSERT_EQ(newest.status, 200);
  ASSERT_EQ(newest.body.at("runs").as_array().size(), 1u);
  EXPECT_EQ(newest.body.at("runs").at(0).at("run_id"), "r2");
  EXPECT_EQ(Find(newest.body.at("series").as_array(), "measure", "outcome").at("points").as_array().size(), 1u);

  ApiAnswer filtered = api_->Get({"suites", "nightly"}, {{"git_ref", "ref-r1"}});
  ASSERT_EQ(filtered.status, 200);
  EXPECT_EQ(filtered.body.at("runs").as_array().size(), 1u);
  EXPECT_EQ(Find(filtered.body.at("series").as_array(), "measure", "outcome").at("points").as_array().size(), 1u);
}

TEST_F(ViewApiTest, ARunFlagsItsFailedFlippedAndIndeterminateCases) {
  ApiAnswer answer = api_->Get({"runs", "r2"}, {});
  ASSERT_EQ(answer.status, 200) << json::serialize(answer.body);
  EXPECT_EQ(answer.body.at("run").at("baseline_run_id"), "r1");
  const json::array& cases = answer.body.at("cases").as_array();
  ASSERT_EQ(cases.size(), 20u);
  EXPECT_EQ(json::serialize(Find(cases, "case", "c1")),
            json::serialize(ParseObject(R"({"skill": "extract", "case": "c1", "repeat": 0,
    "outcome": "fail", "flags": ["failed", "flipped", "indeterminate"], "duration_ms": 300, "cost_usd": null,
    "error_code": null, "gates": [{"type": "REVIEW_FAILED",
    "message": "phone number invented; criterion faithful failed: the phone is not in the text"}]})")));
  EXPECT_EQ(Find(cases, "case", "c20").at("flags"), json::array({"flipped"}));
  EXPECT_EQ(Find(cases, "case", "c9").at("flags"), json::array());
}

TEST_F(ViewApiTest, CompareGivesPairedCountsMcNemarAndEachFlipSideBySide) {
  ApiAnswer answer = api_->Get({"compare"}, {{"a", "r2"}});
  ASSERT_EQ(answer.status, 200) << json::serialize(answer.body);
  EXPECT_EQ(answer.body.at("b").at("run_id"), "r1");
  const json::object& outcome = Find(answer.body.at("measures").as_array(), "measure", "outcome");
  EXPECT_EQ(outcome.at("cases"), 20);
  EXPECT_EQ(outcome.at("pass_to_fail"), 7);
  EXPECT_EQ(outcome.at("fail_to_pass"), 1);
  EXPECT_EQ(outcome.at("p_value"), 0.0703125);
  EXPECT_EQ(outcome.at("significant"), false);
  const json::array& flips = answer.body.at("flips").as_array();
  ASSERT_EQ(flips.size(), 8u);
  const json::object& c1 = Find(flips, "case", "c1");
  EXPECT_EQ(c1.at("direction"), "pass_to_fail");
  EXPECT_EQ(c1.at("from"), "pass");
  EXPECT_EQ(c1.at("to"), "fail");
  EXPECT_EQ(c1.at("a").at("output"), ParseObject(R"({"name": "Ada L."})"));
  EXPECT_EQ(c1.at("b").at("output"), ParseObject(R"({"name": "Ada"})"));
  EXPECT_EQ(c1.at("a").at("review").at("issues"), json::array({"phone number invented"}));
  EXPECT_EQ(c1.at("diff"), json::parse(R"([{"op": "changed", "pointer": "/name", "a": "Ada L.", "b": "Ada"}])"));
  EXPECT_EQ(Find(flips, "case", "c20").at("direction"), "fail_to_pass");
}

TEST_F(ViewApiTest, ACaseAcrossRunsShowsEachRunsOutcomeAndOutput) {
  ApiAnswer answer = api_->Get({"cases"}, {{"suite", "nightly"}, {"skill", "extract"}, {"case", "c1"}});
  ASSERT_EQ(answer.status, 200) << json::serialize(answer.body);
  const json::array& runs = answer.body.at("runs").as_array();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].at("outcome"), "pass");
  EXPECT_EQ(runs[1].at("outcome"), "fail");
  EXPECT_EQ(runs[1].at("verdicts"), ParseObject(R"({"complete": "indeterminate", "faithful": "fail"})"));
  EXPECT_EQ(runs[1].at("git_ref"), "ref-r2");
}

TEST_F(ViewApiTest, WrongRequestsSayWhatIsWrong) {
  ApiAnswer missing = api_->Get({"runs", "nope"}, {});
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(missing.body, ParseObject(R"({"error": {"code": "NOT_FOUND", "message": "run nope is not in the history )" +
                                      file_.string() + R"("}})"));
  ApiAnswer bad = api_->Get({"suites", "nightly"}, {{"limit", "abc"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body.at("error").at("message"), "limit: expected a whole number from 1 to 1000, found \"abc\"");
  ApiAnswer no_case = api_->Get({"runs", "r2", "case"}, {{"skill", "extract"}});
  EXPECT_EQ(no_case.status, 400);
  EXPECT_EQ(no_case.body.at("error").at("message"), "the parameter \"case\" is required");
  EXPECT_EQ(api_->Get({"nope"}, {}).status, 404);
  ApiAnswer first = api_->Get({"compare"}, {{"a", "r1"}});
  EXPECT_EQ(first.status, 404);
  EXPECT_EQ(first.body.at("error").at("message"), "run r1 is the first of suite nightly");
  ApiAnswer no_versions = api_->Get({"runs", "r2", "versions"}, {});
  EXPECT_EQ(no_versions.status, 404);
  EXPECT_EQ(no_versions.body.at("error").at("message"),
            "run r2 ran no skill at both versions (a suite entry's versions: both)");
}

// schemas/view/ documents each answer; every answer above holds to its schema.
TEST_F(ViewApiTest, EveryAnswerHoldsToItsSchema) {
  const std::pair<std::vector<std::string>, Query> requests[] = {
      {{"suites"}, {}},
      {{"suites", "nightly"}, {}},
      {{"runs", "r2"}, {}},
      {{"runs", "r2", "case"}, {{"skill", "extract"}, {"case", "c1"}}},
      {{"compare"}, {{"a", "r2"}, {"b", "r1"}}},
      {{"cases"}, {{"suite", "nightly"}, {"skill", "extract"}, {"case", "c1"}}},
      {{"rollouts"}, {}},
      {{"runs", "nope"}, {}}};
  const char* schemas[] = {"suites", "suite", "run", "case-record", "compare", "cases", "rollouts", "error"};
  for (std::size_t i = 0; i < std::size(requests); ++i) {
    ApiAnswer answer = api_->Get(requests[i].first, requests[i].second);
    EXPECT_EQ(testing::SchemaViolations(std::string("view/") + schemas[i] + ".schema.json", answer.body), "")
        << schemas[i];
  }
}

TEST(JsonDiffTest, NamesEachAddedRemovedAndChangedPointer) {
  json::value a = json::parse(R"({"a/b": 1, "list": [1, 2, 3], "same": {"x": true}, "new": "n"})");
  json::value b = json::parse(R"({"a/b": 2, "list": [1, 5], "same": {"x": true}, "old": null})");
  EXPECT_EQ(DiffJson(a, b), json::parse(R"([
    {"op": "changed", "pointer": "/a~1b", "a": 1, "b": 2},
    {"op": "changed", "pointer": "/list/1", "a": 2, "b": 5},
    {"op": "added", "pointer": "/list/2", "a": 3},
    {"op": "added", "pointer": "/new", "a": "n"},
    {"op": "removed", "pointer": "/old", "b": null}])"));
  EXPECT_EQ(DiffJson(json::value("x"), json::value(1)),
            json::parse(R"([{"op": "changed", "pointer": "", "a": "x", "b": 1}])"));
  EXPECT_EQ(DiffJson(a, b, 2).size(), 2u);
}

}  // namespace
}  // namespace skillrunner::view
