#include "runner/eval/regression.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>

#include "runner/eval/history/run_measures.h"
#include "runner/eval/records/record_fields.h"
#include "runner/stats/statistics.h"

namespace skillrunner::eval {
namespace json = boost::json;

namespace {

// current - baseline, rounded to 1e-9 so that 0.9 - 0.8 reads 0.1 and not
// 0.09999999999999998; none when either side has none.
std::optional<double> Delta(std::optional<double> now, std::optional<double> before) {
  if (!now || !before) return std::nullopt;
  return std::round((*now - *before) * 1e9) / 1e9;
}

SkillComparison SkillDeltas(const SkillStats& current, const SkillStats* baseline) {
  SkillComparison deltas;
  // design.md §9.5 "what changed": the gates' rates, then the rest of the skill's figures.
  for (std::string_view measure :
       {"schema_compliance", "rubric_pass_rate", "first_try_rate", "retry_rate", "expected_match", "input_tokens",
        "output_tokens", "cost_usd", "latency_p50_ms", "latency_p95_ms"}) {
    deltas.deltas.emplace_back(std::string(measure) + "_delta",
                               Delta(current.Measure(measure), baseline ? baseline->Measure(measure) : std::nullopt));
  }
  const Named<CriterionStats>* before = baseline && baseline->criteria ? &*baseline->criteria : nullptr;
  for (const auto& [id, criterion] : current.criteria.value_or(Named<CriterionStats>{})) {
    const CriterionStats* then = before ? Find(*before, id) : nullptr;
    deltas.criteria.emplace_back(
        id, CriterionComparison{Delta(criterion.pass_rate, then ? then->pass_rate : std::nullopt), std::nullopt});
  }
  return deltas;
}

// The share of decided cases that pass when only `criteria` count: a case
// fails when one of them failed, is undecided (left out) when it would pass
// but one of them is indeterminate, else passes. Cases without a verdict on
// any of them are left out. Null when no case is decided.
std::optional<double> PassRateOver(const std::vector<const Verdicts*>& cases, const std::set<std::string>& criteria) {
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
  if (decided == 0) return std::nullopt;
  return static_cast<double>(passed) / static_cast<double>(decided);
}

// When a skill has unstable criteria: its pass rate over the stable counted
// ones, now minus in the baseline (the baseline's per-case verdicts from the
// history, judged by the same criteria). Absent (nullopt) otherwise.
std::optional<std::optional<double>> StableDelta(std::string_view skill, const SkillStats& stats,
                                                 const std::vector<json::object>& records,
                                                 const BaselineRun& baseline) {
  if (!stats.criteria) return std::nullopt;
  std::set<std::string> stable;
  bool any_unstable = false;
  for (const auto& [id, c] : *stats.criteria) {
    if (c.unstable.value_or(false) || c.uncalibrated.value_or(false)) {
      any_unstable = true;
    } else if (c.counted) {
      stable.insert(id);
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
  return Delta(PassRateOver(now, stable), PassRateOver(before, stable));
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
  PairedMeasure ToMeasure(double alpha) const {
    auto interval = [](std::size_t k, std::size_t total) -> std::optional<std::pair<double, double>> {
      auto wilson = stats::Wilson(k, total);
      if (!wilson) return std::nullopt;
      return std::make_pair(std::round(wilson->low * 1e6) / 1e6, std::round(wilson->high * 1e6) / 1e6);
    };
    auto rate = [](std::size_t k, std::size_t total) -> std::optional<double> {
      if (total == 0) return std::nullopt;
      return static_cast<double>(k) / static_cast<double>(total);
    };
    const double p = stats::McNemarExactP(pass_to_fail, fail_to_pass);
    PairedMeasure out;
    out.cases = static_cast<std::int64_t>(n);
    out.baseline_rate = rate(before, n);
    out.baseline_interval = interval(before, n);
    out.rate = rate(now, n);
    out.interval = interval(now, n);
    out.pass_to_fail = static_cast<std::int64_t>(pass_to_fail);
    out.fail_to_pass = static_cast<std::int64_t>(fail_to_pass);
    out.p_value = std::round(p * 1e9) / 1e9;
    out.significant = pass_to_fail + fail_to_pass > 0 && p < alpha;
    // design.md §12.3: too few pairs for any flips to be significant: every case flipping one way
    // still gives p >= alpha, so this gate cannot fire; said, never called noise.
    out.underpowered = n > 0 && stats::McNemarExactP(n, 0) >= alpha;
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
Named<PairedMeasure> PairedMeasures(const SkillPairs& pairs, double alpha) {
  Named<PairedMeasure> paired{{"schema", pairs.schema.ToMeasure(alpha)}, {"outcome", pairs.outcome.ToMeasure(alpha)}};
  if (pairs.expected.n > 0) paired.emplace_back("expected", pairs.expected.ToMeasure(alpha));
  if (pairs.rubric.n > 0) paired.emplace_back("rubric", pairs.rubric.ToMeasure(alpha));
  if (pairs.review_gate.n > 0) paired.emplace_back("review_gate", pairs.review_gate.ToMeasure(alpha));
  if (pairs.checks.n > 0) paired.emplace_back("checks", pairs.checks.ToMeasure(alpha));
  // Not refused: only where some paired case was refused in either run.
  if (pairs.answered.before < pairs.answered.n || pairs.answered.now < pairs.answered.n) {
    paired.emplace_back("answered", pairs.answered.ToMeasure(alpha));
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
Named<GateFlips> FlipsPerGate(const std::vector<json::object>& records, const BaselineRun& baseline) {
  struct Gate {
    const char* name;
    std::optional<bool> CaseGates::*field;
  };
  const Gate gates[] = {{"schema", &CaseGates::schema},
                        {"expected", &CaseGates::expected},
                        {"checks", &CaseGates::checks},
                        {"rubric", &CaseGates::rubric},
                        {"review_gate", &CaseGates::review_gate}};
  Named<GateFlips> out;
  for (const Gate& gate : gates) {
    GateFlips flips;
    for (const json::object& record : records) {
      auto before = baseline.gates.find(CaseKey(record));
      if (before == baseline.gates.end()) continue;
      const std::optional<bool> then = before->second.*gate.field, now = GatesOf(record).*gate.field;
      if (!then || !now || *then == *now) continue;
      CaseRef ref{SkillLabel(record), std::string(CaseIdOf(record)), std::nullopt};
      if (const std::int64_t repeat = RepeatOf(record); repeat > 0) ref.repeat = repeat;
      (*then ? flips.pass_to_fail : flips.fail_to_pass).push_back(std::move(ref));
    }
    out.emplace_back(gate.name, std::move(flips));
  }
  return out;
}

}  // namespace

BaselineComparison CompareWithBaseline(const RunSummary& summary, const std::vector<json::object>& records,
                                       const BaselineRun& baseline, double alpha) {
  BaselineComparison comparison;
  comparison.run_id = baseline.run_id;
  comparison.started_at = baseline.started_at;
  comparison.regression_alpha = alpha;
  const auto paired = PairCases(records, baseline);
  for (const auto& [id, skill] : summary.skills) {
    SkillComparison deltas = SkillDeltas(skill, baseline.summary.Skill(id));
    deltas.rubric_pass_rate_stable_delta = StableDelta(id, skill, records, baseline);
    const auto found = paired.find(std::string_view(id));
    const SkillPairs pairs = found == paired.end() ? SkillPairs{} : found->second;
    deltas.paired = PairedMeasures(pairs, alpha);
    for (auto& [criterion, entry] : deltas.criteria) {
      auto c = pairs.criteria.find(criterion);
      entry.paired = (c == pairs.criteria.end() ? Pairs{} : c->second).ToMeasure(alpha);
    }
    comparison.skills.emplace_back(id, std::move(deltas));
  }
  for (Flip& flip : Flips(records, baseline)) {
    comparison.flipped.push_back(FlippedCase{CaseRef{flip.skill, flip.case_id, flip.repeat},
                                             std::string(CaseOutcomeName(CaseOutcome::kPass)),
                                             std::string(CaseOutcomeName(flip.to))});
  }
  comparison.flips = FlipsPerGate(records, baseline);
  return comparison;
}

std::vector<VersionComparison> CompareVersions(const RunSummary& summary, const std::vector<json::object>& records,
                                               const std::vector<VersionPair>& pairs, double alpha) {
  std::vector<VersionComparison> out;
  for (const VersionPair& pair : pairs) {
    // The stable version's cases as the baseline of the candidate's, keyed as the candidate's.
    BaselineRun stable{"", "", RunSummary{}, {}, {}};
    if (const SkillStats* stats = summary.Skill(pair.skill))
      stable.summary.skills.emplace_back(pair.candidate_label, *stats);
    RunSummary current;
    if (const SkillStats* stats = summary.Skill(pair.candidate_label)) {
      current.skills.emplace_back(pair.candidate_label, *stats);
    }
    std::vector<json::object> candidate;
    for (const json::object& record : records) {
      const std::string label = SkillLabel(record);
      if (label == pair.candidate_label) candidate.push_back(record);
      if (label != pair.skill) continue;
      const std::string key = pair.candidate_label + CaseKey(record).substr(pair.skill.size());
      stable.outcomes[key] = OutcomeOf(record);
      stable.verdicts[key] = VerdictsOf(record);
      stable.gates[key] = GatesOf(record);
    }
    BaselineComparison compared = CompareWithBaseline(current, candidate, stable, alpha);
    VersionComparison entry{pair.skill, pair.stable_version, pair.candidate_version, pair.candidate_label, alpha};
    if (!compared.skills.empty()) entry.comparison = std::move(compared.skills.front().second);
    entry.flipped = std::move(compared.flipped);
    entry.flips = std::move(compared.flips);
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace skillrunner::eval
