#include "runner/eval/thresholds.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "services/common/text.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

constexpr double kEpsilon = 1e-9;

std::string Fixed(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", value);
  return text;
}

class Checker {
 public:
  explicit Checker(const std::string& skill) : skill_(skill) {}
  // What a regression is measured against: "the baseline", or a candidate's "the stable version".
  void Against(std::string against) { against_ = std::move(against); }

  // A minimum rate; `missing_why` explains a null actual (empty: not a breach).
  void Minimum(std::string_view threshold, const std::string& criterion, const std::string& what,
               std::optional<double> limit, std::optional<double> value, const std::string& missing_why) {
    if (!limit) return;
    if (!value) {
      if (!missing_why.empty())
        Add(threshold, criterion, *limit, std::nullopt, what + " could not be measured: " + missing_why);
      return;
    }
    if (*value + kEpsilon < *limit) {
      Add(threshold, criterion, *limit, *value, what + " " + Fixed(*value) + " is below the minimum " + Fixed(*limit));
    }
  }

  // A maximum rate; a null actual (nothing to measure) is no breach.
  void Maximum(std::string_view threshold, const std::string& what, double limit, std::optional<double> value,
               const std::string& detail) {
    if (value && *value > limit + kEpsilon) {
      Add(threshold, "", limit, *value,
          what + " " + Fixed(*value) + " is above the maximum " + Fixed(limit) + " (" + detail + ")");
    }
  }

  // design.md §9.5, §10.1: a drop beyond max_drop breaches only when the paired
  // cases say it is no chance: the exact McNemar p below alpha. `measure` is
  // one of design.md §10.1's closed set.
  void Regression(const std::string& measure, const std::string& criterion, const std::string& what, double max_drop,
                  std::optional<double> value, const PairedMeasure* paired, double alpha) {
    if (!value || *value + max_drop + kEpsilon >= 0) return;
    if (paired == nullptr || paired->p_value >= alpha) return;
    const double* p = &paired->p_value;
    char bound[32];
    std::snprintf(bound, sizeof bound, " < %.3g", alpha);
    const std::string test = "McNemar " + PValueText(*p) + (*p < 1e-9 ? "" : bound);
    Add("max_regression", criterion, max_drop, *value,
        what + " fell by " + Fixed(-*value) + " against " + against_ + ", more than the allowed " + Fixed(max_drop) +
            " (" + std::to_string(paired->pass_to_fail) + " pass->fail, " + std::to_string(paired->fail_to_pass) +
            " fail->pass of " + std::to_string(paired->cases) + " paired cases; " + test + ")",
        measure);
  }

  // Cases that ended in an error the model did not cause (bad input or
  // config, provider, handler, timeout): a run with them is not a clean run,
  // whatever the thresholds (design.md §9.8).
  void NonModelErrors(const Named<std::int64_t>& errors) {
    static constexpr std::string_view kModel[] = {"MAX_RETRIES_EXCEEDED", "TRUNCATED", "REFUSED", "CONTENT_FILTERED",
                                                  "JUDGE_ERROR"};
    std::int64_t total = 0;
    std::string listed;
    for (const auto& [code, n] : errors) {
      if (std::find(std::begin(kModel), std::end(kModel), std::string_view(code)) != std::end(kModel)) continue;
      if (n <= 0) continue;
      total += n;
      listed += (listed.empty() ? "" : ", ") + std::string(code) + ": " + std::to_string(n);
    }
    if (total == 0) return;
    Add("errors", "", 0, static_cast<double>(total),
        std::to_string(total) + " case(s) ended in an error that is not about the model's answer (" + listed + ")");
    breaches_.back().actual = total;  // a count, written as one
  }

  std::vector<Breach> Take() { return std::move(breaches_); }

 private:
  // `measure` defaults to what the threshold bounds: "criterion:<id>" for a
  // criterion, else the threshold's name without "max_".
  void Add(std::string_view threshold, const std::string& criterion, double limit, std::optional<double> actual,
           const std::string& message, std::string measure = "") {
    if (measure.empty()) {
      measure = !criterion.empty()              ? "criterion:" + criterion
                : threshold.starts_with("max_") ? std::string(threshold.substr(4))
                                                : std::string(threshold);
    }
    Breach breach;
    breach.skill = skill_;
    if (!criterion.empty()) breach.criterion = criterion;
    breach.threshold = threshold;
    breach.measure = std::move(measure);
    // design.md §9.5: --fail-on regressions fails the run on these alone.
    breach.kind = threshold == "max_regression" ? "regression" : "threshold";
    breach.limit = limit;
    breach.actual = actual ? json::value(*actual) : json::value(nullptr);
    breach.against_stable = threshold == "max_regression" && against_ != "the baseline";
    breach.message = skill_ + ": " + message;
    breaches_.push_back(std::move(breach));
  }

  std::string skill_;
  std::string against_ = "the baseline";
  std::vector<Breach> breaches_;
};

// current - baseline over the paired cases of one gate, rounded like the
// summary's deltas; null when nothing was paired.
std::optional<double> PairedDelta(const PairedMeasure* paired) {
  if (paired == nullptr || !paired->rate || !paired->baseline_rate) return std::nullopt;
  return std::round((*paired->rate - *paired->baseline_rate) * 1e9) / 1e9;
}

