#include "runner/eval/report/html_report.h"

#include <gtest/gtest.h>

#include "runner/eval/regression.h"
#include "tests/runner/eval/report_test_records.h"
#include "tests/runner/eval/summary_json.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;
using namespace report_records;

// Python's HTML parser as the judge of well-formedness: every non-void
// element closed in order, no <script>/<link>/<img> elements, no event
// handler attributes, no src/href but same-page anchors. Then prints the
// visible text (style excluded), whitespace collapsed, as a person reads it.

json::object FullSummary() {
  return ParseObject(R"({
    "run_id": "2025-01-02-ab12", "suite": "nightly", "started_at": "2025-01-02T02:00:00Z",
    "finished_at": "2025-01-02T02:03:00Z", "duration_ms": 180000, "concurrency": 16,
    "totals": {"cases": 5},
    "skills": {
      "extract": {"cases": 4, "schema_compliance": 0.98, "first_try_rate": 0.75, "retry_rate": 0.25,
        "transient_retries": 3, "truncations": 1, "refusals": 0, "errors": {"MAX_RETRIES_EXCEEDED": 1},
        "judged": 10, "judge_errors": 0, "rubric_pass_rate": 0.8, "indeterminate": 2,
        "indeterminate_rate": 0.2, "expected_match": null, "input_tokens": 1200, "output_tokens": 300,
        "judge_input_tokens": 900, "judge_output_tokens": 90,
        "latency_ms": {"p50": 120, "p95": 950, "p99": 1500},
        "attempts_histogram": {"1": 3, "2": 1, "10": 1},
        "criteria": {"faithful": {"judged": 10, "passed": 7, "failed": 2, "indeterminate": 1,
                                  "pass_rate": 0.778, "agreement": 0.6, "unstable": true},
                     "complete": {"judged": 10, "passed": 9, "failed": 0, "indeterminate": 1,
                                  "pass_rate": 1, "agreement": 1, "unstable": false}}},
      "summarise": {"cases": 1, "schema_compliance": 1, "rubric_pass_rate": null, "judge_errors": 1}},
    "breaches": [{"skill": "extract", "threshold": "rubric_pass_rate", "limit": 0.9, "actual": 0.8,
                  "message": "rubric pass rate 80.0% is below 90.0%"}],
    "status": "breached"})");
}

std::vector<json::object> Records() {
  return {PassRecord("extract", "c4"), FailRecord("extract", "c1"), ErrorRecord("extract", "c2"),
          JudgeErrorRecord("summarise", "s1", 2), PassRecord("extract", "c3")};
}

std::vector<TrendPoint> Trend() {
  std::vector<TrendPoint> trend;
  for (auto [id, pass, compliance] :
       {std::tuple{"r1", 0.9, 1.0}, std::tuple{"r2", 0.95, 0.99}, std::tuple{"2025-01-02-ab12", 0.8, 0.98}}) {
    json::object skills{{"extract", json::object{{"rubric_pass_rate", pass}, {"schema_compliance", compliance}}}};
    trend.push_back({id, "2025-01-0" + std::to_string(trend.size()) + "T02:00:00Z",
                     RunSummary::FromJson(json::object{{"skills", skills}})});
  }
  return trend;
}

json::object WithBaseline(json::object summary, const std::vector<json::object>& records) {
  BaselineRun baseline{
      "r2",
      "2025-01-01T02:00:00Z",
      RunSummary::FromJson(ParseObject(R"({"skills": {"extract": {"schema_compliance": 1,
                                       "rubric_pass_rate": 0.95, "first_try_rate": 0.9, "input_tokens": 1000,
                                       "latency_ms": {"p50": 100, "p95": 900}, "criteria": {
                                       "faithful": {"pass_rate": 0.9}, "complete": {"pass_rate": 1}}}}})")),
      {{"extract/c1", CaseOutcome::kPass}, {"extract/c2", CaseOutcome::kPass}, {"extract/c3", CaseOutcome::kPass}},
      {}};
  summary["baseline"] = CompareWithBaseline(summary, records, baseline);
  return summary;
}

