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

// "76.9% of 26 cases (4 with a review-gate judge error left out)": the rate and its denominator.
std::string SchemaComplianceText(const json::object& totals) {
  std::string text = FormatRate(NumberAt(&totals, "schema_compliance"));
  const std::optional<double> checked = NumberAt(&totals, "schema_checked");
  if (!checked) return text;
  text += " of " + FormatNumber(checked) + " cases";
  const double left_out = NumberAt(&totals, "cases").value_or(*checked) - *checked;
  if (left_out > 0) text += " (" + FormatNumber(left_out) + " with a review-gate judge error left out)";
  return text;
}

// The whole run at a glance; the per-skill table below has the rest.
void TotalsRows(std::string& html, const json::object& summary, const json::object& run_totals) {
  auto row = [&](std::string_view name, const std::string& value) { MetaRow(html, name, value); };
  const json::object* totals = &run_totals;
  row("Cases", FormatValue(totals->if_contains("cases")));
  // The progress line's figure: every gate passed, of the cases not lost to a judge error.
  if (totals->contains("case_pass_rate")) row("Cases passed", FormatRate(NumberAt(totals, "case_pass_rate")));
  row("Schema compliance", SchemaComplianceText(*totals));
  if (totals->contains("rubric_pass_rate")) {
    row("Rubric pass rate", FormatRate(NumberAt(totals, "rubric_pass_rate")) + " of " +
                                FormatValue(totals->if_contains("decided")) + " decided");
  }
  if (totals->contains("judge_errors")) row("Judge errors", FormatValue(totals->if_contains("judge_errors")));
  if (totals->contains("indeterminate")) {
    row("Left out as indeterminate", FormatValue(totals->if_contains("indeterminate")));
  }
  if (totals->contains("expected_match")) row("Expected match", FormatRate(NumberAt(totals, "expected_match")));
  if (totals->contains("input_tokens")) {
    row("Tokens in / out",
        FormatValue(totals->if_contains("input_tokens")) + " / " + FormatValue(totals->if_contains("output_tokens")));
  }
  if (auto cost = NumberAt(totals, "cost_usd")) {
    row("Cost", FormatUsd(cost) + " (judges " + FormatUsd(NumberAt(totals, "judge_cost_usd")) + ")");
  }
  if (summary.contains("batches")) {  // design.md §10.6
    row("Batch mode", FormatUsd(NumberAt(&summary, "batch_cost_usd")) + " in " +
                          FormatValue(summary.if_contains("batches")) + " batch(es); online it would have cost " +
                          FormatUsd(NumberAt(&summary, "online_cost_usd")) + "; " +
                          FormatValue(summary.if_contains("resubmitted")) + " request(s) resubmitted");
  }
}

std::string Header(const json::object& summary) {
  std::string_view run_id = TextAt(&summary, "run_id");
  std::string_view suite = TextAt(&summary, "suite");
  std::string status(TextAt(&summary, "status"));
  std::string badge = status == "pass" || status == "breached" ? status : "unknown";
  std::string html =
      "<title>" + EscapeMarkup("Eval " + std::string(suite) + " · " + std::string(run_id)) +
      "</title>\n</head>\n<body>\n<header><h1>Eval report: " + EscapeMarkup(suite.empty() ? kDash : suite) +
      " <span class=\"badge " + badge + "\">" + EscapeMarkup(status.empty() ? std::string(kDash) : status) +
      "</span></h1><dl class=\"meta\">";
  auto row = [&](std::string_view name, const std::string& value) { MetaRow(html, name, value); };
  row("Run", FormatValue(summary.if_contains("run_id")));
  row("Suite", FormatValue(summary.if_contains("suite")));
  row("Started", FormatValue(summary.if_contains("started_at")));
  row("Finished", FormatValue(summary.if_contains("finished_at")));
  row("Duration", FormatMs(NumberAt(&summary, "duration_ms")));
  // design.md §10.1: a run asked to compare that found nothing says so up front.
  if (const json::object* baseline = ObjectAt(&summary, "baseline")) {
    const std::string_view status = TextAt(baseline, "status");
    row("Baseline",
        status == "none" || status == "skipped"
            ? std::string(status) + ": " + std::string(TextAt(baseline, "reason")) + " (no regression checked)"
            : "run " + std::string(TextAt(baseline, "run_id")));
  }
  row("Concurrency", FormatValue(summary.if_contains("concurrency")));
  if (summary.contains("shard")) row("Shard", FormatValue(summary.if_contains("shard")));
  if (const json::object* totals = ObjectAt(&summary, "totals")) TotalsRows(html, summary, *totals);
  html +=
      "</dl><nav><a href=\"#skills\">Skills</a><a href=\"#criteria\">Criteria</a>"
      "<a href=\"#histograms\">Histograms</a><a href=\"#baseline\">Baseline</a>" +
      std::string(summary.contains("versions") ? "<a href=\"#versions\">Versions</a>" : "") +
      "<a href=\"#trends\">Trends</a><a href=\"#failures\">Failing cases</a></nav></header>\n";
  return html;
}

