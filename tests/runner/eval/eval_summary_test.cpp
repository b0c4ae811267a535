// summary.json counters and the thresholds read off records alone.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "runner/eval/records/case_outcome.h"
#include "runner/eval/summary.h"
#include "runner/eval/thresholds.h"
#include "tests/runner/eval/summary_json.h"
#include "tests/runner/eval/thresholds_fixture.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;

json::object Record(std::string_view text) { return json::parse(text).as_object(); }

std::string Verdict(bool pass, std::string_view a, std::string_view b) {
  return std::string(R"({"pass":)") + (pass ? "true" : "false") +
         R"(,"criteria_results":[{"criterion_id":"a","verdict":")" + std::string(a) +
         R"("},{"criterion_id":"b","verdict":")" + std::string(b) + R"("}]})";
}

std::string Ok(int attempts, int validation_retries, int duration) {
  return R"({"skill":"s","output":{},"attempts":[],"metrics":{"attempts":)" + std::to_string(attempts) +
         R"(,"validation_retries":)" + std::to_string(validation_retries) +
         R"(,"transient_retries":0,"input_tokens":10,"output_tokens":5,"duration_ms":)" + std::to_string(duration) +
         "}}";
}

std::vector<json::object> Records() {
  return {
      Record(R"({"skill":"s","case":"1","result":)" + Ok(2, 0, 100) + R"(,"review":)" + Verdict(true, "pass", "pass") +
             R"(,"judge_usage":{"input_tokens":7,"output_tokens":3}})"),
      Record(R"({"skill":"s","case":"2","result":)" + Ok(3, 1, 200) + R"(,"review":)" +
             Verdict(false, "fail", "indeterminate") + "}"),
      Record(R"({"skill":"s","case":"3","result":)" + Ok(2, 0, 300) +
             R"(,"judge_error":{"code":"JUDGE_ERROR","message":"no verdict"}})"),
      Record(R"({"skill":"s","case":"4","error":{"code":"TRUNCATED","message":"cut","attempts":[{"kind":"truncated"}],)"
             R"("metrics":{"attempts":1,"input_tokens":4,"output_tokens":0,"duration_ms":400}}})"),
  };
}

SummaryHeader Header() {
  SummaryHeader header;
  header.run_id = "r1";
  header.suite = "nightly";
  header.skills = {"s", "unrun"};
  return header;
}

TEST(EvalSummaryTest, CountsEveryOutcomeApartAndKeepsJudgeErrorsOutOfPassRates) {
  json::object summary = SummaryJson(Header(), Records());
  const json::object& s = summary.at("skills").at("s").as_object();
  EXPECT_EQ(s.at("cases"), 4);
  EXPECT_EQ(s.at("schema_compliance"), 0.75);
  EXPECT_EQ(s.at("first_try_rate"), 0.5);  // cases 1 and 3
  EXPECT_EQ(s.at("retry_rate"), 0.25);
  EXPECT_EQ(s.at("truncations"), 1);
  EXPECT_EQ(json::serialize(s.at("errors")), R"({"TRUNCATED":1})");
  EXPECT_EQ(s.at("judged"), 2);
  EXPECT_EQ(s.at("judge_errors"), 1);
  EXPECT_EQ(s.at("rubric_pass_rate"), 0.5);  // 1 of 2 judged; the judge error is in neither
  // Case 2 failed on a: decided, though b was indeterminate (only a pass can be undecided).
  EXPECT_EQ(s.at("indeterminate"), 0);
  EXPECT_EQ(s.at("indeterminate_rate"), 0.0);
  EXPECT_EQ(s.at("decided"), 2);
  EXPECT_EQ(s.at("judge_error_rate"), 1.0 / 3.0);
  EXPECT_TRUE(s.at("expected_match").is_null());
  EXPECT_EQ(s.at("input_tokens"), 10 + 10 + 10 + 4 + 7);
  EXPECT_EQ(s.at("judge_input_tokens"), 7);
  EXPECT_EQ(s.at("output_tokens"), 5 * 3 + 3);
  EXPECT_EQ(json::serialize(s.at("latency_ms")), R"({"p50":200,"p95":400,"p99":400})");
  EXPECT_EQ(json::serialize(s.at("attempts_histogram")), R"({"1":1,"2":2,"3":1})");
  EXPECT_EQ(json::serialize(s.at("criteria")),
            R"({"a":{"judged":2,"passed":1,"failed":1,"indeterminate":0,"pass_rate":5E-1,"indeterminate_rate":0E0,)"
            R"("counted":true},)"
            R"("b":{"judged":2,"passed":1,"failed":0,"indeterminate":1,"pass_rate":1E0,"indeterminate_rate":5E-1,)"
            R"("counted":true}})");
  EXPECT_EQ(summary.at("skills").at("unrun").at("cases"), 0);
  EXPECT_EQ(summary.at("totals").at("cases"), 4);
}