class HtmlReportTest : public ::testing::Test {
 protected:
  // The checker's output for `html`, and its visible text in `text_`.
  std::string Check(const std::string& html) {
    std::string output = testing::RunPython(tree_, testing::kHtmlCheckScript, tree_.Write("report.html", html));
    std::size_t at = output.find("TEXT: ");
    text_ = at == std::string::npos ? "" : output.substr(at + 6);
    return output.substr(0, at == std::string::npos ? output.size() : at + 6);
  }
  bool Shows(std::string_view snippet) const { return text_.find(snippet) != std::string::npos; }

  TempTree tree_;
  std::string text_;
};

TEST_F(HtmlReportTest, IsWellFormedAndSelfContained) {
  std::vector<json::object> records = Records();
  std::string html = HtmlReport(WithBaseline(FullSummary(), records), records, Trend());
  EXPECT_EQ(Check(html), testing::kHtmlClean);
  for (std::string_view outside : {"http://", "https://", "src=", "<link", "<script", "url(", "@import", "//fonts"}) {
    EXPECT_EQ(html.find(outside), std::string::npos) << outside;
  }
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
}

TEST_F(HtmlReportTest, HostileModelOutputIsShownAsText) {
  json::object record = FailRecord("extract", "<img src=x onerror=alert(1)>");
  record["result"].as_object()["attempts"].as_array()[0].as_object()["raw"] = "<script>alert(1)</script>";
  record["review"].as_object()["issues"] = json::array{"</details></section><b>broken"};
  std::string html = HtmlReport(FullSummary(), {record}, {});

  EXPECT_EQ(Check(html), testing::kHtmlClean);
  EXPECT_NE(html.find("<pre>&lt;script&gt;alert(1)&lt;/script&gt;</pre>"), std::string::npos);
  EXPECT_TRUE(Shows("<script>alert(1)</script>"));
  EXPECT_TRUE(
      Shows("fail REVIEW_FAILED extract / <img src=x onerror=alert(1)> — </details></section><b>broken "
            "(+1 more)"))
      << text_;
}

TEST_F(HtmlReportTest, ShowsTheHeaderBreachesAndSkillTable) {
  Check(HtmlReport(FullSummary(), Records(), {}));
  EXPECT_TRUE(
      Shows("Eval report: nightly breached Run 2025-01-02-ab12 Suite nightly Started "
            "2025-01-02T02:00:00Z Finished 2025-01-02T02:03:00Z Duration 3.0 min "
            "Concurrency 16 Cases 5 Schema compliance —"))
      << text_;
  EXPECT_TRUE(Shows("1 breach rubric pass rate 80.0% is below 90.0%")) << text_;
  EXPECT_TRUE(
      Shows("extract 4 98.0% 75.0% 25.0% 3 1 / 0 MAX_RETRIES_EXCEEDED 1 0 80.0% (8 decided, 2 left out) 2 (20.0%) "
            "— 1200 / 300 900 / 90 — 120 ms / 950 ms / 1.5 s"))
      << text_;
  EXPECT_TRUE(Shows("summarise 1 100.0% — — — — / — — 1 — (— decided, — left out) — (—) — — / — — / — — — / — / —"))
      << text_;
  std::string html = HtmlReport(FullSummary(), Records(), {});
  EXPECT_NE(html.find("<td class=\"breach\">80.0% (8 decided, 2 left out)</td>"), std::string::npos);
}

// design.md §9.4: what each skill's cases cost, and the run's, judges apart.
TEST_F(HtmlReportTest, ShowsTheCostOfEachSkillAndTheRun) {
  json::object summary = FullSummary();
  summary["totals"].as_object()["cost_usd"] = 0.04321;
  summary["totals"].as_object()["judge_cost_usd"] = 0.0012;
  summary["skills"].as_object()["extract"].as_object()["cost_usd"] = 12.5;
  Check(HtmlReport(summary, Records(), {}));
  EXPECT_TRUE(Shows("Cost $0.0432 (judges $0.0012)")) << text_;
  EXPECT_TRUE(Shows("900 / 90 $12.50 120 ms")) << text_;
}

TEST_F(HtmlReportTest, ShowsCriterionBarsAndUnstableFlag) {
  std::string html = HtmlReport(FullSummary(), Records(), {});
  Check(html);
  EXPECT_TRUE(
      Shows("faithful 7 passed 2 failed 1 indeterminate 7 2 1 77.8% 0.6 — — unstable excluded "
            "from regression gates complete 9 passed 1 indeterminate 9 0 1 100.0% 1 — — stable"))
      << text_;
  EXPECT_NE(html.find("<rect x=\"0.0\" y=\"0.0\" width=\"168.0\" height=\"16.0\" fill=\"#2e7d32\">"
                      "<title>7 passed</title></rect>"),
            std::string::npos);
}

