#include "runner/eval/regression.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "runner/eval/history/run_measures.h"
#include "runner/eval/report/report_markup.h"
#include "runner/stats/statistics.h"

namespace skillrunner::eval {
namespace json = boost::json;
using report::ArrayAt;
using report::NumberAt;
using report::ObjectAt;
using report::TextAt;

namespace {

// current - baseline, rounded to 1e-9 so that 0.9 - 0.8 reads 0.1 and not
// 0.09999999999999998; null when either side is not a number.
json::value Delta(const json::object* current, const json::object* baseline, std::string_view key) {
  std::optional<double> now = NumberAt(current, key);
  std::optional<double> before = NumberAt(baseline, key);
  if (!now || !before) return nullptr;
  return std::round((*now - *before) * 1e9) / 1e9;
}

json::object SkillDeltas(const json::object& current, const json::object* baseline) {
  json::object deltas;
  deltas["schema_compliance_delta"] = Delta(&current, baseline, "schema_compliance");
  deltas["rubric_pass_rate_delta"] = Delta(&current, baseline, "rubric_pass_rate");
  // design.md §9.5 "what changed": the rest of the skill's figures.
  for (std::string_view key :
       {"first_try_rate", "retry_rate", "expected_match", "input_tokens", "output_tokens", "cost_usd"}) {
    deltas[std::string(key) + "_delta"] = Delta(&current, baseline, key);
  }
  for (std::string_view p : {"p50", "p95"}) {
    deltas["latency_" + std::string(p) + "_ms_delta"] =
        Delta(ObjectAt(&current, "latency_ms"), ObjectAt(baseline, "latency_ms"), p);
  }
  json::object criteria;
  if (const json::object* current_criteria = ObjectAt(&current, "criteria")) {
    const json::object* baseline_criteria = ObjectAt(baseline, "criteria");
    for (const auto& [id, criterion] : *current_criteria) {
      if (!criterion.is_object()) continue;
      json::object entry;
      entry["pass_rate_delta"] = Delta(&criterion.as_object(), ObjectAt(baseline_criteria, id), "pass_rate");
      criteria[id] = std::move(entry);
    }
  }
  deltas["criteria"] = std::move(criteria);
  return deltas;
}

// The share of decided cases that pass when only `criteria` count: a case
// fails when one of them failed, is undecided (left out) when it would pass
// but one of them is indeterminate, else passes. Cases without a verdict on
// any of them are left out. Null when no case is decided.
json::value PassRateOver(const std::vector<const Verdicts*>& cases, const std::set<std::string>& criteria) {
  std::size_t decided = 0, passed = 0;
  for (const Verdicts* verdicts : cases) {
    bool seen = false, failed = false, indeterminate = false;
    for (const auto& [criterion, verdict] : *verdicts) {
      if (!criteria.contains(criterion)) continue;
      seen = true;
      failed = failed || verdict == "fail";
      indeterminate = indeterminate || verdict == "indeterminate";
    }
    if (!seen || (!failed && indeterminate)) continue;
    ++decided;
    passed += !failed;
  }
  if (decided == 0) return nullptr;
  return static_cast<double>(passed) / static_cast<double>(decided);
}

// When a skill has unstable criteria: its pass rate over the stable counted
// ones, now minus in the baseline (the baseline's per-case verdicts from the
// history, judged by the same criteria). Absent (nullopt) otherwise.
std::optional<json::value> StableDelta(std::string_view skill, const json::object& stats,
                                       const std::vector<json::object>& records, const BaselineRun& baseline) {
  const json::object* criteria = ObjectAt(&stats, "criteria");
  if (criteria == nullptr) return std::nullopt;
  std::set<std::string> stable;
  bool any_unstable = false;
  for (const auto& [id, c] : *criteria) {
    if (!c.is_object()) continue;
    const json::value* unstable = c.as_object().if_contains("unstable");
    const json::value* uncalibrated = c.as_object().if_contains("uncalibrated");
    const json::value* counted = c.as_object().if_contains("counted");
    if ((unstable && unstable->is_bool() && unstable->as_bool()) ||
        (uncalibrated && uncalibrated->is_bool() && uncalibrated->as_bool())) {
      any_unstable = true;
    } else if (!counted || !counted->is_bool() || counted->as_bool()) {
      stable.insert(std::string(id));
    }
  }
  if (!any_unstable) return std::nullopt;
  std::vector<Verdicts> current;
  for (const json::object& record : records) {
    if (SkillLabel(record) == skill) current.push_back(VerdictsOf(record));
  }
  std::vector<const Verdicts*> now, before;
  for (const Verdicts& v : current) now.push_back(&v);
  std::string prefix = std::string(skill) + "/";
  for (const auto& [key, verdicts] : baseline.verdicts) {
    if (key.starts_with(prefix)) before.push_back(&verdicts);
  }
  json::value a = PassRateOver(now, stable), b = PassRateOver(before, stable);
  if (!a.is_double() || !b.is_double()) return json::value(nullptr);
  return json::value(std::round((a.as_double() - b.as_double()) * 1e9) / 1e9);
}

// A gate's pass (true) or not (false) in one run; nullopt when the case says
// nothing about that gate (a judge error, an indeterminate verdict).

// Pass/fail of the same cases in both runs, and what the paired test makes of it.
struct Pairs {
  std::size_t n = 0, before = 0, now = 0;  // cases; passes in the baseline; passes now
  std::size_t pass_to_fail = 0, fail_to_pass = 0;