std::string Breaches(const json::object& summary) {
  const json::array* breaches = ArrayAt(&summary, "breaches");
  std::string html = "<section id=\"breaches\"><h2>Thresholds</h2>";
  if (breaches == nullptr || breaches->empty()) {
    return html + "<p>" + (TextAt(&summary, "status") == "pass" ? "All thresholds held." : "No breaches recorded.") +
           "</p></section>\n";
  }
  html += "<p><b>" + std::to_string(breaches->size()) + " breach" + (breaches->size() == 1 ? "" : "es") +
          "</b></p><ul class=\"breaches\">";
  for (const json::value& value : *breaches) {
    const json::object* breach = value.is_object() ? &value.as_object() : nullptr;
    // The message says it all ("triage: rubric pass rate 0.800 is below the
    // minimum 0.900"); the fields are the fallback for a bare breach.
    std::string line(TextAt(breach, "message"));
    if (line.empty()) {
      line = FormatValue(breach ? breach->if_contains("skill") : nullptr);
      if (std::string_view criterion = TextAt(breach, "criterion"); !criterion.empty()) {
        line += " / " + std::string(criterion);
      }
      line += " — " + FormatValue(breach ? breach->if_contains("threshold") : nullptr) + ": actual " +
              FormatValue(breach ? breach->if_contains("actual") : nullptr) + ", limit " +
              FormatValue(breach ? breach->if_contains("limit") : nullptr);
    }
    html += "<li>" + EscapeMarkup(line) + "</li>";
  }
  return html + "</ul></section>\n";
}

// Marks a cell whose threshold a breach names for this skill (not for one of
// its criteria).
bool Breached(const json::object& summary, std::string_view skill, std::string_view threshold) {
  const json::array* breaches = ArrayAt(&summary, "breaches");
  if (breaches == nullptr) return false;
  return std::any_of(breaches->begin(), breaches->end(), [&](const json::value& value) {
    const json::object* breach = value.is_object() ? &value.as_object() : nullptr;
    return TextAt(breach, "skill") == skill && TextAt(breach, "threshold") == threshold &&
           TextAt(breach, "criterion").empty();
  });
}

std::string ErrorCodes(const json::object* errors) {
  if (errors == nullptr) return std::string(kDash);
  if (errors->empty()) return "0";
  std::string text;
  for (const auto& [code, count] : *errors) {
    if (!text.empty()) text += ", ";
    text += std::string(code) + " " + FormatValue(&count);
  }
  return text;
}