TEST_F(HtmlReportTest, DrawsAttemptAndLatencyHistograms) {
  Check(HtmlReport(FullSummary(), Records(), {}));
  // Bars in numeric order of attempts (1, 2, 10), each labelled with its count.
  EXPECT_TRUE(Shows("extract cases by number of attempts 1: 3 3 1 2: 1 1 2 10: 1 1 10")) << text_;
  // extract's case durations: 300, 300, 260, 300 ms in 50 ms buckets.
  EXPECT_TRUE(Shows("cases by latency ≥0 ms: 0 0 ≥0 ms ≥50 ms: 0 0 ≥50 ms")) << text_;
  EXPECT_TRUE(Shows("≥250 ms: 1 1 ≥250 ms ≥300 ms: 3 3 ≥300 ms cases by latency")) << text_;
}

// design.md §9.4: each case's cost (judging included) in round dollar buckets;
// a skill with no priced case draws none.
TEST_F(HtmlReportTest, DrawsACostPerCaseHistogramForPricedSkills) {
  std::vector<json::object> records = Records();
  const double costs[] = {0.0004, 0.0011, 0.0013};
  int priced = 0;
  for (json::object& record : records) {
    if (record.at("skill") != "extract" || !record.contains("result") || priced >= 3) continue;
    record["result"].as_object()["metrics"].as_object()["cost_usd"] = costs[priced];
    if (priced == 2)
      record["judge_usage"] = json::object{{"input_tokens", 10}, {"output_tokens", 1}, {"cost_usd", 0.0002}};
    ++priced;
  }
  ASSERT_EQ(priced, 3);
  Check(HtmlReport(FullSummary(), records, {}));
  // Cases at $0.0004, $0.0011 and $0.0015 in $0.0002 buckets up to $0.0014.
  EXPECT_TRUE(
      Shows("cases by cost (USD, judging included) ≥$0: 0 0 ≥$0 ≥$0.0002: 0 0 ≥$0.0002 "
            "≥$0.0004: 1 1 ≥$0.0004"))
      << text_;
  EXPECT_TRUE(Shows("≥$0.001: 1 1 ≥$0.001 ≥$0.0012: 0 0 ≥$0.0012 ≥$0.0014: 1 1 ≥$0.0014 cases by cost")) << text_;
  const std::string html = HtmlReport(FullSummary(), records, {});
  const std::size_t summarise = html.find("<h3>summarise</h3>");
  ASSERT_NE(summarise, std::string::npos);
  const std::string summarise_charts = html.substr(summarise, html.find("</section>", summarise) - summarise);
  EXPECT_EQ(summarise_charts.find("cases by cost"), std::string::npos) << "summarise has no priced case";
}

