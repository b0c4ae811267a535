// design.md §9.5: Wilson intervals, the exact McNemar test and Cohen's kappa
// against values computed by hand, and a regression gate that tells a real
// drop from noise.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <functional>

#include "runner/eval/regression.h"
#include "runner/eval/report/html_report.h"
#include "runner/eval/summary.h"
#include "runner/stats/statistics.h"
#include "tests/runner/eval/report_test_records.h"
#include "tests/runner/eval/summary_json.h"
#include "tests/runner/eval/thresholds_fixture.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;
using namespace report_records;

TEST(StatisticsTest, WilsonIntervalsMatchTheFormulaByHand) {
  EXPECT_NEAR(stats::Z975(), 1.959964, 1e-6);
  // (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n), z = 1.959964, worked out by hand.
  const struct {
    std::size_t k, n;
    double low, high;
  } cases[] = {{45, 50, 0.786397685, 0.956524235},
               {42, 50, 0.714857838, 0.916625794},
               {33, 50, 0.521538259, 0.775630509},
               {0, 10, 0.0, 0.277532803},  // the textbook "0 of 10" upper bound, 0.278
               {10, 10, 0.722467197, 1.0}};
  for (const auto& c : cases) {
    auto interval = stats::Wilson(c.k, c.n);
    ASSERT_TRUE(interval) << c.k << "/" << c.n;
    EXPECT_NEAR(interval->low, c.low, 1e-6) << c.k << "/" << c.n;
    EXPECT_NEAR(interval->high, c.high, 1e-6) << c.k << "/" << c.n;
  }
  EXPECT_FALSE(stats::Wilson(0, 0));
}

TEST(StatisticsTest, ExactMcNemarIsTwiceTheBinomialTail) {
  EXPECT_DOUBLE_EQ(stats::McNemarExactP(3, 0), 0.25);              // 2 x (1/2)^3
  EXPECT_DOUBLE_EQ(stats::McNemarExactP(12, 0), 2.0 / 4096);       // 2 x (1/2)^12
  EXPECT_DOUBLE_EQ(stats::McNemarExactP(10, 2), 2.0 * 79 / 4096);  // 2 x (1 + 12 + 66) / 2^12
  EXPECT_DOUBLE_EQ(stats::McNemarExactP(2, 10), 2.0 * 79 / 4096);  // two-sided: symmetric
  EXPECT_DOUBLE_EQ(stats::McNemarExactP(5, 5), 1.0);               // capped at 1
  EXPECT_DOUBLE_EQ(stats::McNemarExactP(0, 0), 1.0);               // no discordant pair
  EXPECT_DOUBLE_EQ(stats::SignTestP(9, 1), 2.0 * 11 / 1024);       // 2 x (1 + 10) / 2^10
}

TEST(StatisticsTest, CohensKappaOfTheTextbookExample) {
  // 50 items: both yes 20, judge yes / human no 5, judge no / human yes 10, both no 15:
  // po = 35/50 = 0.7, pe = 0.5 x 0.6 + 0.5 x 0.4 = 0.5, kappa = (0.7 - 0.5) / 0.5 = 0.4.
  const std::size_t counts[2][2] = {{20, 5}, {10, 15}};
  stats::Agreement a = stats::CohenKappa(counts);
  EXPECT_EQ(a.n, 50u);
  EXPECT_NEAR(a.observed, 0.7, 1e-9);
  ASSERT_TRUE(a.kappa);
  EXPECT_NEAR(*a.kappa, 0.4, 1e-6);
  const std::size_t all_pass[2][2] = {{9, 0}, {0, 0}};
  EXPECT_FALSE(stats::CohenKappa(all_pass).kappa);  // chance agreement is 1: kappa undefined
}

// 50 cases of skill "s": `baseline_passes` passed in the baseline; now
// `pass_to_fail` of those fail and `fail_to_pass` of the others pass.
struct PairedRun {
  json::object summary;
  std::vector<json::object> records;
  BaselineRun baseline;
};

// 20 cases of "s" that all passed every gate of the baseline (`gates`), `change` applied to each
// current record (with its index), compared with that baseline.
PairedRun GateFlips(const CaseGates& gates, const std::function<void(json::object&, int)>& change) {
  PairedRun run;
  run.baseline.run_id = "r1";
  for (int i = 0; i < 20; ++i) {
    const std::string id = "c" + std::to_string(i);
    json::object record = PassRecord("s", id);
    change(record, i);
    run.records.push_back(std::move(record));
    run.baseline.outcomes["s/" + id] = CaseOutcome::kPass;
    run.baseline.gates["s/" + id] = gates;
  }
  run.summary =
      json::parse(R"({"skills":{"s":{"cases":20,"schema_compliance":1.0,"rubric_pass_rate":1.0}}})").as_object();
  run.summary["baseline"] = CompareWithBaseline(run.summary, run.records, run.baseline);
  return run;
}

