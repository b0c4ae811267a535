#include "runner/eval/report/html_report.h"

#include <algorithm>
#include <cstdlib>
#include <map>

#include "runner/eval/records/case_outcome.h"
#include "runner/eval/report/html_cases.h"
#include "runner/eval/report/html_charts.h"
#include "runner/eval/report/report_markup.h"

namespace skillrunner::eval {
namespace json = boost::json;
using namespace report;  // NOLINT: the report helpers are this file's vocabulary

namespace {

// The page forbids every fetch and script even if escaping were ever to miss
// something in hostile model output.
constexpr std::string_view kHead = R"(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<style>
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#222;background:#fafafa}
header,main,footer{max-width:1640px;margin:0 auto;padding:12px 20px}
header{border-bottom:1px solid #ddd;background:#fff}
h1{font-size:22px;margin:4px 0}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
h3{font-size:15px;margin:18px 0 6px}h4{font-size:13px;margin:12px 0 4px}
nav a{margin-right:14px}
dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 14px;margin:8px 0}
dl.meta dt{color:#666}dl.meta dd{margin:0}
.badge{display:inline-block;padding:2px 10px;border-radius:10px;color:#fff;font-weight:600}
.badge.pass{background:#2e7d32}.badge.breached{background:#c62828}.badge.unknown{background:#777}
.breaches li{color:#b71c1c}
.scroll{overflow-x:auto}
table{border-collapse:collapse;background:#fff;margin:4px 0;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 6px;text-align:right;vertical-align:top}
th{background:#f0f0f0}td.name,th.name{text-align:left}
td.breach{background:#ffebee;color:#b71c1c;font-weight:600}
.up{color:#2e7d32}.down{color:#c62828;font-weight:600}.same{color:#666}
.muted{color:#777}
.tag{display:inline-block;padding:0 6px;border-radius:4px;color:#fff;font-size:12px}
.tag.fail{background:#c62828}.tag.error{background:#6a1b9a}.tag.judge_error{background:#ef6c00}.tag.refused{background:#455a64}
.tag.unstable{background:#ef6c00}
.legend span{margin-right:14px}.swatch{display:inline-block;width:10px;height:10px;margin-right:4px}
.charts{display:flex;flex-wrap:wrap;gap:24px;align-items:flex-end}
details{background:#fff;border:1px solid #ddd;margin:4px 0;padding:4px 8px}
summary{cursor:pointer}.case{padding:4px 0 8px 12px}
.facts .fact{margin-right:14px;color:#555}
pre{background:#f5f5f5;padding:6px;white-space:pre-wrap;word-break:break-all;max-height:320px;overflow:auto}
.v-fail{color:#c62828}.v-pass{color:#2e7d32}.v-indeterminate{color:#777}
</style>
)";

std::string Cell(const std::string& text, std::string_view css_class = "") {
  std::string td = css_class.empty() ? "<td>" : "<td class=\"" + std::string(css_class) + "\">";
  return td + EscapeMarkup(text) + "</td>";
}

void MetaRow(std::string& html, std::string_view name, const std::string& value) {
  html += "<dt>" + EscapeMarkup(name) + "</dt><dd>" + EscapeMarkup(value) + "</dd>";
}

std::string Count(std::optional<std::int64_t> n) {
  return FormatNumber(n ? std::optional<double>(static_cast<double>(*n)) : std::nullopt);
}

std::optional<double> Ms(std::optional<std::int64_t> ms) {
  return ms ? std::optional<double>(static_cast<double>(*ms)) : std::nullopt;
}

// "76.9% of 26 cases (4 with a review-gate judge error left out)": the rate and its denominator.
std::string SchemaComplianceText(const SkillStats& totals) {
  std::string text = FormatRate(totals.schema_compliance);
  if (!totals.schema_checked) return text;
  text += " of " + Count(totals.schema_checked) + " cases";
  const std::int64_t left_out = totals.cases.value_or(*totals.schema_checked) - *totals.schema_checked;
  if (left_out > 0) text += " (" + Count(left_out) + " with a review-gate judge error left out)";
  return text;
}

// The whole run at a glance; the per-skill table below has the rest.
void TotalsRows(std::string& html, const RunSummary& summary) {
  auto row = [&](std::string_view name, const std::string& value) { MetaRow(html, name, value); };
  const SkillStats& totals = summary.totals;
  row("Cases", Count(totals.cases));
  // The progress line's figure: every gate passed, of the cases not lost to a judge error.
  if (totals.case_pass_rate) row("Cases passed", FormatRate(totals.case_pass_rate));
  row("Schema compliance", SchemaComplianceText(totals));
  if (totals.decided) {
    row("Rubric pass rate", FormatRate(totals.rubric_pass_rate) + " of " + Count(totals.decided) + " decided");
  }
  if (totals.judge_errors) row("Judge errors", Count(totals.judge_errors));
  if (totals.indeterminate) row("Left out as indeterminate", Count(totals.indeterminate));
  if (totals.expected_match) row("Expected match", FormatRate(totals.expected_match));
  if (totals.input_tokens) row("Tokens in / out", Count(totals.input_tokens) + " / " + Count(totals.output_tokens));
  if (totals.cost_usd) row("Cost", FormatUsd(totals.cost_usd) + " (judges " + FormatUsd(totals.judge_cost_usd) + ")");
  if (summary.batches) {  // design.md §10.6
    row("Batch mode", FormatUsd(summary.batch_cost_usd) + " in " + Count(*summary.batches) +
                          " batch(es); online it would have cost " + FormatUsd(summary.online_cost_usd) + "; " +
                          Count(summary.resubmitted.value_or(0)) + " request(s) resubmitted");
  }
}

std::string BaselineLine(const BaselineComparison& baseline) {
  if (baseline.status == BaselineComparison::Status::kCompared) return "run " + baseline.run_id;
  return std::string(baseline.StatusName()) + ": " + baseline.reason + " (no regression checked)";
}

std::string Header(const RunSummary& summary) {
  const std::string& status = summary.status;
  std::string badge = status == "pass" || status == "breached" ? status : "unknown";
  std::string html = "<title>" + EscapeMarkup("Eval " + summary.suite + " · " + summary.run_id) +
                     "</title>\n</head>\n<body>\n<header><h1>Eval report: " +
                     EscapeMarkup(summary.suite.empty() ? kDash : summary.suite) + " <span class=\"badge " + badge +
                     "\">" + EscapeMarkup(status.empty() ? std::string(kDash) : status) +
                     "</span></h1><dl class=\"meta\">";
  auto row = [&](std::string_view name, const std::string& value) {
    MetaRow(html, name, value.empty() ? std::string(kDash) : value);
  };
  row("Run", summary.run_id);
  row("Suite", summary.suite);
  row("Started", summary.started_at);
  row("Finished", summary.finished_at);
  row("Duration", FormatMs(static_cast<double>(summary.duration_ms)));
  // design.md §10.1: a run asked to compare that found nothing says so up front.
  if (summary.baseline) row("Baseline", BaselineLine(*summary.baseline));
  row("Concurrency", Count(summary.concurrency));
  if (summary.shard) row("Shard", *summary.shard);
  TotalsRows(html, summary);
  html +=
      "</dl><nav><a href=\"#skills\">Skills</a><a href=\"#criteria\">Criteria</a>"
      "<a href=\"#histograms\">Histograms</a><a href=\"#baseline\">Baseline</a>" +
      std::string(summary.versions ? "<a href=\"#versions\">Versions</a>" : "") +
      "<a href=\"#trends\">Trends</a><a href=\"#failures\">Failing cases</a></nav></header>\n";
  return html;
}

std::string Breaches(const RunSummary& summary) {
  std::string html = "<section id=\"breaches\"><h2>Thresholds</h2>";
  if (summary.breaches.empty()) {
    return html + "<p>" + (summary.status == "pass" ? "All thresholds held." : "No breaches recorded.") +
           "</p></section>\n";
  }
  const std::size_t n = summary.breaches.size();
  html += "<p><b>" + std::to_string(n) + " breach" + (n == 1 ? "" : "es") + "</b></p><ul class=\"breaches\">";
  for (const Breach& breach : summary.breaches) {
    // The message says it all ("triage: rubric pass rate 0.800 is below the
    // minimum 0.900"); the fields are the fallback for a bare breach.
    std::string line = breach.message;
    if (line.empty()) {
      line = breach.skill.empty() ? std::string(kDash) : breach.skill;
      if (breach.criterion) line += " / " + *breach.criterion;
      line += " — " + breach.threshold + ": actual " + FormatValue(&breach.actual) + ", limit " +
              FormatSignificant(breach.limit);
    }
    html += "<li>" + EscapeMarkup(line) + "</li>";
  }
  return html + "</ul></section>\n";
}

// Marks a cell whose threshold a breach names for this skill (not for one of
// its criteria).
bool Breached(const RunSummary& summary, std::string_view skill, std::string_view threshold) {
  return std::any_of(summary.breaches.begin(), summary.breaches.end(), [&](const Breach& breach) {
    return breach.skill == skill && breach.threshold == threshold && !breach.criterion;
  });
}

std::string ErrorCodes(const std::optional<Named<std::int64_t>>& errors) {
  if (!errors) return std::string(kDash);
  if (errors->empty()) return "0";
  std::string text;
  for (const auto& [code, count] : *errors) {
    if (!text.empty()) text += ", ";
    text += code + " " + Count(count);
  }
  return text;
}

// Judged cases that are not indeterminate, where an older summary does not say.
MaybeCount Decided(const SkillStats& skill) {
  if (skill.decided || !skill.judged) return skill.decided;
  return *skill.judged - skill.indeterminate.value_or(0);
}

std::string SkillRow(const RunSummary& summary, const std::string& id, const SkillStats& skill) {
  auto breach_class = [&](std::string_view threshold) { return Breached(summary, id, threshold) ? "breach" : ""; };
  const LatencyPercentiles& latency = skill.latency_ms;
  return "<tr><td class=\"name\">" + EscapeMarkup(id) + "</td>" + Cell(Count(skill.cases)) +
         Cell(FormatRate(skill.schema_compliance), breach_class("schema_compliance")) +
         Cell(FormatRate(skill.first_try_rate)) + Cell(FormatRate(skill.retry_rate)) +
         Cell(Count(skill.transient_retries)) + Cell(Count(skill.truncations) + " / " + Count(skill.refusals)) +
         Cell(ErrorCodes(skill.errors)) + Cell(Count(skill.judge_errors)) +
         // The pass rate is over decided cases; the judged cases it leaves
         // out (passed with an indeterminate counted criterion) are shown
         // right next to it.
         Cell(FormatRate(skill.rubric_pass_rate) + " (" + Count(Decided(skill)) + " decided, " +
                  Count(skill.indeterminate) + " left out)",
              breach_class("rubric_pass_rate")) +
         Cell(Count(skill.indeterminate) + " (" + FormatRate(skill.indeterminate_rate) + ")",
              breach_class("max_indeterminate_rate")) +
         Cell(FormatRate(skill.expected_match), breach_class("expected_match")) +
         Cell(Count(skill.input_tokens) + " / " + Count(skill.output_tokens)) +
         Cell(Count(skill.judge_input_tokens) + " / " + Count(skill.judge_output_tokens)) +
         Cell(FormatUsd(skill.cost_usd), breach_class("max_cost_usd")) +
         Cell(FormatMs(Ms(latency.p50)) + " / " + FormatMs(Ms(latency.p95)) + " / " + FormatMs(Ms(latency.p99))) +
         "</tr>";
}

std::string SkillTable(const RunSummary& summary) {
  std::string html = "<section id=\"skills\"><h2>Skills</h2>";
  if (summary.skills.empty()) return html + "<p>No skills in this run.</p></section>\n";
  html +=
      "<div class=\"scroll\"><table><thead><tr><th class=\"name\">Skill</th><th>Cases</th>"
      "<th>Schema compliance</th><th>First try</th><th>Retry rate</th>"
      "<th>Transient retries</th><th>Truncations / refusals</th><th>Errors</th>"
      "<th>Judge errors</th><th>Rubric pass rate (decided cases)</th><th>Indeterminate</th>"
      "<th>Expected match</th><th>Tokens in / out</th><th>Judge tokens in / out</th><th>Cost</th>"
      "<th>Latency p50 / p95 / p99</th></tr></thead><tbody>";
  for (const auto& [id, skill] : summary.skills) html += SkillRow(summary, id, skill);
  return html + "</tbody></table></div></section>\n";
}

// design.md §9.5: the judge against human labels: kappa (n labelled), and
// whether the criterion is left out of the gates for it.
std::string CalibrationCells(const CriterionStats& c) {
  if (!c.calibration) return Cell(std::string(kDash)) + Cell(std::string(kDash));
  const Calibration& calibration = *c.calibration;
  return Cell((calibration.kappa ? FormatSignificant(*calibration.kappa) : std::string("undefined")) + " (" +
              Count(calibration.labelled) + " labelled)") +
         Cell(Count(calibration.judge_pass_human_pass) + " / " + Count(calibration.judge_pass_human_fail) + " / " +
              Count(calibration.judge_fail_human_pass) + " / " + Count(calibration.judge_fail_human_fail));
}

std::string Stability(const CriterionStats& c) {
  std::string out;
  if (!c.counted) {
    out +=
        "<span title=\"The rubric's pass_rule decides a case's pass by other criteria; this one's verdicts "
        "and threshold still count.\">not counted in a case's pass (pass_rule)</span> ";
  }
  if (c.uncalibrated.value_or(false)) {
    out +=
        "<span class=\"tag unstable\">uncalibrated</span> its judge disagrees with the human labels "
        "(kappa below min_judge_kappa): excluded from gates ";
  }
  if (c.unstable.value_or(false)) {
    out += "<span class=\"tag unstable\">unstable</span> excluded from regression gates";
  } else if (c.unstable) {
    out += "stable";
  }
  return out.empty() ? std::string(kDash) : out;
}

// A criterion's own breach (criterion_pass_rate, or its regression).
bool CriterionBreached(const RunSummary& summary, std::string_view skill, std::string_view criterion) {
  return std::any_of(summary.breaches.begin(), summary.breaches.end(),
                     [&](const Breach& breach) { return breach.skill == skill && breach.criterion == criterion; });
}

std::string CriterionRow(const RunSummary& summary, const std::string& skill, const std::string& id,
                         const CriterionStats& c) {
  auto n = [](std::int64_t count) { return static_cast<double>(count); };
  return "<tr><td class=\"name\">" + EscapeMarkup(id) + "</td><td class=\"name\">" +
         SvgStackedBar(n(c.passed), n(c.failed), n(c.indeterminate)) + "</td>" + Cell(Count(c.passed)) +
         Cell(Count(c.failed)) + Cell(Count(c.indeterminate)) +
         Cell(FormatRate(c.pass_rate), CriterionBreached(summary, skill, id) ? "breach" : "") +
         Cell(FormatNumber(c.agreement)) + CalibrationCells(c) + "<td class=\"name\">" + Stability(c) + "</td></tr>";
}

std::string CriteriaSection(const RunSummary& summary) {
  std::string html =
      "<section id=\"criteria\"><h2>Criteria</h2><p class=\"legend\">"
      "<span><i class=\"swatch\" style=\"background:#2e7d32\"></i>passed</span>"
      "<span><i class=\"swatch\" style=\"background:#c62828\"></i>failed</span>"
      "<span><i class=\"swatch\" style=\"background:#9e9e9e\"></i>indeterminate</span></p>";
  bool any = false;
  for (const auto& [id, skill] : summary.skills) {
    if (!skill.criteria || skill.criteria->empty()) continue;
    any = true;
    html += "<h3>" + EscapeMarkup(id) +
            "</h3><table><thead><tr><th class=\"name\">Criterion</th>"
            "<th class=\"name\">Verdicts</th><th>Passed</th><th>Failed</th><th>Indeterminate</th>"
            "<th>Pass rate</th><th>Agreement</th><th>Judge vs human: kappa</th>"
            "<th>Judge pass/fail vs human pass/fail</th><th class=\"name\">Stability</th></tr></thead><tbody>";
    for (const auto& [cid, c] : *skill.criteria) html += CriterionRow(summary, id, cid, c);
    html += "</tbody></table>";
  }
  if (!any) html += "<p>No criterion verdicts in this run.</p>";
  return html + "</section>\n";
}

std::string Histograms(const RunSummary& summary, const std::vector<json::object>& records) {
  std::map<std::string, std::vector<double>, std::less<>> durations, costs;
  for (const json::object& record : records) {
    if (auto ms = CaseDurationMs(record)) durations[SkillLabel(record)].push_back(*ms);
    if (auto usd = CaseCostUsd(record)) costs[SkillLabel(record)].push_back(*usd);
  }
  std::string html = "<section id=\"histograms\"><h2>Attempts, latency and cost</h2>";
  if (summary.skills.empty()) return html + "<p>No skills in this run.</p></section>\n";
  for (const auto& [id, skill] : summary.skills) {
    std::vector<Bar> attempts;
    for (const auto& [n, count] : skill.attempts_histogram) attempts.push_back({n, static_cast<double>(count)});
    std::stable_sort(attempts.begin(), attempts.end(), [](const Bar& a, const Bar& b) {
      return std::atoll(a.label.c_str()) < std::atoll(b.label.c_str());
    });
    auto found = durations.find(std::string_view(id));
    html += "<h3>" + EscapeMarkup(id) + "</h3><div class=\"charts\"><figure>" +
            SvgHistogram("cases by number of attempts", attempts) + "</figure><figure>" +
            SvgHistogram("cases by latency",
                         LatencyBuckets(found == durations.end() ? std::vector<double>() : found->second)) +
            "</figure>";
    // Only priced skills have a cost to draw (design.md §9.4).
    if (auto cost = costs.find(std::string_view(id)); cost != costs.end()) {
      html +=
          "<figure>" + SvgHistogram("cases by cost (USD, judging included)", CostBuckets(cost->second)) + "</figure>";
    }
    html += "</div>";
  }
  return html + "</section>\n";
}

// A rate's change in points; `lower_is_better` colours a rise red (retries).
std::string DeltaCell(std::optional<double> number, bool lower_is_better = false) {
  const bool rose = number && *number > 0.0005, fell = number && *number < -0.0005;
  std::string css = rose ? (lower_is_better ? "down" : "up") : fell ? (lower_is_better ? "up" : "down") : "same";
  return Cell(FormatDeltaPoints(number), css);
}

// A count's change (tokens, dollars, milliseconds): a rise is a cost, red.
std::string CountDeltaCell(std::optional<double> delta, std::string_view unit) {
  if (!delta) return Cell(std::string(kDash), "same");
  const std::string sign = *delta > 0 ? "+" : *delta < 0 ? "−" : "±";
  const double size = std::abs(*delta);
  std::string text = unit == "$" ? sign + FormatUsd(size) : sign + FormatNumber(size) + std::string(unit);
  return Cell(text, *delta > 0 ? "down" : *delta < 0 ? "up" : "same");
}

// design.md §9.5: per gate, the cases that flipped each way.
std::string GateFlipsList(const Named<GateFlips>& flips) {
  if (flips.empty()) return "";
  std::string html = "<h3>Flips per gate</h3><ul>";
  for (const auto& [gate, entry] : flips) {
    for (const bool down : {true, false}) {
      const std::vector<CaseRef>& cases = down ? entry.pass_to_fail : entry.fail_to_pass;
      std::string names;
      for (const CaseRef& c : cases) {
        names += (names.empty() ? "" : ", ") + c.skill + "/" + c.case_id;
        if (c.repeat) names += "#" + std::to_string(*c.repeat);
      }
      const std::string css = cases.empty() ? "same" : down ? "down" : "up";
      html += "<li class=\"" + css + "\">" + EscapeMarkup(gate) + ": " + std::to_string(cases.size()) +
              (down ? " pass → fail" : " fail → pass") + (names.empty() ? "" : " (" + EscapeMarkup(names) + ")") +
              "</li>";
    }
  }
  return html + "</ul>";
}

std::string WithInterval(std::optional<double> rate, const std::optional<std::pair<double, double>>& interval) {
  std::string text = FormatRate(rate);
  if (interval) text += " (" + FormatRate(interval->first) + "–" + FormatRate(interval->second) + ")";
  return text;
}

// One row of the significance table: a gate's paired cases in both runs.
std::string PairedRow(const std::string& skill, const std::string& gate, const PairedMeasure* paired, double alpha) {
  if (paired == nullptr) return "";
  const std::int64_t down = paired->pass_to_fail, up = paired->fail_to_pass;
  const double p = paired->p_value;
  const bool significant = p < alpha && down + up > 0;
  const std::string flips = Count(down + up) + " flip" + (down + up == 1 ? "" : "s");
  std::string verdict = down + up == 0 ? "no flips"
                        : significant  ? (down > up ? "significant drop" : "significant rise")
                                       : "not significant (" + flips + ")";
  if (paired->underpowered) {
    verdict +=
        "; underpowered: " + Count(paired->cases) + " paired cases can never reach p < " + FormatSignificant(alpha);
  }
  const std::string css = significant ? (down > up ? "name breach" : "name up") : "name";
  return "<tr>" + Cell(skill, "name") + Cell(gate, "name") + Cell(Count(paired->cases)) +
         Cell(WithInterval(paired->baseline_rate, paired->baseline_interval)) +
         Cell(WithInterval(paired->rate, paired->interval)) + Cell(Count(down)) + Cell(Count(up)) +
         Cell(p < 1e-9 ? "< 1e-9" : FormatSignificant(p)) + Cell(verdict, css) + "</tr>";
}

std::string PairedRows(const std::string& id, const SkillComparison& skill, double alpha) {
  auto paired = [&](std::string_view gate) { return Find(skill.paired, gate); };
  std::string rows = PairedRow(id, "case outcome", paired("outcome"), alpha);
  rows += PairedRow(id, "schema", paired("schema"), alpha);
  rows += PairedRow(id, "expected match", paired("expected"), alpha);
  rows += PairedRow(id, "rubric", paired("rubric"), alpha);
  rows += PairedRow(id, "review gate", paired("review_gate"), alpha);
  rows += PairedRow(id, "checks", paired("checks"), alpha);
  for (const auto& [cid, entry] : skill.criteria) {
    rows += PairedRow(id, "criterion " + cid, entry.paired ? &*entry.paired : nullptr, alpha);
  }
  return rows;
}

// design.md §9.5: which drops are real and which are noise, from the cases
// both runs share.
std::string SignificanceTable(const Named<SkillComparison>& skills, double alpha, std::string_view before = "Baseline",
                              std::string_view after = "Now", std::string_view shared = "both runs") {
  std::string rows;
  for (const auto& [id, skill] : skills) rows += PairedRows(id, skill, alpha);
  if (rows.empty()) return "";
  return "<h3>Is the change real?</h3><p class=\"muted\">The cases " + std::string(shared) +
         " share, paired: each rate with its "
         "Wilson 95% interval, the cases that flipped each way, and the exact McNemar p-value. A drop gates "
         "(max_regression) only when p &lt; " +
         FormatSignificant(alpha) +
         " (regression_alpha).</p><div class=\"scroll\"><table><thead><tr><th class=\"name\">Skill</th>"
         "<th class=\"name\">Gate</th><th>Paired cases</th><th>" +
         std::string(before) + " (95% CI)</th><th>" + std::string(after) +
         " (95% CI)</th><th>Pass→fail</th><th>Fail→pass</th><th>McNemar p</th><th class=\"name\">Verdict</th></tr>"
         "</thead><tbody>" +
         rows + "</tbody></table></div>";
}

std::string DeltasRow(const std::string& id, const SkillComparison& skill) {
  std::string html =
      "<tr><td class=\"name\">" + EscapeMarkup(id) + "</td>" + DeltaCell(skill.Delta("schema_compliance_delta")) +
      DeltaCell(skill.Delta("rubric_pass_rate_delta")) + DeltaCell(skill.Delta("first_try_rate_delta")) +
      DeltaCell(skill.Delta("retry_rate_delta"), true) + DeltaCell(skill.Delta("expected_match_delta")) +
      CountDeltaCell(skill.Delta("input_tokens_delta"), "") + CountDeltaCell(skill.Delta("output_tokens_delta"), "") +
      CountDeltaCell(skill.Delta("cost_usd_delta"), "$") + CountDeltaCell(skill.Delta("latency_p50_ms_delta"), " ms") +
      CountDeltaCell(skill.Delta("latency_p95_ms_delta"), " ms") + "<td class=\"name\">";
  for (const auto& [cid, c] : skill.criteria) {
    const std::optional<double> delta = c.pass_rate_delta;
    std::string css = !delta ? "same" : *delta > 0.0005 ? "up" : *delta < -0.0005 ? "down" : "same";
    html +=
        "<span class=\"" + css + "\">" + EscapeMarkup(cid) + " " + EscapeMarkup(FormatDeltaPoints(delta)) + "</span> ";
  }
  return html + "</td></tr>";
}

// Per skill, this run minus the baseline: rates in points, counts as counts.
std::string DeltasTable(const Named<SkillComparison>& skills) {
  if (skills.empty()) return "";
  std::string html =
      "<div class=\"scroll\"><table><thead><tr><th class=\"name\">Skill</th><th>Schema compliance Δ</th>"
      "<th>Rubric pass rate Δ</th><th>First try Δ</th><th>Retry rate Δ</th><th>Expected match Δ</th>"
      "<th>Tokens in Δ</th><th>Tokens out Δ</th><th>Cost Δ</th><th>Latency p50 Δ</th><th>Latency p95 Δ</th>"
      "<th class=\"name\">Criteria Δ</th></tr></thead><tbody>";
  for (const auto& [id, skill] : skills) html += DeltasRow(id, skill);
  return html + "</tbody></table></div>";
}

// "Flipped from pass": the cases of `flipped` (CompareWithBaseline's), or `none`.
std::string FlippedTable(const std::vector<FlippedCase>& flipped, std::string_view none);

std::string BaselineSection(const RunSummary& summary) {
  std::string html = "<section id=\"baseline\"><h2>Compared with baseline</h2>";
  if (!summary.baseline) {
    return html +
           "<p>No baseline comparison in this run (use <code>--baseline last</code> or "
           "<code>--baseline RUN_ID</code>).</p></section>\n";
  }
  const BaselineComparison& baseline = *summary.baseline;
  if (baseline.status != BaselineComparison::Status::kCompared) {
    const bool none = baseline.status == BaselineComparison::Status::kNone;
    return html + "<p class=\"down\"><b>" + (none ? "No baseline:" : "Regression gate skipped:") + "</b> " +
           EscapeMarkup(baseline.reason) + ". No regression was checked in this run.</p></section>\n";
  }
  html += "<p>Baseline: run <b>" + EscapeMarkup(baseline.run_id) + "</b> started " +
          EscapeMarkup(baseline.started_at.empty() ? std::string(kDash) : baseline.started_at) +
          "</p><p class=\"muted\">Deltas are this run minus the baseline, in percentage "
          "points.</p>";
  html += DeltasTable(baseline.skills);
  html += SignificanceTable(baseline.skills, baseline.regression_alpha) + GateFlipsList(baseline.flips);
  return html + FlippedTable(baseline.flipped, "No case that passed in the baseline fails now.") + "</section>\n";
}

// design.md §11.2: each skill the suite ran at both versions, its candidate
// against its stable version (the paired comparison of summary "versions").
std::string VersionsSection(const RunSummary& summary) {
  if (!summary.versions || summary.versions->empty()) return "";
  std::string html =
      "<section id=\"versions\"><h2>Candidate against stable</h2><p class=\"muted\">Each case ran at both "
      "versions of the skill; deltas are the candidate minus the stable version, in percentage points.</p>";
  for (const VersionComparison& pair : *summary.versions) {
    const std::string name = pair.candidate + " vs " + pair.skill + "@" + std::to_string(pair.stable_version);
    // The tables of a baseline comparison, with the stable version as the baseline.
    const Named<SkillComparison> as_baseline{{name, pair.comparison}};
    html += DeltasTable(as_baseline) +
            SignificanceTable(as_baseline, pair.regression_alpha, "Stable", "Candidate", "both versions") +
            GateFlipsList(pair.flips) +
            FlippedTable(pair.flipped, "No case that passed on the stable version fails on the candidate.");
  }
  return html + "</section>\n";
}

std::string FlippedTable(const std::vector<FlippedCase>& flipped, std::string_view none) {
  std::string html = "<h3>Flipped from pass (" + std::to_string(flipped.size()) + ")</h3>";
  if (flipped.empty()) return html + "<p>" + std::string(none) + "</p>";
  html +=
      "<table><thead><tr><th class=\"name\">Skill</th><th class=\"name\">Case</th>"
      "<th>Repeat</th><th class=\"name\">Was</th><th class=\"name\">Now</th></tr></thead><tbody>";
  for (const FlippedCase& flip : flipped) {
    html += "<tr>" + Cell(flip.at.skill, "name") + Cell(flip.at.case_id, "name") +
            Cell(flip.at.repeat ? std::to_string(*flip.at.repeat) : std::string(kDash)) + Cell(flip.from, "name") +
            Cell(flip.to, "name down") + "</tr>";
  }
  return html + "</tbody></table>";
}

// The past runs with this run as the newest point: the history is read
// before this run is recorded, and a resumed run may already be in it under
// its own id (then this summary, the fuller one, replaces that point).
std::vector<TrendPoint> WithCurrentRun(const RunSummary& summary, std::vector<TrendPoint> trend) {
  if (summary.run_id.empty()) return trend;
  std::erase_if(trend, [&](const TrendPoint& point) { return point.run_id == summary.run_id; });
  trend.push_back({summary.run_id, summary.started_at, summary});
  return trend;
}

std::string TrendSection(const RunSummary& summary, const std::vector<TrendPoint>& trend) {
  std::string html = "<section id=\"trends\"><h2>Trends</h2>";
  if (trend.size() < 2) {
    return html + "<p>Trends need at least two runs of this suite; so far there " +
           (trend.size() == 1 ? "is 1" : "are " + std::to_string(trend.size())) + ".</p></section>\n";
  }
  std::vector<std::string> labels;
  for (const TrendPoint& point : trend) {
    labels.push_back(point.started_at.empty() ? point.run_id : point.started_at + " " + point.run_id);
  }
  html +=
      "<p class=\"legend\"><span><i class=\"swatch\" style=\"background:#2e7d32\"></i>rubric "
      "pass rate</span><span><i class=\"swatch\" style=\"background:#1565c0\"></i>schema "
      "compliance</span> over the last " +
      std::to_string(trend.size()) + " runs, oldest left.</p>";
  for (const auto& [id, unused] : summary.skills) {
    (void)unused;
    Series pass_rate{"rubric pass rate", "#2e7d32", {}};
    Series compliance{"schema compliance", "#1565c0", {}};
    for (const TrendPoint& point : trend) {
      const SkillStats* skill = point.summary.Skill(id);
      pass_rate.values.push_back(skill ? skill->rubric_pass_rate : std::nullopt);
      compliance.values.push_back(skill ? skill->schema_compliance : std::nullopt);
    }
    html += "<h3>" + EscapeMarkup(id) + "</h3>" + SvgRateLines(labels, {pass_rate, compliance});
  }
  return html + "</section>\n";
}

}  // namespace

std::string HtmlReport(const RunSummary& summary, const std::vector<json::object>& records,
                       const std::vector<TrendPoint>& trend) {
  std::string html(kHead);
  html += Header(summary);
  html += "<main>\n";
  html += Breaches(summary);
  html += SkillTable(summary);
  html += CriteriaSection(summary);
  html += Histograms(summary, records);
  html += BaselineSection(summary);
  html += VersionsSection(summary);
  html += TrendSection(summary, WithCurrentRun(summary, trend));
  html += FailingCasesSection(records);
  html +=
      "\n</main>\n<footer class=\"muted\">Written by skillrunner eval. Judge errors never "
      "enter a pass rate; judged cases that passed with an indeterminate counted criterion are left out of "
      "the rubric pass rate and counted apart.</footer>\n"
      "</body>\n</html>\n";
  return html;
}

}  // namespace skillrunner::eval