// design.md §11.5: a refused case (REFUSED or CONTENT_FILTERED) is its own outcome: counted in
// `refused` and `refusal_rate`, left out of schema compliance (there is no output to check), and a
// max_refusal_rate threshold bounds it.
TEST(EvalSummaryTest, RefusedCasesAreCountedApartAndMaxRefusalRateBoundsThem) {
  std::vector<json::object> records = Records();
  records.push_back(Record(R"({"skill":"s","case":"5","error":{"code":"REFUSED","message":"the model refused to )"
                           R"(answer: no","attempts":[{"kind":"refusal"}],"metrics":{"attempts":1}}})"));
  records.push_back(Record(R"({"skill":"s","case":"6","error":{"code":"CONTENT_FILTERED","message":"withheld",)"
                           R"("attempts":[{"kind":"content_filter"}],"metrics":{"attempts":1}}})"));
  EXPECT_EQ(OutcomeOf(records[4]), CaseOutcome::kRefused);
  EXPECT_EQ(OutcomeOf(records[5]), CaseOutcome::kRefused);
  EXPECT_EQ(CaseOutcomeName(CaseOutcome::kRefused), "refused");
  json::object summary = SummaryJson(Header(), records);
  const json::object& s = summary.at("skills").at("s").as_object();
  EXPECT_EQ(s.at("cases"), 6);
  EXPECT_EQ(s.at("refused"), 2);
  EXPECT_EQ(s.at("refusal_rate"), 2.0 / 6.0);
  EXPECT_EQ(s.at("schema_checked"), 4);
  EXPECT_EQ(s.at("schema_compliance"), 0.75);  // as without them: 3 of the 4 with an output to check
  EXPECT_EQ(summary.at("totals").at("refused"), 2);
  Suite suite;
  SuiteSkill entry;
  entry.label = "s";
  entry.thresholds.max_refusal_rate = 0.2;
  suite.skills = {entry};
  json::array breaches = CheckThresholds(summary, suite);
  ASSERT_EQ(breaches.size(), 1u) << json::serialize(breaches);
  EXPECT_EQ(breaches[0].at("measure"), "refusal_rate");
  EXPECT_EQ(breaches[0].at("message"), "s: refusal rate 0.333 is above the maximum 0.200 (2 of 6 case(s) refused)");
}

TEST(EvalSummaryTest, RejudgesGiveAgreementAndFlagUnstableCriteria) {
  std::vector<json::object> records = {
      Record(R"({"skill":"s","case":"1","result":)" + Ok(1, 0, 1) + R"(,"review":)" + Verdict(true, "pass", "pass") +
             R"(,"rejudges":[)" + Verdict(true, "pass", "fail") + "," + Verdict(true, "pass", "pass") + "]}"),
      Record(R"({"skill":"s","case":"2","result":)" + Ok(1, 0, 1) + R"(,"review":)" + Verdict(true, "pass", "pass") +
             R"(,"rejudges":[)" + Verdict(true, "pass", "pass") + R"(,{"judge_error":{"code":"JUDGE_ERROR"}}]})"),
  };
  json::object summary = SummaryJson(Header(), records);
  const json::object& criteria = summary.at("skills").at("s").at("criteria").as_object();
  EXPECT_EQ(criteria.at("a").at("agreement"), 1.0);
  EXPECT_EQ(criteria.at("a").at("unstable"), false);
  EXPECT_EQ(criteria.at("b").at("agreement"), 0.5);
  EXPECT_EQ(criteria.at("b").at("unstable"), true);
}