  void Add(GateResult then, GateResult later) {
    if (!then || !later) return;
    ++n;
    before += *then;
    now += *later;
    pass_to_fail += *then && !*later;
    fail_to_pass += !*then && *later;
  }

  // design.md §9.5: both rates with their Wilson 95% intervals, the flips both
  // ways, the exact McNemar p and whether it is below `alpha`.
  json::object ToJson(double alpha) const {
    auto interval = [](std::size_t k, std::size_t total) -> json::value {
      auto wilson = stats::Wilson(k, total);
      if (!wilson) return nullptr;
      return json::array{std::round(wilson->low * 1e6) / 1e6, std::round(wilson->high * 1e6) / 1e6};
    };
    auto rate = [](std::size_t k, std::size_t total) -> json::value {
      if (total == 0) return nullptr;
      return static_cast<double>(k) / static_cast<double>(total);
    };
    const double p = stats::McNemarExactP(pass_to_fail, fail_to_pass);
    json::object out{{"cases", n},
                     {"baseline_rate", rate(before, n)},
                     {"baseline_interval", interval(before, n)},
                     {"rate", rate(now, n)},
                     {"interval", interval(now, n)},
                     {"pass_to_fail", pass_to_fail},
                     {"fail_to_pass", fail_to_pass},
                     {"p_value", std::round(p * 1e9) / 1e9},
                     {"significant", pass_to_fail + fail_to_pass > 0 && p < alpha}};
    // design.md §12.3: too few pairs for any flips to be significant: every case flipping one way
    // still gives p >= alpha, so this gate cannot fire; said, never called noise.
    if (n > 0 && stats::McNemarExactP(n, 0) >= alpha) out["underpowered"] = true;
    return out;
  }
};

// Each skill's pairs, one per regression measure (design.md §10.1): schema, case
// outcome, expected match, rubric pass, review gate and per criterion, over
// the cases present in both runs (same skill, case id and repeat).
struct SkillPairs {
  Pairs schema, outcome, expected, rubric, review_gate, checks;
  Pairs answered;  // not refused
  std::map<std::string, Pairs> criteria;
};

void AddGates(SkillPairs& pairs, const CaseGates* then, const CaseGates& now) {
  auto gate = [](const CaseGates* gates, std::optional<bool> CaseGates::*field) {
    return gates == nullptr ? std::nullopt : gates->*field;
  };
  pairs.expected.Add(gate(then, &CaseGates::expected), now.expected);
  pairs.rubric.Add(gate(then, &CaseGates::rubric), now.rubric);
  pairs.review_gate.Add(gate(then, &CaseGates::review_gate), now.review_gate);
  pairs.checks.Add(gate(then, &CaseGates::checks), now.checks);
}

std::map<std::string, SkillPairs, std::less<>> PairCases(const std::vector<json::object>& records,
                                                         const BaselineRun& baseline) {
  std::map<std::string, SkillPairs, std::less<>> out;
  for (const json::object& record : records) {
    const std::string key = CaseKey(record);
    auto before = baseline.outcomes.find(key);
    if (before == baseline.outcomes.end()) continue;
    SkillPairs& pairs = out[SkillLabel(record)];
    const CaseOutcome now = OutcomeOf(record);
    const CaseGates gates = GatesOf(record);
    auto then_gates = baseline.gates.find(key);
    const CaseGates* previous_gates = then_gates == baseline.gates.end() ? nullptr : &then_gates->second;
    pairs.schema.Add(SchemaGate(before->second), SchemaGate(now));
    pairs.answered.Add(AnsweredGate(before->second), AnsweredGate(now));
    pairs.outcome.Add(CaseGate(before->second, previous_gates), CaseGate(now, &gates));
    AddGates(pairs, previous_gates, gates);
    const Verdicts current = VerdictsOf(record);
    auto then = baseline.verdicts.find(key);
    const Verdicts* previous = then == baseline.verdicts.end() ? nullptr : &then->second;
    for (const auto& [criterion, verdict] : current) {
      pairs.criteria[criterion].Add(VerdictGate(previous, criterion), VerdictGate(&current, criterion));
    }
  }
  return out;
}

// "paired" of a skill: schema and outcome always; expected, rubric,
// review_gate and checks where some case both runs share has that gate;
// answered (not refused) where some paired case was refused.
json::object PairedJson(const SkillPairs& pairs, double alpha) {
  json::object paired{{"schema", pairs.schema.ToJson(alpha)}, {"outcome", pairs.outcome.ToJson(alpha)}};
  if (pairs.expected.n > 0) paired["expected"] = pairs.expected.ToJson(alpha);
  if (pairs.rubric.n > 0) paired["rubric"] = pairs.rubric.ToJson(alpha);
  if (pairs.review_gate.n > 0) paired["review_gate"] = pairs.review_gate.ToJson(alpha);
  if (pairs.checks.n > 0) paired["checks"] = pairs.checks.ToJson(alpha);
  // Not refused: only where some paired case was refused in either run.
  if (pairs.answered.before < pairs.answered.n || pairs.answered.now < pairs.answered.n) {
    paired["answered"] = pairs.answered.ToJson(alpha);
  }
  return paired;
}

struct Flip {
  std::string skill;
  std::string case_id;
  std::optional<std::int64_t> repeat;
  CaseOutcome to;
};

std::vector<Flip> Flips(const std::vector<json::object>& records, const BaselineRun& baseline) {
  std::vector<Flip> flips;
  for (const json::object& record : records) {
    auto before = baseline.outcomes.find(CaseKey(record));
    if (before == baseline.outcomes.end() || before->second != CaseOutcome::kPass) continue;
    CaseOutcome now = OutcomeOf(record);
    // A judge error says nothing about the output, so it is no flip.
    if (now != CaseOutcome::kFail && now != CaseOutcome::kError) continue;
    Flip flip{SkillLabel(record), std::string(CaseIdOf(record)), std::nullopt, now};
    if (const std::int64_t repeat = RepeatOf(record); repeat > 0) flip.repeat = repeat;
    flips.push_back(std::move(flip));
  }
  std::sort(flips.begin(), flips.end(), [](const Flip& a, const Flip& b) {
    return std::tie(a.skill, a.case_id, a.repeat) < std::tie(b.skill, b.case_id, b.repeat);
  });
  return flips;
}

// design.md §9.5: per gate, the cases that flipped each way.
json::object GateFlips(const std::vector<json::object>& records, const BaselineRun& baseline) {
  struct Gate {
    const char* name;
    std::optional<bool> CaseGates::*field;
  };
  const Gate gates[] = {{"schema", &CaseGates::schema},
                        {"expected", &CaseGates::expected},
                        {"checks", &CaseGates::checks},
                        {"rubric", &CaseGates::rubric},
                        {"review_gate", &CaseGates::review_gate}};
  json::object out;
  for (const Gate& gate : gates) {
    json::array down, up;
    for (const json::object& record : records) {
      auto before = baseline.gates.find(CaseKey(record));
      if (before == baseline.gates.end()) continue;
      const std::optional<bool> then = before->second.*gate.field, now = GatesOf(record).*gate.field;
      if (!then || !now || *then == *now) continue;
      json::object entry{{"skill", SkillLabel(record)}, {"case", CaseIdOf(record)}};
      if (const std::int64_t repeat = RepeatOf(record); repeat > 0) entry["repeat"] = repeat;
      (*then ? down : up).push_back(std::move(entry));
    }
    out[gate.name] = json::object{{"pass_to_fail", std::move(down)}, {"fail_to_pass", std::move(up)}};
  }
  return out;
}

}  // namespace

json::object CompareWithBaseline(const json::object& summary, const std::vector<json::object>& records,
                                 const BaselineRun& baseline, double alpha) {
  json::object comparison;
  comparison["status"] = "compared";
  comparison["run_id"] = baseline.run_id;
  comparison["started_at"] = baseline.started_at;
  comparison["regression_alpha"] = alpha;
  const auto paired = PairCases(records, baseline);

  json::object skills;
  if (const json::object* current_skills = ObjectAt(&summary, "skills")) {
    const json::object* baseline_skills = ObjectAt(&baseline.summary, "skills");
    for (const auto& [id, skill] : *current_skills) {
      if (!skill.is_object()) continue;
      json::object deltas = SkillDeltas(skill.as_object(), ObjectAt(baseline_skills, id));
      if (auto stable = StableDelta(id, skill.as_object(), records, baseline)) {
        deltas["rubric_pass_rate_stable_delta"] = std::move(*stable);
      }
      const auto found = paired.find(std::string_view(id));
      const SkillPairs pairs = found == paired.end() ? SkillPairs{} : found->second;
      deltas["paired"] = PairedJson(pairs, alpha);
      for (auto& [criterion, entry] : deltas["criteria"].as_object()) {
        auto c = pairs.criteria.find(std::string(criterion));
        entry.as_object()["paired"] = (c == pairs.criteria.end() ? Pairs{} : c->second).ToJson(alpha);
      }
      skills[id] = std::move(deltas);
    }
  }
  comparison["skills"] = std::move(skills);

  json::array flipped;
  for (Flip& flip : Flips(records, baseline)) {
    json::object entry{{"skill", flip.skill}, {"case", flip.case_id}};
    if (flip.repeat) entry["repeat"] = *flip.repeat;
    entry["from"] = CaseOutcomeName(CaseOutcome::kPass);
    entry["to"] = CaseOutcomeName(flip.to);
    flipped.push_back(std::move(entry));
  }
  comparison["flipped"] = std::move(flipped);
  comparison["flips"] = GateFlips(records, baseline);
  return comparison;
}

json::array CompareVersions(const json::object& summary, const std::vector<json::object>& records,
                            const std::vector<VersionPair>& pairs, double alpha) {
  json::array out;
  const json::object* skills = ObjectAt(&summary, "skills");
  for (const VersionPair& pair : pairs) {
    // The stable version's cases as the baseline of the candidate's, keyed as the candidate's.
    BaselineRun stable{"", "", json::object{{"skills", json::object{}}}, {}, {}};
    if (const json::object* stats = ObjectAt(skills, pair.skill)) {
      stable.summary["skills"].as_object()[pair.candidate_label] = *stats;
    }
    std::vector<json::object> candidate;
    json::object current{{"skills", json::object{}}};
    if (const json::object* stats = ObjectAt(skills, pair.candidate_label)) {
      current["skills"].as_object()[pair.candidate_label] = *stats;
    }
    for (const json::object& record : records) {
      const std::string label = SkillLabel(record);
      if (label == pair.candidate_label) candidate.push_back(record);
      if (label != pair.skill) continue;
      const std::string key = pair.candidate_label + CaseKey(record).substr(pair.skill.size());
      stable.outcomes[key] = OutcomeOf(record);
      stable.verdicts[key] = VerdictsOf(record);
      stable.gates[key] = GatesOf(record);
    }
    json::object compared = CompareWithBaseline(current, candidate, stable, alpha);
    json::value deltas = std::move(compared["skills"].as_object()[pair.candidate_label]);
    json::object entry{{"skill", pair.skill},
                       {"stable_version", pair.stable_version},
                       {"candidate_version", pair.candidate_version},
                       {"candidate", pair.candidate_label},
                       {"regression_alpha", alpha}};
    for (auto& [key, value] : deltas.as_object()) entry[key] = std::move(value);
    entry["flipped"] = std::move(compared["flipped"]);
    entry["flips"] = std::move(compared["flips"]);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace skillrunner::eval