std::string SkillTable(const json::object& summary, const json::object* skills) {
  std::string html = "<section id=\"skills\"><h2>Skills</h2>";
  if (skills == nullptr || skills->empty()) return html + "<p>No skills in this run.</p></section>\n";
  html +=
      "<div class=\"scroll\"><table><thead><tr><th class=\"name\">Skill</th><th>Cases</th>"
      "<th>Schema compliance</th><th>First try</th><th>Retry rate</th>"
      "<th>Transient retries</th><th>Truncations / refusals</th><th>Errors</th>"
      "<th>Judge errors</th><th>Rubric pass rate (decided cases)</th><th>Indeterminate</th>"
      "<th>Expected match</th><th>Tokens in / out</th><th>Judge tokens in / out</th><th>Cost</th>"
      "<th>Latency p50 / p95 / p99</th></tr></thead><tbody>";
  for (const auto& [id, value] : *skills) {
    const json::object* skill = value.is_object() ? &value.as_object() : nullptr;
    const json::object* latency = ObjectAt(skill, "latency_ms");
    auto count = [&](std::string_view key) { return FormatNumber(NumberAt(skill, key)); };
    auto decided = [&] {
      if (auto n = NumberAt(skill, "decided")) return FormatNumber(n);
      auto judged = NumberAt(skill, "judged");
      return FormatNumber(judged ? std::optional<double>(*judged - NumberAt(skill, "indeterminate").value_or(0))
                                 : std::nullopt);
    };
    auto breach_class = [&](std::string_view threshold) { return Breached(summary, id, threshold) ? "breach" : ""; };
    html += "<tr><td class=\"name\">" + EscapeMarkup(id) + "</td>" + Cell(count("cases")) +
            Cell(FormatRate(NumberAt(skill, "schema_compliance")), breach_class("schema_compliance")) +
            Cell(FormatRate(NumberAt(skill, "first_try_rate"))) + Cell(FormatRate(NumberAt(skill, "retry_rate"))) +
            Cell(count("transient_retries")) + Cell(count("truncations") + " / " + count("refusals")) +
            Cell(ErrorCodes(ObjectAt(skill, "errors"))) + Cell(count("judge_errors")) +
            // The pass rate is over decided cases; the judged cases it leaves
            // out (passed with an indeterminate counted criterion) are shown
            // right next to it.
            Cell(FormatRate(NumberAt(skill, "rubric_pass_rate")) + " (" + decided() + " decided, " +
                     count("indeterminate") + " left out)",
                 breach_class("rubric_pass_rate")) +
            Cell(count("indeterminate") + " (" + FormatRate(NumberAt(skill, "indeterminate_rate")) + ")",
                 breach_class("max_indeterminate_rate")) +
            Cell(FormatRate(NumberAt(skill, "expected_match")), breach_class("expected_match")) +
            Cell(count("input_tokens") + " / " + count("output_tokens")) +
            Cell(count("judge_input_tokens") + " / " + count("judge_output_tokens")) +
            Cell(FormatUsd(NumberAt(skill, "cost_usd")), breach_class("max_cost_usd")) +
            Cell(FormatMs(NumberAt(latency, "p50")) + " / " + FormatMs(NumberAt(latency, "p95")) + " / " +
                 FormatMs(NumberAt(latency, "p99"))) +
            "</tr>";
  }
  return html + "</tbody></table></div></section>\n";
}

// design.md §9.5: the judge against human labels: kappa (n labelled), and
// whether the criterion is left out of the gates for it.
std::string CalibrationCells(const json::object* c) {
  const json::object* calibration = ObjectAt(c, "calibration");
  if (calibration == nullptr) return Cell(std::string(kDash)) + Cell(std::string(kDash));
  const std::optional<double> kappa = NumberAt(calibration, "kappa");
  const json::object* confusion = ObjectAt(calibration, "confusion");
  auto n = [&](std::string_view key) { return FormatNumber(NumberAt(confusion, key)); };
  return Cell((kappa ? FormatSignificant(*kappa) : std::string("undefined")) + " (" +
              FormatNumber(NumberAt(calibration, "labelled")) + " labelled)") +
         Cell(n("judge_pass_human_pass") + " / " + n("judge_pass_human_fail") + " / " + n("judge_fail_human_pass") +
              " / " + n("judge_fail_human_fail"));
}

