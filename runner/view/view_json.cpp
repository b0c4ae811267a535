#include "runner/view/view_json.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/record_fields.h"
#include "runner/eval/regression.h"
#include "runner/stats/statistics.h"
#include "runner/view/json_diff.h"

namespace skillrunner::view {
namespace json = boost::json;
using eval::ArrayAt;
using eval::NumberAt;
using eval::ObjectAt;
using eval::TextAt;

namespace {

double Round6(double value) { return std::round(value * 1e6) / 1e6; }

}  // namespace

json::value OrNull(std::optional<double> value) { return value ? json::value(*value) : json::value(nullptr); }

json::value OrNull(const std::optional<std::string>& text) { return text ? json::value(*text) : json::value(nullptr); }

json::object RateJson(std::int64_t successes, std::int64_t n) {
  json::object out{{"successes", successes}, {"n", n}};
  if (n <= 0) return out;
  out["rate"] = Round6(static_cast<double>(successes) / static_cast<double>(n));
  if (auto wilson = eval::stats::Wilson(static_cast<std::size_t>(successes), static_cast<std::size_t>(n))) {
    out["low"] = Round6(wilson->low);
    out["high"] = Round6(wilson->high);
  }
  return out;
}

namespace {

// A breach's measure as the series name it ("schema_compliance" -> "schema").
std::string SeriesOfBreach(std::string_view measure) {
  if (measure == "schema_compliance") return "schema";
  if (measure == "case_pass_rate") return "outcome";
  if (measure == "expected_match") return "expected";
  if (measure == "rubric_pass_rate") return "rubric";
  if (measure == "check_pass_rate") return "checks";
  return std::string(measure);  // review_gate, criterion:<id>, and those no series has
}

bool Breached(const eval::RunRow& run, std::string_view skill, std::string_view measure) {
  for (const eval::Breach& breach : run.summary.breaches) {
    if (breach.skill == skill && SeriesOfBreach(breach.measure) == measure) return true;
  }
  return false;
}

json::object TrendRun(const eval::RunRow& run) {
  json::object out = RunHead(run);
  const eval::SkillStats& totals = run.summary.totals;
  out["cases"] = totals.cases ? json::value(*totals.cases) : json::value(nullptr);
  out["breaches"] = eval::BreachesJson(run.summary.breaches);
  out["cost_usd"] = OrNull(totals.cost_usd);
  out["duration_ms"] = run.summary.duration_ms;
  auto ms = [](std::optional<std::int64_t> value) { return value ? json::value(*value) : json::value(nullptr); };
  out["latency_p50_ms"] = ms(totals.latency_ms.p50);
  out["latency_p95_ms"] = ms(totals.latency_ms.p95);
  return out;
}

bool Keeps(const eval::RunRow& run, const SuiteFilter& filter) {
  if (filter.git_ref && run.git_ref != filter.git_ref) return false;
  if (filter.model && std::find(run.models.begin(), run.models.end(), *filter.model) == run.models.end()) return false;
  return true;
}

json::array Strings(const std::set<std::string>& values) {
  json::array out;
  for (const std::string& value : values) out.emplace_back(value);
  return out;
}

}  // namespace

json::object RunHead(const eval::RunRow& run) {
  return json::object{{"run_id", run.run_id},           {"suite", run.suite},
                      {"started_at", run.started_at},   {"finished_at", run.finished_at},
                      {"git_ref", OrNull(run.git_ref)}, {"status", run.status}};
}

json::object SuiteJson(std::string_view suite, const SuiteFilter& filter, const std::vector<eval::RunRow>& runs,
                       const std::vector<eval::StoredMeasure>& measures) {
  std::set<std::string> skills, models, git_refs;
  std::map<std::string, const eval::RunRow*> kept;
  json::array runs_json;
  for (const eval::RunRow& run : runs) {
    models.insert(run.models.begin(), run.models.end());
    if (run.git_ref) git_refs.insert(*run.git_ref);
    if (!Keeps(run, filter)) continue;
    kept[run.run_id] = &run;
    runs_json.push_back(TrendRun(run));
  }
  // Series in the runs' order: (skill, measure) -> points by run.
  std::map<std::pair<std::string, std::string>, std::map<std::string, json::object>> series;
  for (const eval::StoredMeasure& m : measures) {
    skills.insert(m.count.skill);
    auto run = kept.find(m.run_id);
    if (run == kept.end() || (filter.skill && m.count.skill != *filter.skill)) continue;
    json::object point = RateJson(m.count.successes, m.count.n);
    point["run_id"] = m.run_id;
    point["breached"] = Breached(*run->second, m.count.skill, m.count.measure);
    series[{m.count.skill, m.count.measure}][m.run_id] = std::move(point);
  }
  json::array series_json;
  for (auto& [key, points_by_run] : series) {
    json::array points;
    for (const eval::RunRow& run : runs) {
      if (auto p = points_by_run.find(run.run_id); p != points_by_run.end()) points.push_back(std::move(p->second));
    }
    series_json.push_back(json::object{{"skill", key.first},
                                       {"measure", key.second},
                                       {"label", eval::MeasureLabel(key.second)},
                                       {"points", std::move(points)}});
  }
  json::object filters{
      {"skill", OrNull(filter.skill)}, {"model", OrNull(filter.model)}, {"git_ref", OrNull(filter.git_ref)}};
  return json::object{{"suite", suite},
                      {"filters", std::move(filters)},
                      {"skills", Strings(skills)},
                      {"models", Strings(models)},
                      {"git_refs", Strings(git_refs)},
                      {"runs", std::move(runs_json)},
                      {"series", std::move(series_json)}};
}

}  // namespace skillrunner::view