PairedRun Paired(int baseline_passes, int pass_to_fail, int fail_to_pass) {
  PairedRun run;
  run.baseline.run_id = "r1";
  int now_passes = 0;
  for (int i = 0; i < 50; ++i) {
    const std::string id = "c" + std::to_string(i);
    const bool before = i < baseline_passes;
    const bool now = before ? i >= pass_to_fail : i < baseline_passes + fail_to_pass;
    run.baseline.outcomes["s/" + id] = before ? CaseOutcome::kPass : CaseOutcome::kFail;
    run.records.push_back(now ? PassRecord("s", id) : FailRecord("s", id));
    now_passes += now;
  }
  run.baseline.summary =
      RunSummary::FromJson(json::parse(R"({"skills":{"s":{"schema_compliance":1.0,"rubric_pass_rate":)" +
                                       std::to_string(baseline_passes / 50.0) + "}}}")
                               .as_object());
  run.summary = json::parse(R"({"skills":{"s":{"cases":50,"schema_compliance":1.0,"rubric_pass_rate":)" +
                            std::to_string(now_passes / 50.0) + "}}}")
                    .as_object();
  run.summary["baseline"] = CompareWithBaseline(run.summary, run.records, run.baseline);
  return run;
}

class SignificanceGateTest : public ThresholdsFixture {
 protected:
  SignificanceGateTest() {
    entry_.thresholds = Thresholds{};
    entry_.thresholds.max_regression = 0.05;
  }
};

TEST_F(SignificanceGateTest, ADropFrom090To084WithThreeFlipsIsNoiseAndDoesNotBreach) {
  PairedRun run = Paired(45, 3, 0);
  const json::value& paired = run.summary.at("baseline").at("skills").at("s").at("paired").at("outcome");
  EXPECT_EQ(paired, json::parse(R"({"cases":50,"baseline_rate":0.9,"baseline_interval":[0.786398,0.956524],
      "rate":0.84,"interval":[0.714858,0.916626],"pass_to_fail":3,"fail_to_pass":0,"p_value":0.25,
      "significant":false})"));
  EXPECT_EQ(run.summary.at("baseline").at("skills").at("s").at("rubric_pass_rate_delta"), -0.06);
  EXPECT_EQ(Messages(run.summary), std::vector<std::string>{});
}

TEST_F(SignificanceGateTest, TwelvePassToFailFlipsAndNoneBackBreach) {
  PairedRun run = Paired(45, 12, 0);
  const json::value& paired = run.summary.at("baseline").at("skills").at("s").at("paired").at("outcome");
  EXPECT_EQ(paired.at("p_value"), 0.000488281);
  EXPECT_EQ(paired.at("significant"), true);
  EXPECT_EQ(Messages(run.summary),
            (std::vector<std::string>{"s: case pass rate fell by 0.240 against the baseline, more than the allowed "
                                      "0.050 (12 pass->fail, 0 fail->pass of 50 paired cases; McNemar p = 0.000488 "
                                      "< 0.05)",
                                      "s: rubric pass rate fell by 0.240 against the baseline, more than the allowed "
                                      "0.050 (12 pass->fail, 0 fail->pass of 50 paired cases; McNemar p = 0.000488 "
                                      "< 0.05)"}));
  // A stricter alpha lets the same drop through.
  suite_.regression_alpha = 0.0001;
  EXPECT_EQ(Messages(run.summary), std::vector<std::string>{});
}

TEST_F(SignificanceGateTest, FlipsBothWaysCancelOut) {
  // 12 down and 10 up: the rate barely moves and McNemar agrees.
  PairedRun run = Paired(40, 12, 10);
  const json::value& paired = run.summary.at("baseline").at("skills").at("s").at("paired").at("outcome");
  EXPECT_EQ(paired.at("pass_to_fail"), 12);
  EXPECT_EQ(paired.at("fail_to_pass"), 10);
  EXPECT_EQ(paired.at("significant"), false);
}