std::string Stability(const json::object* c) {
  const json::value* unstable = c ? c->if_contains("unstable") : nullptr;
  const json::value* uncalibrated = c ? c->if_contains("uncalibrated") : nullptr;
  const json::value* counted = c ? c->if_contains("counted") : nullptr;
  std::string out;
  if (counted && counted->is_bool() && !counted->as_bool()) {
    out +=
        "<span title=\"The rubric's pass_rule decides a case's pass by other criteria; this one's verdicts "
        "and threshold still count.\">not counted in a case's pass (pass_rule)</span> ";
  }
  if (uncalibrated && uncalibrated->is_bool() && uncalibrated->as_bool()) {
    out +=
        "<span class=\"tag unstable\">uncalibrated</span> its judge disagrees with the human labels "
        "(kappa below min_judge_kappa): excluded from gates ";
  }
  if (unstable && unstable->is_bool() && unstable->as_bool()) {
    out += "<span class=\"tag unstable\">unstable</span> excluded from regression gates";
  } else if (unstable) {
    out += "stable";
  }
  return out.empty() ? std::string(kDash) : out;
}

// A criterion's own breach (criterion_pass_rate, or its regression).
bool CriterionBreached(const json::object& summary, std::string_view skill, std::string_view criterion) {
  const json::array* breaches = ArrayAt(&summary, "breaches");
  if (breaches == nullptr) return false;
  return std::any_of(breaches->begin(), breaches->end(), [&](const json::value& value) {
    const json::object* breach = value.is_object() ? &value.as_object() : nullptr;
    return TextAt(breach, "skill") == skill && TextAt(breach, "criterion") == criterion;
  });
}

std::string CriteriaSection(const json::object& summary, const json::object* skills) {
  std::string html =
      "<section id=\"criteria\"><h2>Criteria</h2><p class=\"legend\">"
      "<span><i class=\"swatch\" style=\"background:#2e7d32\"></i>passed</span>"
      "<span><i class=\"swatch\" style=\"background:#c62828\"></i>failed</span>"
      "<span><i class=\"swatch\" style=\"background:#9e9e9e\"></i>indeterminate</span></p>";
  bool any = false;
  for (const auto& [id, value] : skills ? *skills : json::object()) {
    const json::object* criteria = ObjectAt(value.is_object() ? &value.as_object() : nullptr, "criteria");
    if (criteria == nullptr || criteria->empty()) continue;
    any = true;
    html += "<h3>" + EscapeMarkup(id) +
            "</h3><table><thead><tr><th class=\"name\">Criterion</th>"
            "<th class=\"name\">Verdicts</th><th>Passed</th><th>Failed</th><th>Indeterminate</th>"
            "<th>Pass rate</th><th>Agreement</th><th>Judge vs human: kappa</th>"
            "<th>Judge pass/fail vs human pass/fail</th><th class=\"name\">Stability</th></tr></thead><tbody>";
    for (const auto& [cid, entry] : *criteria) {
      const json::object* c = entry.is_object() ? &entry.as_object() : nullptr;
      html += "<tr><td class=\"name\">" + EscapeMarkup(cid) + "</td><td class=\"name\">" +
              SvgStackedBar(NumberAt(c, "passed").value_or(0), NumberAt(c, "failed").value_or(0),
                            NumberAt(c, "indeterminate").value_or(0)) +
              "</td>" + Cell(FormatNumber(NumberAt(c, "passed"))) + Cell(FormatNumber(NumberAt(c, "failed"))) +
              Cell(FormatNumber(NumberAt(c, "indeterminate"))) +
              Cell(FormatRate(NumberAt(c, "pass_rate")), CriterionBreached(summary, id, cid) ? "breach" : "") +
              Cell(FormatNumber(NumberAt(c, "agreement"))) + CalibrationCells(c) + "<td class=\"name\">" +
              Stability(c) + "</td></tr>";
    }
    html += "</tbody></table>";
  }
  if (!any) html += "<p>No criterion verdicts in this run.</p>";
  return html + "</section>\n";
}