// design.md §9.5: the report says which changes are real and which are noise.
TEST_F(HtmlReportTest, SaysWhichDropsAreSignificantAndWhichAreNoise) {
  std::vector<json::object> records;
  BaselineRun baseline{"r2", "2025-01-01T02:00:00Z", RunSummary::FromJson(ParseObject(R"({"skills": {}})")), {}, {}};
  for (int i = 0; i < 50; ++i) {
    const std::string id = "c" + std::to_string(i);
    baseline.outcomes["extract/" + id] = i < 45 ? CaseOutcome::kPass : CaseOutcome::kFail;
    baseline.outcomes["summarise/" + id] = i < 45 ? CaseOutcome::kPass : CaseOutcome::kFail;
    records.push_back(i < 3 || i >= 45 ? FailRecord("extract", id) : PassRecord("extract", id));
    records.push_back(i < 12 || i >= 45 ? FailRecord("summarise", id) : PassRecord("summarise", id));
  }
  for (int i = 0; i < 5; ++i) {  // design.md §12.3: five pairs can never be significant at 0.05
    const std::string id = "t" + std::to_string(i);
    baseline.outcomes["tiny/" + id] = CaseOutcome::kPass;
    records.push_back(i < 3 ? FailRecord("tiny", id) : PassRecord("tiny", id));
  }
  json::object summary = FullSummary();
  summary["skills"].as_object()["tiny"] = json::object{{"cases", 5}};
  summary["baseline"] = CompareWithBaseline(summary, records, baseline);
  Check(HtmlReport(summary, records, {}));
  EXPECT_TRUE(Shows("Is the change real? The cases both runs share, paired")) << text_;
  EXPECT_TRUE(
      Shows("extract case outcome 50 90.0% (78.6%–95.7%) 84.0% (71.5%–91.7%) 3 0 0.25 not significant (3 flips)"))
      << text_;
  EXPECT_TRUE(Shows("3 0 0.25 not significant (3 flips); underpowered: 5 paired cases can never reach p < 0.05"))
      << text_;
  EXPECT_EQ(summary.at("baseline").at("skills").at("tiny").at("paired").at("outcome").at("underpowered"), true);
  EXPECT_FALSE(summary.at("baseline")
                   .at("skills")
                   .at("extract")
                   .at("paired")
                   .at("outcome")
                   .as_object()
                   .contains("underpowered"));
  EXPECT_TRUE(Shows("extract schema 50 100.0% (92.9%–100.0%) 100.0% (92.9%–100.0%) 0 0 1 no flips")) << text_;
  EXPECT_TRUE(Shows("summarise case outcome 50 90.0% (78.6%–95.7%) 66.0% (52.2%–77.6%) 12 0 0.000488 significant drop"))
      << text_;
  EXPECT_TRUE(Shows("extract criterion faithful 0 — — 0 0 1 no flips")) << text_;  // no baseline verdicts
}

TEST_F(HtmlReportTest, ShowsBaselineDeltasAndFlippedCases) {
  std::vector<json::object> records = Records();
  std::string html = HtmlReport(WithBaseline(FullSummary(), records), records, {});
  Check(html);
  EXPECT_TRUE(Shows("Baseline: run r2 started 2025-01-01T02:00:00Z Deltas are")) << text_;
  // What changed besides the rates: first try, tokens and latency (a rise in cost or time is red).
  EXPECT_TRUE(Shows("extract -2.0 pp -15.0 pp -15.0 pp — — +200 — — +20 ms +50 ms faithful -12.2 pp complete ±0.0 pp"))
      << text_;
  EXPECT_NE(html.find("<td class=\"down\">+20 ms</td>"), std::string::npos);
  EXPECT_TRUE(
      Shows("Flipped from pass (2) Skill Case Repeat Was Now extract c1 — pass fail "
            "extract c2 — pass error"))
      << text_;
  EXPECT_NE(html.find("<td class=\"down\">-15.0 pp</td>"), std::string::npos);
}

TEST_F(HtmlReportTest, ListsFailuresErrorsAndJudgeErrorsApart) {
  Check(HtmlReport(FullSummary(), Records(), {}));
  EXPECT_TRUE(Shows("Failed (1)")) << text_;
  EXPECT_TRUE(
      Shows("fail REVIEW_FAILED extract / c1 — phone number invented (+1 more) took 300 ms Why it failed "
            "phone number invented criterion faithful failed: the phone is not in the text"))
      << text_;
  EXPECT_TRUE(Shows("Errors (1)")) << text_;
  EXPECT_TRUE(Shows("error SCHEMA_INVALID extract / c2 — MAX_RETRIES_EXCEEDED: output invalid after 2 attempts"))
      << text_;
  EXPECT_TRUE(
      Shows("Attempts (2) # 1 kind validation temperature 0.2 tokens in/out 100 / 9 took "
            "120 ms /email: does not match format email {\"email\":\"nope\"}"))
      << text_;
  EXPECT_TRUE(
      Shows("Judge errors (1) The judge gave no usable verdict. These cases count neither "
            "as passed nor as failed; the rubric pass rate leaves them out. judge_error "
            "summarise / s1 #2 — PROVIDER_UNAVAILABLE: judge model answered 503 three times"))
      << text_;
}