// design.md §10.1: the skill's own review gate is a measure of its own when the
// suite judges with another rubric; the suite's rubric still passes here.
TEST_F(SignificanceGateTest, ReviewGateDropsBreachOnlyWhenTheSuiteJudgesWithAnotherRubric) {
  PairedRun run = GateFlips(CaseGates{true, std::nullopt, true, true}, [](json::object& record, int i) {
    record["result"].as_object()["review"] = json::object{{"pass", i >= 8}};  // 8 gate verdicts flip to fail
  });
  const json::value& paired = run.summary.at("baseline").at("skills").at("s").at("paired");
  EXPECT_EQ(paired.at("review_gate").at("pass_to_fail"), 8);
  EXPECT_EQ(paired.at("rubric").at("pass_to_fail"), 0);
  EXPECT_EQ(paired.at("outcome").at("pass_to_fail"), 8);  // a case passes when every gate it has passes
  auto measures = [&] {
    suite_.skills = {entry_};
    std::vector<std::string> out;
    for (const auto& b : CheckThresholds(run.summary, suite_)) out.emplace_back(b.at("measure").as_string());
    return out;
  };
  EXPECT_EQ(measures(), (std::vector<std::string>{"case_pass_rate", "review_gate"}));
  EXPECT_EQ(Messages(run.summary).back(),
            "s: review gate pass rate fell by 0.400 against the baseline, more than the allowed 0.050 (8 pass->fail, "
            "0 fail->pass of 20 paired cases; McNemar p = 0.00781 < 0.05)");
  // Judged with the gate's own rubric, the gate is the rubric pass rate: no measure of its own.
  entry_.judge_is_gate = true;
  EXPECT_EQ(measures(), (std::vector<std::string>{"case_pass_rate"}));
}

// design.md §11.4: a case's own checks are a measure of their own, paired like the others; a
// suite whose cases carry none has no such measure.
TEST_F(SignificanceGateTest, CheckPassDropsBreachAsTheirOwnMeasure) {
  PairedRun run = GateFlips(CaseGates{true, std::nullopt, true, std::nullopt, true},
                            [](json::object& record, int i) { record["check_pass"] = i >= 8; });  // 8 now fail
  const json::value& paired = run.summary.at("baseline").at("skills").at("s").at("paired");
  EXPECT_EQ(paired.at("checks").at("pass_to_fail"), 8);
  EXPECT_EQ(paired.at("checks").at("cases"), 20);
  EXPECT_EQ(paired.at("rubric").at("pass_to_fail"), 0);
  suite_.skills = {entry_};
  std::vector<std::string> measures;
  for (const auto& b : CheckThresholds(run.summary, suite_)) measures.emplace_back(b.at("measure").as_string());
  EXPECT_EQ(measures, (std::vector<std::string>{"case_pass_rate", "check_pass_rate"}));
  EXPECT_EQ(Messages(run.summary).back(),
            "s: check pass rate fell by 0.400 against the baseline, more than the allowed 0.050 (8 pass->fail, "
            "0 fail->pass of 20 paired cases; McNemar p = 0.00781 < 0.05)");
  // Without checks on either side, no such measure.
  PairedRun plain = Paired(45, 0, 0);
  EXPECT_FALSE(plain.summary.at("baseline").at("skills").at("s").at("paired").as_object().contains("checks"));
}

// design.md §11.5: refusals have a paired regression of their own (the share of cases not refused),
// present only where some paired case was refused.
TEST_F(SignificanceGateTest, RefusalsRisingBreachAsTheirOwnMeasure) {
  PairedRun run = GateFlips(CaseGates{true, std::nullopt, true}, [](json::object& record, int i) {
    if (i >= 8) return;
    record.erase("result");
    record.erase("review");
    record["error"] = json::object{{"code", "REFUSED"}, {"message", "the model refused to answer: no"}};
  });
  const json::value& paired = run.summary.at("baseline").at("skills").at("s").at("paired");
  EXPECT_EQ(paired.at("answered").at("pass_to_fail"), 8);
  EXPECT_EQ(paired.at("schema").at("cases"), 12);  // a refusal says nothing of the schema
  suite_.skills = {entry_};
  std::vector<std::string> measures;
  for (const auto& b : CheckThresholds(run.summary, suite_)) measures.emplace_back(b.at("measure").as_string());
  EXPECT_EQ(measures, (std::vector<std::string>{"case_pass_rate", "refusal_rate"}));
  EXPECT_EQ(Messages(run.summary).back(),
            "s: share of cases not refused fell by 0.400 against the baseline, more than the allowed 0.050 (8 "
            "pass->fail, 0 fail->pass of 20 paired cases; McNemar p = 0.00781 < 0.05)");
  PairedRun plain = Paired(45, 3, 0);  // nothing refused on either side: no such measure
  EXPECT_FALSE(plain.summary.at("baseline").at("skills").at("s").at("paired").as_object().contains("answered"));
}

}  // namespace
}  // namespace skillrunner::eval