std::string Histograms(const json::object* skills, const std::vector<json::object>& records) {
  std::map<std::string, std::vector<double>, std::less<>> durations, costs;
  for (const json::object& record : records) {
    if (auto ms = CaseDurationMs(record)) durations[SkillLabel(record)].push_back(*ms);
    if (auto usd = CaseCostUsd(record)) costs[SkillLabel(record)].push_back(*usd);
  }
  std::string html = "<section id=\"histograms\"><h2>Attempts, latency and cost</h2>";
  if (skills == nullptr || skills->empty()) return html + "<p>No skills in this run.</p></section>\n";
  for (const auto& [id, value] : *skills) {
    std::vector<Bar> attempts;
    if (const json::object* histogram =
            ObjectAt(value.is_object() ? &value.as_object() : nullptr, "attempts_histogram")) {
      for (const auto& [n, count] : *histogram) {
        attempts.push_back({std::string(n), AsNumber(&count).value_or(0)});
      }
      std::stable_sort(attempts.begin(), attempts.end(), [](const Bar& a, const Bar& b) {
        return std::atoll(a.label.c_str()) < std::atoll(b.label.c_str());
      });
    }
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
std::string DeltaCell(const json::value* delta, bool lower_is_better = false) {
  std::optional<double> number = AsNumber(delta);
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
std::string GateFlipsList(const json::object& baseline) {
  const json::object* flips = ObjectAt(&baseline, "flips");
  if (flips == nullptr) return "";
  std::string html = "<h3>Flips per gate</h3><ul>";
  for (const auto& [gate, value] : *flips) {
    const json::object* entry = value.is_object() ? &value.as_object() : nullptr;
    for (std::string_view way : {"pass_to_fail", "fail_to_pass"}) {
      const json::array* cases = ArrayAt(entry, way);
      std::string names;
      for (const json::value& c : cases ? *cases : json::array()) {
        const json::object* o = c.is_object() ? &c.as_object() : nullptr;
        names += (names.empty() ? "" : ", ") + std::string(TextAt(o, "skill")) + "/" + std::string(TextAt(o, "case"));
        if (const json::value* repeat = o ? o->if_contains("repeat") : nullptr) names += "#" + FormatValue(repeat);
      }
      const std::string css = !cases || cases->empty() ? "same" : way == "pass_to_fail" ? "down" : "up";
      html += "<li class=\"" + css + "\">" + EscapeMarkup(gate) + ": " + std::to_string(cases ? cases->size() : 0) +
              (way == "pass_to_fail" ? " pass → fail" : " fail → pass") +
              (names.empty() ? "" : " (" + EscapeMarkup(names) + ")") + "</li>";
    }
  }
  return html + "</ul>";
}

// One row of the significance table: a gate's paired cases in both runs.
std::string PairedRow(const std::string& skill, const std::string& gate, const json::object* paired, double alpha) {
  if (paired == nullptr) return "";
  auto with_interval = [&](std::string_view rate_key, std::string_view interval_key) {
    std::string text = FormatRate(NumberAt(paired, rate_key));
    if (const json::array* interval = ArrayAt(paired, interval_key); interval && interval->size() == 2) {
      text += " (" + FormatRate(AsNumber(&(*interval)[0])) + "–" + FormatRate(AsNumber(&(*interval)[1])) + ")";
    }
    return text;
  };
  const double down = NumberAt(paired, "pass_to_fail").value_or(0), up = NumberAt(paired, "fail_to_pass").value_or(0);
  const std::optional<double> p = NumberAt(paired, "p_value");
  const bool significant = p && *p < alpha && down + up > 0;
  const bool underpowered = paired->contains("underpowered");
  const std::string flips = FormatNumber(down + up) + " flip" + (down + up == 1 ? "" : "s");
  std::string verdict = down + up == 0 ? "no flips"
                        : significant  ? (down > up ? "significant drop" : "significant rise")
                                       : "not significant (" + flips + ")";
  if (underpowered) {
    verdict += "; underpowered: " + FormatNumber(NumberAt(paired, "cases")) + " paired cases can never reach p < " +
               FormatSignificant(alpha);
  }
  const std::string css = significant ? (down > up ? "name breach" : "name up") : "name";
  return "<tr>" + Cell(skill, "name") + Cell(gate, "name") + Cell(FormatNumber(NumberAt(paired, "cases"))) +
         Cell(with_interval("baseline_rate", "baseline_interval")) + Cell(with_interval("rate", "interval")) +
         Cell(FormatNumber(down)) + Cell(FormatNumber(up)) +
         Cell(p ? (*p < 1e-9 ? "< 1e-9" : FormatSignificant(*p)) : std::string(kDash)) + Cell(verdict, css) + "</tr>";
}

// design.md §9.5: which drops are real and which are noise, from the cases
// both runs share.
std::string SignificanceTable(const json::object& baseline, std::string_view before = "Baseline",
                              std::string_view after = "Now", std::string_view shared = "both runs") {
  const json::object* skills = ObjectAt(&baseline, "skills");
  if (skills == nullptr || skills->empty()) return "";
  const double alpha = NumberAt(&baseline, "regression_alpha").value_or(0.05);
  std::string rows;
  for (const auto& [id, value] : *skills) {
    const json::object* skill = value.is_object() ? &value.as_object() : nullptr;
    const json::object* paired = ObjectAt(skill, "paired");
    rows += PairedRow(id, "case outcome", ObjectAt(paired, "outcome"), alpha);
    rows += PairedRow(id, "schema", ObjectAt(paired, "schema"), alpha);
    rows += PairedRow(id, "expected match", ObjectAt(paired, "expected"), alpha);
    rows += PairedRow(id, "rubric", ObjectAt(paired, "rubric"), alpha);
    rows += PairedRow(id, "review gate", ObjectAt(paired, "review_gate"), alpha);
    rows += PairedRow(id, "checks", ObjectAt(paired, "checks"), alpha);
    if (const json::object* criteria = ObjectAt(skill, "criteria")) {
      for (const auto& [cid, entry] : *criteria) {
        rows += PairedRow(id, "criterion " + std::string(cid),
                          ObjectAt(entry.is_object() ? &entry.as_object() : nullptr, "paired"), alpha);
      }
    }
  }
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

// Per skill, this run minus the baseline: rates in points, counts as counts.
std::string DeltasTable(const json::object& baseline) {
  const json::object* skills = ObjectAt(&baseline, "skills");
  if (skills == nullptr || skills->empty()) return "";
  std::string html;
  {
    html +=
        "<div class=\"scroll\"><table><thead><tr><th class=\"name\">Skill</th><th>Schema compliance Δ</th>"
        "<th>Rubric pass rate Δ</th><th>First try Δ</th><th>Retry rate Δ</th><th>Expected match Δ</th>"
        "<th>Tokens in Δ</th><th>Tokens out Δ</th><th>Cost Δ</th><th>Latency p50 Δ</th><th>Latency p95 Δ</th>"
        "<th class=\"name\">Criteria Δ</th></tr></thead><tbody>";
    for (const auto& [id, value] : *skills) {
      const json::object* skill = value.is_object() ? &value.as_object() : nullptr;
      html += "<tr><td class=\"name\">" + EscapeMarkup(id) + "</td>" +
              DeltaCell(skill ? skill->if_contains("schema_compliance_delta") : nullptr) +
              DeltaCell(skill ? skill->if_contains("rubric_pass_rate_delta") : nullptr) +
              DeltaCell(skill ? skill->if_contains("first_try_rate_delta") : nullptr) +
              DeltaCell(skill ? skill->if_contains("retry_rate_delta") : nullptr, true) +
              DeltaCell(skill ? skill->if_contains("expected_match_delta") : nullptr) +
              CountDeltaCell(NumberAt(skill, "input_tokens_delta"), "") +
              CountDeltaCell(NumberAt(skill, "output_tokens_delta"), "") +
              CountDeltaCell(NumberAt(skill, "cost_usd_delta"), "$") +
              CountDeltaCell(NumberAt(skill, "latency_p50_ms_delta"), " ms") +
              CountDeltaCell(NumberAt(skill, "latency_p95_ms_delta"), " ms") + "<td class=\"name\">";
      for (const auto& [cid, entry] : ObjectAt(skill, "criteria") ? *ObjectAt(skill, "criteria") : json::object()) {
        const json::object* c = entry.is_object() ? &entry.as_object() : nullptr;
        std::optional<double> delta = NumberAt(c, "pass_rate_delta");
        std::string css = !delta ? "same" : *delta > 0.0005 ? "up" : *delta < -0.0005 ? "down" : "same";
        html += "<span class=\"" + css + "\">" + EscapeMarkup(cid) + " " + EscapeMarkup(FormatDeltaPoints(delta)) +
                "</span> ";
      }
      html += "</td></tr>";
    }
    html += "</tbody></table></div>";
  }
  return html;
}

// "Flipped from pass": the cases of `flipped` (CompareWithBaseline's), or `none`.
std::string FlippedTable(const json::array* flipped, std::string_view none);

std::string BaselineSection(const json::object& summary) {
  std::string html = "<section id=\"baseline\"><h2>Compared with baseline</h2>";
  const json::object* baseline = ObjectAt(&summary, "baseline");
  if (baseline == nullptr) {
    return html +
           "<p>No baseline comparison in this run (use <code>--baseline last</code> or "
           "<code>--baseline RUN_ID</code>).</p></section>\n";
  }
  if (TextAt(baseline, "status") == "none" || TextAt(baseline, "status") == "skipped") {
    const bool none = TextAt(baseline, "status") == "none";
    return html + "<p class=\"down\"><b>" + (none ? "No baseline:" : "Regression gate skipped:") + "</b> " +
           EscapeMarkup(std::string(TextAt(baseline, "reason"))) +
           ". No regression was checked in this run.</p></section>\n";
  }
  html += "<p>Baseline: run <b>" + EscapeMarkup(FormatValue(baseline->if_contains("run_id"))) + "</b> started " +
          EscapeMarkup(FormatValue(baseline->if_contains("started_at"))) +
          "</p><p class=\"muted\">Deltas are this run minus the baseline, in percentage "
          "points.</p>";
  html += DeltasTable(*baseline);
  html += SignificanceTable(*baseline) + GateFlipsList(*baseline);
  return html + FlippedTable(ArrayAt(baseline, "flipped"), "No case that passed in the baseline fails now.") +
         "</section>\n";
}

// design.md §11.2: each skill the suite ran at both versions, its candidate
// against its stable version (the paired comparison of summary "versions").
std::string VersionsSection(const json::object& summary) {
  const json::array* versions = ArrayAt(&summary, "versions");
  if (versions == nullptr || versions->empty()) return "";
  std::string html =
      "<section id=\"versions\"><h2>Candidate against stable</h2><p class=\"muted\">Each case ran at both "
      "versions of the skill; deltas are the candidate minus the stable version, in percentage points.</p>";
  for (const json::value& value : *versions) {
    if (!value.is_object()) continue;
    const json::object& pair = value.as_object();
    const std::string name = FormatValue(pair.if_contains("candidate")) + " vs " +
                             FormatValue(pair.if_contains("skill")) + "@" +
                             FormatValue(pair.if_contains("stable_version"));
    // The tables of a baseline comparison, with the stable version as the baseline.
    const json::object as_baseline{{"skills", json::object{{name, pair}}},
                                   {"regression_alpha", NumberAt(&pair, "regression_alpha").value_or(0.05)}};
    html +=
        DeltasTable(as_baseline) + SignificanceTable(as_baseline, "Stable", "Candidate", "both versions") +
        GateFlipsList(pair) +
        FlippedTable(ArrayAt(&pair, "flipped"), "No case that passed on the stable version fails on the candidate.");
  }
  return html + "</section>\n";
}

std::string FlippedTable(const json::array* flipped, std::string_view none) {
  std::size_t count = flipped ? flipped->size() : 0;
  std::string html = "<h3>Flipped from pass (" + std::to_string(count) + ")</h3>";
  if (count == 0) return html + "<p>" + std::string(none) + "</p>";
  html +=
      "<table><thead><tr><th class=\"name\">Skill</th><th class=\"name\">Case</th>"
      "<th>Repeat</th><th class=\"name\">Was</th><th class=\"name\">Now</th></tr></thead><tbody>";
  for (const json::value& value : *flipped) {
    const json::object* flip = value.is_object() ? &value.as_object() : nullptr;
    html += "<tr>" + Cell(FormatValue(flip ? flip->if_contains("skill") : nullptr), "name") +
            Cell(FormatValue(flip ? flip->if_contains("case") : nullptr), "name") +
            Cell(FormatValue(flip ? flip->if_contains("repeat") : nullptr)) +
            Cell(FormatValue(flip ? flip->if_contains("from") : nullptr), "name") +
            Cell(FormatValue(flip ? flip->if_contains("to") : nullptr), "name down") + "</tr>";
  }
  return html + "</tbody></table>";
}

// The past runs with this run as the newest point: the history is read
// before this run is recorded, and a resumed run may already be in it under
// its own id (then this summary, the fuller one, replaces that point).
std::vector<TrendPoint> WithCurrentRun(const json::object& summary, std::vector<TrendPoint> trend) {
  std::string run_id(TextAt(&summary, "run_id"));
  if (run_id.empty()) return trend;
  std::erase_if(trend, [&](const TrendPoint& point) { return point.run_id == run_id; });
  trend.push_back({run_id, std::string(TextAt(&summary, "started_at")), summary});
  return trend;
}

std::string TrendSection(const json::object* skills, const std::vector<TrendPoint>& trend) {
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
  for (const auto& [id, unused] : skills ? *skills : json::object()) {
    (void)unused;
    Series pass_rate{"rubric pass rate", "#2e7d32", {}};
    Series compliance{"schema compliance", "#1565c0", {}};
    for (const TrendPoint& point : trend) {
      const json::object* skill = ObjectAt(ObjectAt(&point.summary, "skills"), id);
      pass_rate.values.push_back(NumberAt(skill, "rubric_pass_rate"));
      compliance.values.push_back(NumberAt(skill, "schema_compliance"));
    }
    html += "<h3>" + EscapeMarkup(id) + "</h3>" + SvgRateLines(labels, {pass_rate, compliance});
  }
  return html + "</section>\n";
}

}  // namespace

std::string HtmlReport(const json::object& summary, const std::vector<json::object>& records,
                       const std::vector<TrendPoint>& trend) {
  const json::object* skills = ObjectAt(&summary, "skills");
  std::string html(kHead);
  html += Header(summary);
  html += "<main>\n";
  html += Breaches(summary);
  html += SkillTable(summary, skills);
  html += CriteriaSection(summary, skills);
  html += Histograms(skills, records);
  html += BaselineSection(summary);
  html += VersionsSection(summary);
  html += TrendSection(skills, WithCurrentRun(summary, trend));
  html += FailingCasesSection(records);
  html +=
      "\n</main>\n<footer class=\"muted\">Written by skillrunner eval. Judge errors never "
      "enter a pass rate; judged cases that passed with an indeterminate counted criterion are left out of "
      "the rubric pass rate and counted apart.</footer>\n"
      "</body>\n</html>\n";
  return html;
}

}  // namespace skillrunner::eval
