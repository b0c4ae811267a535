// The run, compare and case answers of view_json.h: the ones that read cases.
#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "runner/eval/history/run_measures.h"
#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/case_record.h"
#include "runner/eval/records/record_fields.h"
#include "runner/eval/regression.h"
#include "runner/view/json_diff.h"
#include "runner/view/view_json.h"

namespace skillrunner::view {
namespace json = boost::json;
using eval::ArrayAt;
using eval::CaseOutcome;
using eval::ObjectAt;
using eval::TextAt;

namespace {

// Milliseconds as a whole number (they are whole in every record), null when unknown.
json::value Ms(std::optional<double> value) {
  return value ? json::value(static_cast<std::int64_t>(std::llround(*value))) : json::value(nullptr);
}

// The least value that counts as one of the run's highest tenth: the 90th percentile (nearest
// rank), and above the median, so that a run whose cases all took the same flags none; nullopt
// when no value is that.
std::optional<double> TopTenthFrom(std::vector<double> values) {
  if (values.empty()) return std::nullopt;
  std::sort(values.begin(), values.end());
  auto rank = [&](double p) {
    auto r = static_cast<std::size_t>(std::ceil(p * static_cast<double>(values.size())));
    return values[std::max<std::size_t>(r, 1) - 1];
  };
  const double median = rank(0.5);
  auto above = std::upper_bound(values.begin(), values.end(), median);
  if (above == values.end()) return std::nullopt;
  return std::max(rank(0.9), *above);
}

eval::GateResult CasePassed(const json::object& record) {
  const eval::CaseGates gates = eval::GatesOf(record);
  return eval::CaseGate(eval::OutcomeOf(record), &gates);
}

struct RunLimits {
  std::optional<double> slow_ms, costly_usd;
};

RunLimits LimitsOf(const std::vector<json::object>& records) {
  std::vector<double> durations, costs;
  for (const json::object& record : records) {
    if (auto d = eval::CaseDurationMs(record)) durations.push_back(*d);
    if (auto c = eval::CaseCostUsd(record); c && *c > 0) costs.push_back(*c);
  }
  return {TopTenthFrom(std::move(durations)), TopTenthFrom(std::move(costs))};
}

json::array FlagsOf(const json::object& record, const RunLimits& limits, const json::object* before) {
  json::array flags;
  const CaseOutcome outcome = eval::OutcomeOf(record);
  if (outcome == CaseOutcome::kFail || outcome == CaseOutcome::kError) flags.emplace_back("failed");
  if (before != nullptr) {
    const eval::GateResult then = CasePassed(*before), now = CasePassed(record);
    if (then && now && *then != *now) flags.emplace_back("flipped");
  }
  const std::string_view code = eval::ErrorCodeOf(record);
  if (code == "REFUSED" || code == "CONTENT_FILTERED") flags.emplace_back("refused");
  for (const auto& [criterion, verdict] : eval::VerdictsOf(record)) {
    if (verdict == "indeterminate") {
      flags.emplace_back("indeterminate");
      break;
    }
  }
  // The slowest and costliest tenth of the run.
  const auto duration = eval::CaseDurationMs(record);
  if (duration && limits.slow_ms && *duration >= *limits.slow_ms) flags.emplace_back("slow");
  const auto cost = eval::CaseCostUsd(record);
  if (cost && limits.costly_usd && *cost >= *limits.costly_usd) flags.emplace_back("costly");
  return flags;
}

std::map<std::string, const json::object*> ByCase(const std::vector<json::object>& records) {
  std::map<std::string, const json::object*> out;
  for (const json::object& record : records) out[eval::CaseKey(record)] = &record;
  return out;
}

// design.md §12.3: the gates the case failed ({type, message}, in JUnit's order) and every check
// (op, pointer, expected, actual, message), from the typed record every output reads.
json::array GatesJson(const eval::CaseRecord& record) {
  json::array out;
  for (const eval::GateFailure& gate : record.FailedGates()) {
    out.push_back(json::object{{"type", eval::GateType(gate.gate)}, {"message", gate.message}});
  }
  return out;
}

json::array ChecksJson(const eval::CaseRecord& record) {
  json::array out;
  for (const eval::CheckResult& check : record.checks) {
    out.push_back(json::object{{"op", check.op},
                               {"negate", check.negate},
                               {"pointer", check.pointer},
                               {"pass", check.pass},
                               {"expected", check.expected ? *check.expected : json::value(nullptr)},
                               {"actual", check.actual ? *check.actual : json::value(nullptr)},
                               {"message", check.message}});
  }
  return out;
}

json::object CaseRow(const json::object& record, const RunLimits& limits, const json::object* before) {
  const std::string_view code = eval::ErrorCodeOf(record);
  json::object row{{"skill", eval::SkillLabel(record)},
                   {"case", eval::CaseIdOf(record)},
                   {"repeat", eval::RepeatOf(record)},
                   {"outcome", eval::CaseOutcomeName(eval::OutcomeOf(record))},
                   {"flags", FlagsOf(record, limits, before)},
                   {"duration_ms", Ms(eval::CaseDurationMs(record))},
                   {"cost_usd", OrNull(eval::CaseCostUsd(record))},
                   {"error_code", code.empty() ? json::value(nullptr) : json::value(code)},
                   {"gates", GatesJson(eval::CaseRecord::FromJson(record))}};
  return row;
}

json::array MeasuresJson(const std::vector<eval::MeasureCount>& measures) {
  json::array out;
  for (const eval::MeasureCount& m : measures) {
    json::object entry{{"skill", m.skill}, {"measure", m.measure}, {"label", eval::MeasureLabel(m.measure)}};
    for (auto& [key, value] : RateJson(m.successes, m.n)) entry[key] = value;
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

json::object RunJson(const eval::RunRow& run, const std::vector<eval::MeasureCount>& measures,
                     const std::vector<json::object>& records, const eval::RunRow* baseline,
                     const std::vector<json::object>& baseline_records) {
  json::object head = RunHead(run);
  head["duration_ms"] = run.summary.duration_ms;
  head["cost_usd"] = OrNull(run.summary.totals.cost_usd);
  head["baseline_run_id"] = baseline ? json::value(baseline->run_id) : json::value(nullptr);
  head["versions"] = run.summary.versions && !run.summary.versions->empty();
  const auto before = ByCase(baseline_records);
  const RunLimits limits = LimitsOf(records);
  json::array cases;
  for (const json::object& record : records) {
    auto then = before.find(eval::CaseKey(record));
    cases.push_back(CaseRow(record, limits, then == before.end() ? nullptr : then->second));
  }
  return json::object{{"run", std::move(head)},
                      {"thresholds", run.summary.thresholds},
                      {"breaches", eval::BreachesJson(run.summary.breaches)},
                      {"measures", MeasuresJson(measures)},
                      {"skills", eval::SkillsJson(run.summary.skills)},
                      {"cases", std::move(cases)}};
}

namespace {

json::value OutputOf(const json::object& record) {
  const json::value* output = eval::OutputOf(record);
  return output ? *output : json::value(nullptr);
}

// One side of a flipped case: what the compare page shows of it.
json::object Side(const json::object& record) {
  const json::object* error = eval::ErrorOf(record);
  const json::object* review = eval::ReviewOf(record);
  if (review == nullptr) review = eval::GateReviewOf(record);
  const json::array* attempts = eval::AttemptsOf(record);
  json::value error_json = nullptr;
  if (error) error_json = json::object{{"code", TextAt(error, "code")}, {"message", TextAt(error, "message")}};
  const eval::CaseRecord typed = eval::CaseRecord::FromJson(record);
  return json::object{{"outcome", eval::CaseOutcomeName(eval::OutcomeOf(record))},
                      {"gates", GatesJson(typed)},
                      {"checks", ChecksJson(typed)},
                      {"output", OutputOf(record)},
                      {"error", std::move(error_json)},
                      {"review", review ? json::value(*review) : json::value(nullptr)},
                      {"attempts", attempts ? *attempts : json::array{}},
                      {"duration_ms", Ms(eval::CaseDurationMs(record))},
                      {"cost_usd", OrNull(eval::CaseCostUsd(record))}};
}

json::value Interval(const std::optional<std::pair<double, double>>& interval) {
  if (!interval) return nullptr;
  return json::array{interval->first, interval->second};
}

json::object PairedRow(const std::string& skill, const std::string& measure, const eval::PairedMeasure& paired) {
  return json::object{{"skill", skill},
                      {"measure", measure},
                      {"label", eval::MeasureLabel(measure)},
                      {"cases", paired.cases},
                      {"b_rate", OrNull(paired.baseline_rate)},
                      {"b_interval", Interval(paired.baseline_interval)},
                      {"a_rate", OrNull(paired.rate)},
                      {"a_interval", Interval(paired.interval)},
                      {"pass_to_fail", paired.pass_to_fail},
                      {"fail_to_pass", paired.fail_to_pass},
                      {"p_value", paired.p_value},
                      {"significant", paired.significant},
                      {"underpowered", paired.underpowered}};
}

// The paired measures of a skill's comparison (CompareWithBaseline's, or a candidate's against its
// stable version), one row per measure with paired cases.
void AddPairedMeasures(const std::string& skill, const eval::SkillComparison& comparison, json::array& out) {
  for (const auto& [measure, paired] : comparison.paired) {
    if (paired.cases > 0) out.push_back(PairedRow(skill, measure, paired));
  }
  for (const auto& [criterion, c] : comparison.criteria) {
    if (c.paired && c.paired->cases > 0) out.push_back(PairedRow(skill, "criterion:" + criterion, *c.paired));
  }
}

json::array Flips(const std::vector<json::object>& a_records, const std::vector<json::object>& b_records) {
  const auto before = ByCase(b_records);
  json::array flips;
  for (const json::object& record : a_records) {
    auto then = before.find(eval::CaseKey(record));
    if (then == before.end()) continue;
    const eval::GateResult was = CasePassed(*then->second), is = CasePassed(record);
    if (!was || !is || *was == *is) continue;
    flips.push_back(json::object{{"skill", eval::SkillLabel(record)},
                                 {"case", eval::CaseIdOf(record)},
                                 {"repeat", eval::RepeatOf(record)},
                                 {"from", eval::CaseOutcomeName(eval::OutcomeOf(*then->second))},
                                 {"to", eval::CaseOutcomeName(eval::OutcomeOf(record))},
                                 {"direction", *was ? "pass_to_fail" : "fail_to_pass"},
                                 {"a", Side(record)},
                                 {"b", Side(*then->second)},
                                 {"diff", DiffJson(OutputOf(record), OutputOf(*then->second))}});
  }
  return flips;
}

}  // namespace

json::object CompareJson(const eval::RunRow& a, const std::vector<json::object>& a_records, const eval::RunRow& b,
                         const std::vector<json::object>& b_records) {
  const double alpha = a.summary.baseline ? a.summary.baseline->regression_alpha : 0.05;
  const eval::BaselineComparison comparison =
      eval::CompareWithBaseline(a.summary, a_records, eval::BaselineFromRecords(b, b_records), alpha);
  json::array measures;
  for (const auto& [skill, entry] : comparison.skills) AddPairedMeasures(skill, entry, measures);
  return json::object{{"a", RunHead(a)},
                      {"b", RunHead(b)},
                      {"alpha", alpha},
                      {"measures", std::move(measures)},
                      {"flips", Flips(a_records, b_records)}};
}

json::object VersionsJson(const eval::RunRow& run, const std::vector<eval::VersionComparison>& versions,
                          const std::vector<json::object>& records) {
  json::array out;
  for (const eval::VersionComparison& entry : versions) {
    const std::string& skill = entry.skill;
    const std::string& candidate = entry.candidate;
    const std::int64_t candidate_version = entry.candidate_version;
    // The stable version's cases, keyed as the candidate's (the same case id and repeat pair).
    std::vector<json::object> stable, trial;
    for (const json::object& record : records) {
      const std::string label = eval::SkillLabel(record);
      if (label == candidate) trial.push_back(record);
      if (label != skill) continue;
      stable.push_back(record);
      stable.back()["version"] = candidate_version;
    }
    json::array measures;
    AddPairedMeasures(candidate, entry.comparison, measures);
    out.push_back(json::object{{"skill", skill},
                               {"stable_version", entry.stable_version},
                               {"candidate_version", candidate_version},
                               {"candidate", candidate},
                               {"alpha", entry.regression_alpha},
                               {"measures", std::move(measures)},
                               {"flips", Flips(trial, stable)}});
  }
  return json::object{{"run", RunHead(run)}, {"versions", std::move(out)}};
}

json::object CaseJson(std::string_view suite, std::string_view skill, std::string_view case_id, std::int64_t repeat,
                      const std::vector<eval::CaseRun>& runs) {
  json::array out;
  for (const eval::CaseRun& run : runs) {
    json::object verdicts;
    for (const auto& [criterion, verdict] : eval::VerdictsOf(run.record)) verdicts[criterion] = verdict;
    const std::string_view code = eval::ErrorCodeOf(run.record);
    const eval::CaseRecord typed = eval::CaseRecord::FromJson(run.record);
    out.push_back(json::object{{"run_id", run.run_id},
                               {"started_at", run.started_at},
                               {"git_ref", OrNull(run.git_ref)},
                               {"outcome", eval::CaseOutcomeName(eval::OutcomeOf(run.record))},
                               {"output", OutputOf(run.record)},
                               {"error_code", code.empty() ? json::value(nullptr) : json::value(code)},
                               {"duration_ms", Ms(eval::CaseDurationMs(run.record))},
                               {"cost_usd", OrNull(eval::CaseCostUsd(run.record))},
                               {"verdicts", std::move(verdicts)},
                               {"input", typed.input ? *typed.input : json::value(nullptr)},
                               {"gates", GatesJson(typed)},
                               {"checks", ChecksJson(typed)}});
  }
  return json::object{
      {"suite", suite}, {"skill", skill}, {"case", case_id}, {"repeat", repeat}, {"runs", std::move(out)}};
}

}  // namespace skillrunner::view