class EvalThresholdsTest : public ThresholdsFixture {
 protected:
  EvalThresholdsTest() {
    entry_.thresholds.schema_compliance = 0.98;
    entry_.thresholds.rubric_pass_rate = 0.9;
    entry_.thresholds.criterion_pass_rate = 0.6;
    entry_.thresholds.criteria["b"] = 1.0;
    entry_.thresholds.max_regression = 0.05;
  }
};

TEST_F(EvalThresholdsTest, EveryRateBelowItsMinimumIsABreach) {
  json::object summary = SummaryJson(Header(), Records());
  EXPECT_EQ(Messages(summary), (std::vector<std::string>{
                                   "s: schema compliance 0.750 is below the minimum 0.980",
                                   "s: rubric pass rate 0.500 is below the minimum 0.900",
                                   "s: judge error rate 0.333 is above the maximum 0.000 (1 judge error(s) in 3 "
                                   "case(s) sent to the judge)",
                                   "s: criterion \"a\" pass rate 0.500 is below the minimum 0.600",
                                   // b: 1 pass, 0 fail, 1 indeterminate: its 1.0 holds
                               }));
  EXPECT_EQ(json::serialize(CheckThresholds(summary, suite_).at(0)),
            R"({"skill":"s","threshold":"schema_compliance","measure":"schema_compliance","kind":"threshold",)"
            R"("limit":9.8E-1,"actual":7.5E-1,)"
            R"("message":"s: schema compliance 0.750 is below the minimum 0.980"})");
}

TEST_F(EvalThresholdsTest, ABrokenJudgeIsABreachNotAPass) {
  entry_.thresholds.schema_compliance.reset();
  std::vector<json::object> records = {
      Record(R"({"skill":"s","case":"1","result":)" + Ok(1, 0, 1) + R"(,"judge_error":{"code":"JUDGE_ERROR"}})"),
      Record(R"({"skill":"s","case":"2","result":)" + Ok(1, 0, 1) + R"(,"judge_error":{"code":"JUDGE_ERROR"}})"),
  };
  EXPECT_EQ(
      Messages(SummaryJson(Header(), records)),
      (std::vector<std::string>{"s: rubric pass rate could not be measured: no case was judged (2 judge error(s))",
                                "s: judge error rate 1.000 is above the maximum 0.000 (2 judge error(s) in 2 "
                                "case(s) sent to the judge)"}));
}

TEST_F(EvalThresholdsTest, RegressionsBreachButUnstableCriteriaOnlyWhenTheSuiteSaysSo) {
  entry_.thresholds = Thresholds{};
  entry_.thresholds.max_regression = 0.05;
  // Each drop's paired test says it is no chance (p below 0.05); criterion a's drop is within bounds.
  json::object summary = json::parse(R"({"skills":{"s":{"cases":30,"criteria":{"b":{"unstable":true}}}},
    "baseline":{"skills":{"s":{"schema_compliance_delta":0,"rubric_pass_rate_delta":-0.1,
      "paired":{"outcome":{"cases":30,"pass_to_fail":6,"fail_to_pass":0,"p_value":0.03125}},
      "criteria":{"a":{"pass_rate_delta":-0.04,"paired":{"p_value":0.5}},
                  "b":{"pass_rate_delta":-0.3,"paired":{"cases":30,"pass_to_fail":9,"fail_to_pass":0,
                                                        "p_value":0.00390625}}}}}}})")
                             .as_object();
  const std::string skill_rate =
      "s: rubric pass rate fell by 0.100 against the baseline, more than the allowed 0.050 "
      "(6 pass->fail, 0 fail->pass of 30 paired cases; McNemar p = 0.0312 < 0.05)";
  EXPECT_EQ(Messages(summary), (std::vector<std::string>{skill_rate}));
  suite_.gate_unstable_criteria = true;
  EXPECT_EQ(Messages(summary), (std::vector<std::string>{
                                   skill_rate,
                                   "s: criterion \"b\" pass rate fell by 0.300 against the baseline, more than the "
                                   "allowed 0.050 (9 pass->fail, 0 fail->pass of 30 paired cases; McNemar p = 0.00391 "
                                   "< 0.05)",
                               }));
}

}  // namespace
}  // namespace skillrunner::eval