// design.md §11.5: refused cases are a list of their own, in a colour of their own; none refused, no list.
TEST_F(HtmlReportTest, RefusedCasesAreListedApartInTheirOwnColour) {
  json::object refused = ErrorRecord("extract", "c9");
  refused["error"].as_object()["code"] = "REFUSED";
  refused["error"].as_object()["message"] = "the model refused to answer: not that";
  std::vector<json::object> records = Records();
  records.push_back(refused);
  const std::string html = HtmlReport(FullSummary(), records, {});
  Check(html);
  EXPECT_TRUE(
      Shows("Refused (1) The model refused, or the provider's filter withheld the answer (REFUSED, "
            "CONTENT_FILTERED). Counted apart from failures: the refusal rate. refused REFUSED extract / c9 — "
            "REFUSED: the model refused to answer: not that"))
      << text_;
  EXPECT_NE(html.find(".tag.refused{background:#455a64}"), std::string::npos);
  EXPECT_NE(html.find("<span class=\"tag refused\">refused</span>"), std::string::npos);
  EXPECT_EQ(HtmlReport(FullSummary(), Records(), {}).find("id=\"refused\""), std::string::npos);
}

TEST_F(HtmlReportTest, TruncatesLongRawTextToFourKilobytes) {
  json::object record = ErrorRecord("extract", "c2");
  record["error"].as_object()["attempts"].as_array()[0].as_object()["raw"] = std::string(10000, 'x');
  std::string html = HtmlReport(FullSummary(), {record}, {});
  Check(html);
  EXPECT_TRUE(Shows("… 5904 more bytes not shown (see results.jsonl).")) << text_;
  EXPECT_NE(html.find("<pre>" + std::string(4096, 'x') + "</pre>"), std::string::npos);
}

std::size_t Count(const std::string& html, std::string_view what) {
  std::size_t count = 0;
  for (std::size_t at = html.find(what); at != std::string::npos; at = html.find(what, at + 1)) {
    ++count;
  }
  return count;
}

TEST_F(HtmlReportTest, DrawsTrendLinesOverPastRunsEndingWithThisRun) {
  // The history already holds this run (a resumed run): its point is replaced.
  std::string html = HtmlReport(FullSummary(), {}, Trend());
  EXPECT_EQ(Check(html), testing::kHtmlClean);
  EXPECT_TRUE(Shows("over the last 3 runs, oldest left.")) << text_;
  EXPECT_NE(html.find("<title>2025-01-01T02:00:00Z r2 · rubric pass rate: 95.0%</title>"), std::string::npos);
  EXPECT_NE(html.find("<title>2025-01-02T02:00:00Z 2025-01-02-ab12 · schema compliance: "
                      "98.0%</title>"),
            std::string::npos);
  // extract: two lines (pass rate, compliance); summarise has only this run's
  // compliance, a lone point without a line.
  EXPECT_EQ(Count(html, "<polyline"), 2u);
  EXPECT_EQ(Count(html, "<circle"), 7u);

  // Read before this run was recorded: this run is added as the newest point.
  html = HtmlReport(FullSummary(), {}, {Trend()[0], Trend()[1]});
  Check(html);
  EXPECT_TRUE(Shows("over the last 3 runs, oldest left.")) << text_;
  EXPECT_NE(html.find("<title>2025-01-02T02:00:00Z 2025-01-02-ab12 · rubric pass rate: "
                      "80.0%</title>"),
            std::string::npos);

  Check(HtmlReport(FullSummary(), {}, {}));
  EXPECT_TRUE(Shows("Trends need at least two runs of this suite; so far there is 1.")) << text_;
}

TEST_F(HtmlReportTest, OddOrEmptyInputStillRenders) {
  EXPECT_EQ(Check(HtmlReport(RunSummary{}, {}, {})), testing::kHtmlClean);
  EXPECT_TRUE(Shows("Eval report: — — Run — Suite — Started —")) << text_;
  std::vector<json::object> odd{json::object(),
                                ParseObject(R"({"skill": 1, "case": [], "error": {"code": 5, "attempts": "many"}})"),
                                ParseObject(
                                    R"({"skill": "s", "case": "c", "result": {"attempts": [null, 3, {"raw": {"a": 1}}]},
                      "review": {"pass": false, "issues": [1, null], "criteria_results": [null, {}]}})")};
  json::object summary = ParseObject(R"({"skills": {"s": null, "t": {"criteria": {"x": 1},
    "latency_ms": [], "attempts_histogram": {"a": "b"}}}, "breaches": [null, 3], "baseline": {
    "skills": {"s": 1}, "flipped": [null]}, "totals": null, "status": 7})");
  EXPECT_EQ(Check(HtmlReport(summary, odd, {TrendPoint{}, TrendPoint{}})), testing::kHtmlClean);
}

}  // namespace
}  // namespace skillrunner::eval