namespace skillrunner::eval {
namespace {

// A judged case of skill "s" on criteria a and b, with people's labels.
json::object Labelled(int i, std::string_view a, std::string_view b, std::string_view human_a,
                      std::string_view human_b) {
  const bool pass = a != "fail" && b != "fail";
  return json::parse(R"({"skill":"s","case":"c)" + std::to_string(i) +
                     R"(","result":{"output":{},"metrics":{"attempts":1,"duration_ms":1}},)"
                     R"("review":{"pass":)" +
                     (pass ? std::string("true") : std::string("false")) +
                     R"(,"criteria_results":[{"criterion_id":"a","verdict":")" + std::string(a) +
                     R"("},{"criterion_id":"b","verdict":")" + std::string(b) +
                     R"("}]},)"
                     R"("human":{"a":")" +
                     std::string(human_a) + R"(","b":")" + std::string(human_b) + R"("}})")
      .as_object();
}

class CalibrationTest : public ThresholdsFixture {};

// design.md §9.5: criterion a's judge fails cases people pass (kappa 0 < 0.6):
// uncalibrated, and its low pass rate breaches nothing; b's judge agrees with
// people (kappa 1) and its low pass rate still breaches.
TEST_F(CalibrationTest, KappaPerCriterionAndAnUncalibratedCriterionLeftOutOfTheGates) {
  std::vector<json::object> records;
  // a: judge pass/human pass 4, judge pass/human fail 1, judge fail/human pass 4, judge fail/human fail 1.
  // po = 0.5, judge pass 0.5, human pass 0.8, pe = 0.5 x 0.8 + 0.5 x 0.2 = 0.5, kappa = 0.
  // b: the judge and people agree on every case: 6 pass, 4 fail, kappa 1.
  const char* a_judge[] = {"pass", "pass", "pass", "pass", "pass", "fail", "fail", "fail", "fail", "fail"};
  const char* a_human[] = {"pass", "pass", "pass", "pass", "fail", "pass", "pass", "pass", "pass", "fail"};
  for (int i = 0; i < 10; ++i) {
    const char* b = i < 6 ? "pass" : "fail";
    records.push_back(Labelled(i, a_judge[i], b, a_human[i], b));
  }
  SummaryHeader header;
  header.run_id = "r";
  header.suite = "nightly";
  header.skills = {"s"};
  header.min_judge_kappa = 0.6;
  json::object summary = SummaryJson(header, records);
  const json::object& criteria = summary.at("skills").at("s").at("criteria").as_object();
  EXPECT_EQ(criteria.at("a").at("calibration"), json::parse(R"({"labelled":10,"agreement":0.5,"kappa":0.0,
      "confusion":{"judge_pass_human_pass":4,"judge_pass_human_fail":1,"judge_fail_human_pass":4,
                   "judge_fail_human_fail":1}})"));
  EXPECT_EQ(criteria.at("a").at("uncalibrated"), true);
  EXPECT_EQ(criteria.at("b").at("calibration").at("kappa"), 1.0);
  EXPECT_EQ(criteria.at("b").at("uncalibrated"), false);

  entry_.thresholds = Thresholds{};
  entry_.thresholds.criterion_pass_rate = 0.8;
  EXPECT_EQ(Messages(summary),
            (std::vector<std::string>{"s: criterion \"b\" pass rate 0.600 is below the minimum 0.800"}));
  // The report names it, with its kappa and confusion counts.
  const std::string html = HtmlReport(summary, records, {});
  EXPECT_NE(html.find("<td>0 (10 labelled)</td><td>4 / 1 / 4 / 1</td><td class=\"name\"><span class=\"tag "
                      "unstable\">uncalibrated</span> its judge disagrees with the human labels (kappa below "
                      "min_judge_kappa): excluded from gates"),
            std::string::npos);
  EXPECT_NE(html.find("<td>1 (10 labelled)</td><td>6 / 0 / 0 / 4</td><td class=\"name\">—</td>"), std::string::npos);

  // Without min_judge_kappa: reported, nothing left out.
  header.min_judge_kappa.reset();
  summary = SummaryJson(header, records);
  EXPECT_FALSE(summary.at("skills").at("s").at("criteria").at("a").as_object().contains("uncalibrated"));
  EXPECT_EQ(Messages(summary),
            (std::vector<std::string>{"s: criterion \"a\" pass rate 0.500 is below the minimum 0.800",
                                      "s: criterion \"b\" pass rate 0.600 is below the minimum 0.800"}));
}

}  // namespace
}  // namespace skillrunner::eval
