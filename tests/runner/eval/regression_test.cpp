#include "runner/eval/regression.h"

#include <gtest/gtest.h>

#include "services/common/json_text.h"
#include "tests/runner/eval/report_test_records.h"
#include "tests/runner/eval/summary_json.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;
using namespace report_records;

// What pairing finds when no case is in both runs.
const std::string kNoPairs = R"({"cases":0,"baseline_rate":null,"baseline_interval":null,"rate":null,"interval":null,)"
                             R"("pass_to_fail":0,"fail_to_pass":0,"p_value":1.0,"significant":false})";
const std::string kNoFlips =
    R"({"schema":{"pass_to_fail":[],"fail_to_pass":[]},"expected":{"pass_to_fail":[],"fail_to_pass":[]},)"
    R"("checks":{"pass_to_fail":[],"fail_to_pass":[]},"rubric":{"pass_to_fail":[],"fail_to_pass":[]},)"
    R"("review_gate":{"pass_to_fail":[],"fail_to_pass":[]}})";
const std::string kNoSkillPairs = R"("paired":{"schema":)" + kNoPairs + R"(,"outcome":)" + kNoPairs + "}";

TEST(RegressionTest, DeltasAreCurrentMinusBaselineAndNullWhereEitherSideIsMissing) {
  json::object summary = ParseObject(R"({"run_id": "r2", "skills": {
    "extract": {"schema_compliance": 0.9, "rubric_pass_rate": 0.8,
                "criteria": {"faithful": {"pass_rate": 0.75}, "complete": {"pass_rate": null},
                             "new_one": {"pass_rate": 1}}},
    "summarise": {"schema_compliance": 1, "rubric_pass_rate": null}}})");
  BaselineRun baseline{"r1",
                       "2025-01-01T02:00:00Z",
                       RunSummary::FromJson(ParseObject(R"({"run_id": "r1", "skills": {
    "extract": {"schema_compliance": 0.8, "rubric_pass_rate": 0.9,
                "criteria": {"faithful": {"pass_rate": 0.5}, "complete": {"pass_rate": 0.5}}}}})")),
                       {},
                       {}};

  json::object comparison = CompareWithBaseline(summary, {}, baseline);

  // Every delta of a skill is there; null where either side has no figure.
  const std::string kNullDeltas = R"("first_try_rate_delta":null,"retry_rate_delta":null,"expected_match_delta":null,)"
                                  R"("input_tokens_delta":null,"output_tokens_delta":null,"cost_usd_delta":null,)"
                                  R"("latency_p50_ms_delta":null,"latency_p95_ms_delta":null,)";
  EXPECT_EQ(
      CompactJson(comparison),
      R"({"status":"compared","run_id":"r1","started_at":"2025-01-01T02:00:00Z","regression_alpha":0.05,"skills":{)"
      R"("extract":{"schema_compliance_delta":0.1,"rubric_pass_rate_delta":-0.1,)" +
          kNullDeltas +
          R"("criteria":{)"
          R"("faithful":{"pass_rate_delta":0.25,"paired":)" +
          kNoPairs +
          R"(},)"
          R"("complete":{"pass_rate_delta":null,"paired":)" +
          kNoPairs +
          R"(},)"
          R"("new_one":{"pass_rate_delta":null,"paired":)" +
          kNoPairs + R"(}},)" + kNoSkillPairs +
          R"(},)"
          R"("summarise":{"schema_compliance_delta":null,"rubric_pass_rate_delta":null,)" +
          kNullDeltas + R"("criteria":{},)" + kNoSkillPairs +
          R"(}},)"
          R"("flipped":[],"flips":)" +
          kNoFlips + "}");
}

TEST(RegressionTest, FlippedListsPassedCasesThatNowFailOrErrorSorted) {
  BaselineRun baseline{"r1",
                       "2025-01-01T02:00:00Z",
                       {},
                       {{"extract/c1", CaseOutcome::kPass},
                        {"extract/c2", CaseOutcome::kPass},
                        {"extract/c3", CaseOutcome::kFail},
                        {"extract/c4", CaseOutcome::kPass},
                        {"extract/c5", CaseOutcome::kPass},
                        {"summarise/x#1", CaseOutcome::kPass},
                        {"summarise/x#2", CaseOutcome::kPass},
                        {"summarise/y#1", CaseOutcome::kError}},
                       {}};
  std::vector<json::object> records{
      ErrorRecord("summarise", "x", 2),                                    // pass -> error: flipped
      PassRecord("summarise", "x", 1),                                     // still passes
      FailRecord("extract", "c3"),                                         // failed before too
      JudgeErrorRecord("extract", "c4"),                                   // nothing known about it: not a flip
      FailRecord("extract", "c6"),                                         // new case: no baseline
      ErrorRecord("extract", "c2"),                                        // pass -> error
      PassRecord("extract", "c5"),       FailRecord("summarise", "y", 1),  // error -> fail: not from pass
      FailRecord("extract", "c1"),                                         // pass -> fail
  };

  json::object comparison = CompareWithBaseline(json::object{}, records, baseline);

  EXPECT_EQ(CompactJson(comparison.at("flipped")),
            R"([{"skill":"extract","case":"c1","from":"pass","to":"fail"},)"
            R"({"skill":"extract","case":"c2","from":"pass","to":"error"},)"
            R"({"skill":"summarise","case":"x","repeat":2,"from":"pass","to":"error"}])");
  EXPECT_EQ(CompactJson(comparison.at("skills")), "{}");
}

TEST(RegressionTest, OddInputGivesNullsNotACrash) {
  json::object summary = ParseObject(R"({"skills": {"a": 7, "b": {"schema_compliance": "high",
    "criteria": [1]}, "c": {"criteria": {"x": null}}}})");
  BaselineRun baseline{"r0", "", RunSummary::FromJson(ParseObject(R"({"skills": []})")), {}, {}};
  json::object comparison = CompareWithBaseline(summary, {ParseObject(R"({"skill": 3})"), json::object()}, baseline);
  const std::string kNullDeltas = R"("first_try_rate_delta":null,"retry_rate_delta":null,"expected_match_delta":null,)"
                                  R"("input_tokens_delta":null,"output_tokens_delta":null,"cost_usd_delta":null,)"
                                  R"("latency_p50_ms_delta":null,"latency_p95_ms_delta":null,)";
  EXPECT_EQ(CompactJson(comparison),
            R"({"status":"compared","run_id":"r0","started_at":"","regression_alpha":0.05,"skills":{)"
            R"("b":{"schema_compliance_delta":null,"rubric_pass_rate_delta":null,)" +
                kNullDeltas + R"("criteria":{},)" + kNoSkillPairs +
                R"(},)"
                R"("c":{"schema_compliance_delta":null,"rubric_pass_rate_delta":null,)" +
                kNullDeltas + R"("criteria":{},)" + kNoSkillPairs +
                R"(}},)"
                R"("flipped":[],"flips":)" +
                kNoFlips + "}");
}

}  // namespace
}  // namespace skillrunner::eval
