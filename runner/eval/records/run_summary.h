#pragma once

// One eval run's summary as a type (design.md §12.3): summary.json, the
// history's copy of it and the viewer's answers built from it are JSON only at
// the edges: read once (RunSummary::FromJson) and written once (ToJson). The
// format is schemas/eval/summary.schema.json. Older summaries parse, with what
// they lack absent (a rate the run did not compute is nullopt, a count 0).
//
// How each figure is computed is BuildSummary's (runner/eval/summary.h), the
// comparisons' CompareWithBaseline and CompareVersions' (runner/eval/regression.h),
// the breaches' CheckThresholds' (runner/eval/thresholds.h).

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace skillrunner::eval {

using Rate = std::optional<double>;  // nullopt: nothing to divide by (null in JSON)

// A list keyed by name in the order it was written (a JSON object's members).
template <typename T>
using Named = std::vector<std::pair<std::string, T>>;

template <typename T>
const T* Find(const Named<T>& list, std::string_view name) {
  for (const auto& [key, value] : list) {
    if (key == name) return &value;
  }
  return nullptr;
}

struct LatencyPercentiles {
  std::optional<std::int64_t> p50, p95, p99;  // nearest rank; none without cases
};

// design.md §9.5: the judge against people's labels on one criterion.
struct Calibration {
  std::int64_t labelled = 0;
  double agreement = 0;
  std::optional<double> kappa;  // undefined when one side never varies
  std::int64_t judge_pass_human_pass = 0, judge_pass_human_fail = 0;
  std::int64_t judge_fail_human_pass = 0, judge_fail_human_fail = 0;
};

struct CriterionStats {
  std::int64_t judged = 0, passed = 0, failed = 0, indeterminate = 0;
  Rate pass_rate;                 // passed / (passed + failed)
  Rate indeterminate_rate;        // indeterminate / judged
  bool counted = true;            // decides whether a review passes
  Rate agreement = std::nullopt;  // --rejudge: share of re-judged cases whose verdicts all agree
  std::optional<bool> unstable = std::nullopt;
  std::optional<Calibration> calibration = std::nullopt;
  std::optional<bool> uncalibrated = std::nullopt;  // min_judge_kappa set
};

struct CaseCriteriaStats {  // the cases' own criteria, as one measure
  std::int64_t decided = 0, passed = 0;
  Rate pass_rate;
};

// A count; nullopt when the summary did not have it (an older summary: shown as "—", never as 0).
using MaybeCount = std::optional<std::int64_t>;

// A skill's figures, or the run's totals.
struct SkillStats {
  MaybeCount cases;
  Rate schema_compliance;
  MaybeCount schema_checked;
  Rate case_pass_rate, first_try_rate, retry_rate;
  MaybeCount transient_retries, truncations;
  MaybeCount refusals;  // refused attempts
  MaybeCount refused;   // cases that ended refused
  Rate refusal_rate;
  std::optional<Named<std::int64_t>> errors;  // cases per error code
  MaybeCount judged, judge_errors;
  Rate judge_error_rate;
  MaybeCount decided;
  Rate rubric_pass_rate;
  std::optional<CaseCriteriaStats> case_criteria;
  MaybeCount indeterminate;
  Rate indeterminate_rate, expected_match, check_pass_rate;
  MaybeCount input_tokens, cached_input_tokens, output_tokens;
  MaybeCount judge_input_tokens, judge_output_tokens;
  std::optional<double> cost_usd, judge_cost_usd;  // nullopt: no model used had a price
  bool batched = false;                            // the two below are written only then
  std::optional<double> batch_cost_usd, online_cost_usd;
  LatencyPercentiles latency_ms;
  Named<std::int64_t> attempts_histogram;         // cases per number of attempts
  std::optional<Named<CriterionStats>> criteria;  // a skill's; never the totals'

  // A measure by the name thresholds, trends and deltas give it: "schema_compliance",
  // "case_pass_rate", "rubric_pass_rate", "cost_usd", "latency_p95_ms", "cases", ...
  // nullopt for an unknown name, a figure the summary does not have, or a rate with nothing to divide by.
  std::optional<double> Measure(std::string_view name) const;
};

// One measure's cases both runs (or both versions) have (design.md §9.5).
struct PairedMeasure {
  std::int64_t cases = 0;
  Rate baseline_rate;
  std::optional<std::pair<double, double>> baseline_interval;  // Wilson 95%
  Rate rate;
  std::optional<std::pair<double, double>> interval;
  std::int64_t pass_to_fail = 0, fail_to_pass = 0;
  double p_value = 1;  // exact two-sided McNemar
  bool significant = false;
  bool underpowered = false;  // too few pairs for any flips to be significant
};

struct CaseRef {
  std::string skill;
  std::string case_id;
  std::optional<std::int64_t> repeat;
};

struct FlippedCase {
  CaseRef at;
  std::string from, to;  // outcome names (CaseOutcomeName)
};

struct GateFlips {
  std::vector<CaseRef> pass_to_fail, fail_to_pass;
};

struct CriterionComparison {
  std::optional<double> pass_rate_delta;
  std::optional<PairedMeasure> paired;
};

// A skill against its baseline: the deltas (current minus baseline), the paired gates.
struct SkillComparison {
  Named<std::optional<double>> deltas;  // "schema_compliance_delta", ..., "latency_p95_ms_delta"
  Named<CriterionComparison> criteria;
  // Only for a skill with unstable or uncalibrated criteria: outer nullopt absent, inner null.
  std::optional<std::optional<double>> rubric_pass_rate_stable_delta;
  Named<PairedMeasure> paired;  // "schema", "outcome", "expected", "rubric", "review_gate", "checks", "answered"

  std::optional<double> Delta(std::string_view name) const;  // "schema_compliance_delta", ...
};

// summary.json's "baseline".
struct BaselineComparison {
  enum class Status { kCompared, kNone, kSkipped };
  Status status = Status::kCompared;
  std::string reason;              // none, skipped: why
  std::string history;             // none: the history searched
  std::string run_id, started_at;  // compared: the baseline run's
  double regression_alpha = 0.05;
  Named<SkillComparison> skills;
  std::vector<FlippedCase> flipped;
  Named<GateFlips> flips;  // per gate

  std::string_view StatusName() const;  // "compared", "none", "skipped"
};

// design.md §11.2: a skill's candidate version against its stable one.
struct VersionComparison {
  std::string skill;
  std::int64_t stable_version = 0, candidate_version = 0;
  std::string candidate;  // its label, "<skill>@<candidate_version>"
  double regression_alpha = 0.05;
  SkillComparison comparison = {};
  std::vector<FlippedCase> flipped = {};
  Named<GateFlips> flips = {};
};

struct Breach {
  std::string skill;
  std::optional<std::string> criterion;
  std::string threshold;
  std::string measure;
  std::string kind;  // "threshold" or "regression"
  double limit = 0;
  boost::json::value actual;  // a number, or null when it could not be measured
  bool against_stable = false;
  std::string message;
};

struct CacheFacts {
  std::string file;
  std::string mode;
  std::int64_t hits = 0, misses = 0;
};

struct RunSummary {
  std::string run_id, suite, started_at, finished_at;
  std::int64_t duration_ms = 0;
  std::optional<std::string> shard, git_ref;
  std::int64_t concurrency = 0;
  SkillStats totals;
  Named<SkillStats> skills;  // suite order
  std::optional<std::vector<VersionComparison>> versions;
  std::optional<BaselineComparison> baseline;
  boost::json::object thresholds;  // per skill label, the limits the run applied (the suite's config)
  std::string status;              // "pass", "breached"; "" before the thresholds were checked
  std::vector<Breach> breaches;
  std::string fail_on;  // "any", "regressions"
  std::optional<CacheFacts> cache;
  std::string out;
  std::optional<std::int64_t> batches, resubmitted;  // batch mode (design.md §10.6)
  std::optional<double> batch_cost_usd, online_cost_usd;
  boost::json::object other;  // members this build does not know, kept as they are

  // Tolerant: a member of the wrong type is read as absent.
  static RunSummary FromJson(const boost::json::object& json);
  boost::json::object ToJson() const;

  const SkillStats* Skill(std::string_view label) const { return Find(skills, label); }
};

// The parts on their own, as the viewer's answers write them.
boost::json::object BaselineJson(const BaselineComparison& baseline);
boost::json::array BreachesJson(const std::vector<Breach>& breaches);
boost::json::object SkillsJson(const Named<SkillStats>& skills);

}  // namespace skillrunner::eval