// Drops against the baseline (max_regression), one per measure of the closed
// set of design.md §10.1: case_pass_rate, schema_compliance, expected_match,
// rubric_pass_rate, review_gate (when the suite judges with another rubric
// than the skill's gate), check_pass_rate (when the cases carry checks) and
// criterion:<id>.
void CheckRegressions(Checker& check, const SuiteSkill& entry, const SkillComparison& baseline, const SkillStats& stats,
                      bool gate_unstable, double alpha) {
  const double max_regression = *entry.thresholds.max_regression;
  auto paired = [&](std::string_view gate) { return Find(baseline.paired, gate); };
  const PairedMeasure* outcome = paired("outcome");
  // With unstable criteria, the skill's pass rate is compared over the
  // stable criteria only (CompareWithBaseline's
  // rubric_pass_rate_stable_delta), so that a judge flipping a coin on one
  // criterion cannot fail the night through the skill-level rate either; the
  // case outcome, which that coin decides too, is then left to its other
  // measures (schema, expected, the stable rate, each stable criterion).
  const bool coin_in_outcome = !gate_unstable && baseline.rubric_pass_rate_stable_delta.has_value();
  if (!coin_in_outcome) {
    check.Regression("case_pass_rate", "", "case pass rate", max_regression, PairedDelta(outcome), outcome, alpha);
  }
  check.Regression("schema_compliance", "", "schema compliance", max_regression,
                   baseline.Delta("schema_compliance_delta"), paired("schema"), alpha);
  if (entry.expected != ExpectedMode::kNone) {
    check.Regression("expected_match", "", "expected-match rate", max_regression, PairedDelta(paired("expected")),
                     paired("expected"), alpha);
  }
  // A history from before the rubric gate was kept per case pairs the case outcome.
  const PairedMeasure* rubric = paired("rubric") ? paired("rubric") : outcome;
  if (coin_in_outcome) {
    check.Regression("rubric_pass_rate", "", "rubric pass rate (stable criteria)", max_regression,
                     *baseline.rubric_pass_rate_stable_delta, rubric, alpha);
  } else {
    check.Regression("rubric_pass_rate", "", "rubric pass rate", max_regression,
                     baseline.Delta("rubric_pass_rate_delta"), rubric, alpha);
  }
  if (!entry.judge_is_gate) {
    check.Regression("review_gate", "", "review gate pass rate", max_regression, PairedDelta(paired("review_gate")),
                     paired("review_gate"), alpha);
  }
  // Refusals (only when a paired case was refused in either run): the share answered fell.
  check.Regression("refusal_rate", "", "share of cases not refused", max_regression, PairedDelta(paired("answered")),
                   paired("answered"), alpha);
  // Only when the cases carry checks.
  check.Regression("check_pass_rate", "", "check pass rate", max_regression, PairedDelta(paired("checks")),
                   paired("checks"), alpha);
  for (const auto& [id, d] : baseline.criteria) {
    const CriterionStats* criterion = stats.criteria ? Find(*stats.criteria, id) : nullptr;
    if (!gate_unstable && criterion && criterion->unstable.value_or(false)) continue;
    if (criterion && criterion->uncalibrated.value_or(false)) continue;  // its judge disagrees with people: no gate
    check.Regression("criterion:" + id, id, "criterion \"" + id + "\" pass rate", max_regression, d.pass_rate_delta,
                     d.paired ? &*d.paired : nullptr, alpha);
  }
}

// Each criterion's pass rate against its minimum (its own, else criterion_pass_rate).
void CheckCriteria(Checker& check, const Thresholds& t, const SkillStats& stats) {
  if (!stats.criteria) return;
  for (const auto& [criterion, c] : *stats.criteria) {
    if (c.uncalibrated.value_or(false)) continue;  // design.md §9.5: out of the gates
    auto it = t.criteria.find(criterion);
    std::optional<double> limit = it != t.criteria.end() ? std::optional<double>(it->second) : t.criterion_pass_rate;
    check.Minimum("criterion_pass_rate", criterion, "criterion \"" + criterion + "\" pass rate", limit, c.pass_rate,
                  "every verdict was indeterminate");
  }
}

// A judged skill's own rates: its rubric pass rate, its judge errors, its indeterminate verdicts.
void CheckJudging(Checker& check, const Thresholds& t, const SkillStats& stats) {
  check.Minimum("rubric_pass_rate", "", "rubric pass rate", t.rubric_pass_rate, stats.rubric_pass_rate,
                "no case was judged (" + std::to_string(stats.judge_errors.value_or(0)) + " judge error(s))");
  // A judge that broke must not leave a green night behind a pass rate of
  // the few cases it did judge.
  check.Maximum("max_judge_error_rate", "judge error rate", t.max_judge_error_rate.value_or(0), stats.judge_error_rate,
                std::to_string(stats.judge_errors.value_or(0)) + " judge error(s) in " +
                    std::to_string(stats.judged.value_or(0) + stats.judge_errors.value_or(0)) +
                    " case(s) sent to the judge");
  if (t.max_indeterminate_rate) {
    check.Maximum("max_indeterminate_rate", "indeterminate rate", *t.max_indeterminate_rate, stats.indeterminate_rate,
                  std::to_string(stats.indeterminate.value_or(0)) + " of " + std::to_string(stats.judged.value_or(0)) +
                      " judged case(s) passed with an indeterminate criterion");
  }
}

void CheckSkill(const SuiteSkill& entry, const SkillStats& stats, const SkillComparison* baseline,
                const SkillComparison* versus_stable, bool gate_unstable, double alpha, std::vector<Breach>& out) {
  const Thresholds& t = entry.thresholds;
  Checker check(entry.label);
  if (!t.schema_compliance && !t.rubric_pass_rate && !t.expected_match && !t.check_pass_rate) {
    check.NonModelErrors(stats.errors.value_or(Named<std::int64_t>{}));
  }
  if (stats.cases.value_or(0) == 0) return;  // e.g. a shard that drew none of this skill's cases
  check.Minimum("schema_compliance", "", "schema compliance", t.schema_compliance, stats.schema_compliance, "");
  if (!entry.rubric.empty()) CheckJudging(check, t, stats);
  if (t.max_cost_usd) {
    check.Maximum("max_cost_usd", "cost in USD", *t.max_cost_usd, stats.cost_usd,
                  "its cases, judges included, at the models' prices");
  }
  if (t.max_refusal_rate) {
    check.Maximum(
        "max_refusal_rate", "refusal rate", *t.max_refusal_rate, stats.refusal_rate,
        std::to_string(stats.refused.value_or(0)) + " of " + std::to_string(*stats.cases) + " case(s) refused");
  }
  if (entry.expected != ExpectedMode::kNone) {
    check.Minimum("expected_match", "", "expected-match rate", t.expected_match, stats.expected_match, "");
  }
  check.Minimum("check_pass_rate", "", "check pass rate", t.check_pass_rate, stats.check_pass_rate,
                "no case has checks");
  CheckCriteria(check, t, stats);
  if (t.max_regression && baseline) CheckRegressions(check, entry, *baseline, stats, gate_unstable, alpha);
  if (t.max_regression && versus_stable) {  // design.md §11.2: a candidate no worse than its stable version
    check.Against("the stable version");
    CheckRegressions(check, entry, *versus_stable, stats, gate_unstable, alpha);
  }
  for (Breach& breach : check.Take()) out.push_back(std::move(breach));
}

// A candidate's entry of summary "versions" (its comparison with the stable version), if any.
const SkillComparison* VersusStable(const RunSummary& summary, const SuiteSkill& entry) {
  if (!entry.version || !summary.versions) return nullptr;
  for (const VersionComparison& pair : *summary.versions) {
    if (pair.candidate == entry.label) return &pair.comparison;
  }
  return nullptr;
}

}  // namespace

std::vector<Breach> CheckThresholds(const RunSummary& summary, const Suite& suite) {
  std::vector<Breach> out;
  const bool compared = summary.baseline && summary.baseline->status == BaselineComparison::Status::kCompared;
  for (const SuiteSkill& entry : suite.skills) {
    const SkillStats* stats = summary.Skill(entry.label);
    if (!stats) continue;
    CheckSkill(entry, *stats, compared ? Find(summary.baseline->skills, entry.label) : nullptr,
               VersusStable(summary, entry), suite.gate_unstable_criteria, suite.regression_alpha, out);
  }
  if (suite.max_cost_usd) {
    // The whole run (design.md §9.4): every case of every skill, judges included.
    Checker run("(run)");
    run.Maximum("max_cost_usd", "cost in USD", *suite.max_cost_usd, summary.totals.cost_usd,
                "the whole run, judges included, at the models' prices");
    for (Breach& breach : run.Take()) out.push_back(std::move(breach));
  }
  return out;
}
namespace {

json::object LimitsJson(const Thresholds& t) {
  json::object out;
  auto put = [&out](const char* key, const std::optional<double>& value) {
    if (value) out[key] = *value;
  };
  put("schema_compliance", t.schema_compliance);
  put("rubric_pass_rate", t.rubric_pass_rate);
  put("expected_match", t.expected_match);
  put("check_pass_rate", t.check_pass_rate);
  put("max_regression", t.max_regression);
  put("criterion_pass_rate", t.criterion_pass_rate);
  put("max_judge_error_rate", t.max_judge_error_rate);
  put("max_indeterminate_rate", t.max_indeterminate_rate);
  put("max_refusal_rate", t.max_refusal_rate);
  put("max_cost_usd", t.max_cost_usd);
  if (!t.criteria.empty()) {
    json::object criteria;
    for (const auto& [id, minimum] : t.criteria) criteria[id] = minimum;
    out["criteria"] = std::move(criteria);
  }
  return out;
}

}  // namespace

json::object ThresholdsJson(const Suite& suite) {
  json::object out;
  for (const SuiteSkill& entry : suite.skills) out[entry.label] = LimitsJson(entry.thresholds);
  return out;
}

}  // namespace skillrunner::eval
