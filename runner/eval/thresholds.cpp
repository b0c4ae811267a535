#include "runner/eval/thresholds.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "runner/eval/records/record_fields.h"
#include "services/common/text.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace {

constexpr double kEpsilon = 1e-9;

bool Flag(const json::value* criterion, std::string_view key) {
  if (criterion == nullptr || !criterion->is_object()) return false;
  const json::value* flag = criterion->as_object().if_contains(key);
  return flag != nullptr && flag->is_bool() && flag->as_bool();
}

const json::value* Get(const json::value* obj, std::string_view key) {
  if (!obj || !obj->is_object()) return nullptr;
  return obj->as_object().if_contains(key);
}

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
               std::optional<double> limit, const json::value* actual, const std::string& missing_why) {
    if (!limit) return;
    std::optional<double> value = AsNumber(actual);
    if (!value) {
      if (!missing_why.empty())
        Add(threshold, criterion, *limit, nullptr, what + " could not be measured: " + missing_why);
      return;
    }
    if (*value + kEpsilon < *limit) {
      Add(threshold, criterion, *limit, *value, what + " " + Fixed(*value) + " is below the minimum " + Fixed(*limit));
    }
  }

  // A maximum rate; a null actual (nothing to measure) is no breach.
  void Maximum(std::string_view threshold, const std::string& what, double limit, const json::value* actual,
               const std::string& detail) {
    std::optional<double> value = AsNumber(actual);
    if (value && *value > limit + kEpsilon) {
      Add(threshold, "", limit, *value,
          what + " " + Fixed(*value) + " is above the maximum " + Fixed(limit) + " (" + detail + ")");
    }
  }

  // design.md §9.5, §10.1: a drop beyond max_drop breaches only when the paired
  // cases say it is no chance: the exact McNemar p below alpha. `measure` is
  // one of design.md §10.1's closed set.
  void Regression(const std::string& measure, const std::string& criterion, const std::string& what, double max_drop,
                  const json::value* delta, const json::value* paired, double alpha) {
    std::optional<double> value = AsNumber(delta);
    if (!value || *value + max_drop + kEpsilon >= 0) return;
    std::optional<double> p = AsNumber(Get(paired, "p_value"));
    if (!p || *p >= alpha) return;
    auto count = [&](std::string_view key) {
      return std::to_string(static_cast<long long>(AsNumber(Get(paired, key)).value_or(0)));
    };
    char bound[32];
    std::snprintf(bound, sizeof bound, " < %.3g", alpha);
    const std::string test = "McNemar " + PValueText(*p) + (*p < 1e-9 ? "" : bound);
    Add("max_regression", criterion, max_drop, *value,
        what + " fell by " + Fixed(-*value) + " against " + against_ + ", more than the allowed " + Fixed(max_drop) +
            " (" + count("pass_to_fail") + " pass->fail, " + count("fail_to_pass") + " fail->pass of " +
            count("cases") + " paired cases; " + test + ")",
        measure);
  }

  // Cases that ended in an error the model did not cause (bad input or
  // config, provider, handler, timeout): a run with them is not a clean run,
  // whatever the thresholds (design.md §9.8).
  void NonModelErrors(const json::value* errors) {
    static constexpr std::string_view kModel[] = {"MAX_RETRIES_EXCEEDED", "TRUNCATED", "REFUSED", "CONTENT_FILTERED",
                                                  "JUDGE_ERROR"};
    if (errors == nullptr || !errors->is_object()) return;
    std::int64_t total = 0;
    std::string listed;
    for (const auto& [code, count] : errors->as_object()) {
      if (std::find(std::begin(kModel), std::end(kModel), std::string_view(code)) != std::end(kModel)) continue;
      std::int64_t n = count.is_number() ? count.to_number<std::int64_t>() : 0;
      if (n <= 0) continue;
      total += n;
      listed += (listed.empty() ? "" : ", ") + std::string(code) + ": " + std::to_string(n);
    }
    if (total == 0) return;
    Add("errors", "", 0, total,
        std::to_string(total) + " case(s) ended in an error that is not about the model's answer (" + listed + ")");
  }

  json::array Take() { return std::move(breaches_); }

 private:
  // `measure` defaults to what the threshold bounds: "criterion:<id>" for a
  // criterion, else the threshold's name without "max_".
  void Add(std::string_view threshold, const std::string& criterion, double limit, json::value actual,
           const std::string& message, std::string measure = "") {
    if (measure.empty()) {
      measure = !criterion.empty()              ? "criterion:" + criterion
                : threshold.starts_with("max_") ? std::string(threshold.substr(4))
                                                : std::string(threshold);
    }
    json::object breach{{"skill", skill_}};
    if (!criterion.empty()) breach["criterion"] = criterion;
    breach["threshold"] = threshold;
    breach["measure"] = measure;
    // design.md §9.5: --fail-on regressions fails the run on these alone.
    breach["kind"] = threshold == "max_regression" ? "regression" : "threshold";
    breach["limit"] = limit;
    breach["actual"] = std::move(actual);
    if (threshold == "max_regression" && against_ != "the baseline") breach["against"] = "stable";
    breach["message"] = skill_ + ": " + message;
    breaches_.push_back(std::move(breach));
  }

  std::string skill_;
  std::string against_ = "the baseline";
  json::array breaches_;
};

// current - baseline over the paired cases of one gate, rounded like the
// summary's deltas; null when nothing was paired.
json::value PairedDelta(const json::value* paired) {
  std::optional<double> now = AsNumber(Get(paired, "rate"));
  std::optional<double> before = AsNumber(Get(paired, "baseline_rate"));
  if (!now || !before) return nullptr;
  return std::round((*now - *before) * 1e9) / 1e9;
}

// Drops against the baseline (max_regression), one per measure of the closed
// set of design.md §10.1: case_pass_rate, schema_compliance, expected_match,
// rubric_pass_rate, review_gate (when the suite judges with another rubric
// than the skill's gate), check_pass_rate (when the cases carry checks) and
// criterion:<id>.
void CheckRegressions(Checker& check, const SuiteSkill& entry, const json::value& baseline_value,
                      const json::value* criteria, bool gate_unstable, double alpha) {
  const double max_regression = *entry.thresholds.max_regression;
  const json::value* baseline = &baseline_value;
  const json::value* paired = Get(baseline, "paired");
  const json::value* outcome = Get(paired, "outcome");
  // With unstable criteria, the skill's pass rate is compared over the
  // stable criteria only (CompareWithBaseline's
  // rubric_pass_rate_stable_delta), so that a judge flipping a coin on one
  // criterion cannot fail the night through the skill-level rate either; the
  // case outcome, which that coin decides too, is then left to its other
  // measures (schema, expected, the stable rate, each stable criterion).
  const json::value* stable = Get(baseline, "rubric_pass_rate_stable_delta");
  const bool coin_in_outcome = !gate_unstable && stable;
  if (!coin_in_outcome) {
    const json::value case_delta = PairedDelta(outcome);
    check.Regression("case_pass_rate", "", "case pass rate", max_regression, &case_delta, outcome, alpha);
  }
  check.Regression("schema_compliance", "", "schema compliance", max_regression,
                   Get(baseline, "schema_compliance_delta"), Get(paired, "schema"), alpha);
  if (entry.expected != ExpectedMode::kNone) {
    const json::value* expected = Get(paired, "expected");
    const json::value delta = PairedDelta(expected);
    check.Regression("expected_match", "", "expected-match rate", max_regression, &delta, expected, alpha);
  }
  // A history from before the rubric gate was kept per case pairs the case outcome.
  const json::value* rubric = Get(paired, "rubric") ? Get(paired, "rubric") : outcome;
  if (coin_in_outcome) {
    check.Regression("rubric_pass_rate", "", "rubric pass rate (stable criteria)", max_regression, stable, rubric,
                     alpha);
  } else {
    check.Regression("rubric_pass_rate", "", "rubric pass rate", max_regression,
                     Get(baseline, "rubric_pass_rate_delta"), rubric, alpha);
  }
  if (!entry.judge_is_gate) {
    const json::value* gate = Get(paired, "review_gate");
    const json::value delta = PairedDelta(gate);
    check.Regression("review_gate", "", "review gate pass rate", max_regression, &delta, gate, alpha);
  }
  // Refusals (only when a paired case was refused in either run): the share answered fell.
  const json::value* answered = Get(paired, "answered");
  const json::value answered_delta = PairedDelta(answered);
  check.Regression("refusal_rate", "", "share of cases not refused", max_regression, &answered_delta, answered, alpha);
  const json::value* checks = Get(paired, "checks");  // only when the cases carry checks
  const json::value checks_delta = PairedDelta(checks);
  check.Regression("check_pass_rate", "", "check pass rate", max_regression, &checks_delta, checks, alpha);
  const json::value* deltas = Get(baseline, "criteria");
  if (deltas && deltas->is_object()) {
    for (const auto& [id, d] : deltas->as_object()) {
      const json::value* criterion = criteria ? Get(criteria, id) : nullptr;
      if (!gate_unstable && Flag(criterion, "unstable")) continue;
      if (Flag(criterion, "uncalibrated")) continue;  // its judge disagrees with people: no gate
      check.Regression("criterion:" + std::string(id), std::string(id),
                       "criterion \"" + std::string(id) + "\" pass rate", max_regression, Get(&d, "pass_rate_delta"),
                       Get(&d, "paired"), alpha);
    }
  }
}

// Each criterion's pass rate against its minimum (its own, else criterion_pass_rate).
void CheckCriteria(Checker& check, const Thresholds& t, const json::value* criteria) {
  if (!criteria || !criteria->is_object()) return;
  for (const auto& [id, c] : criteria->as_object()) {
    std::string criterion(id);
    if (Flag(&c, "uncalibrated")) continue;  // design.md §9.5: out of the gates
    auto it = t.criteria.find(criterion);
    std::optional<double> limit = it != t.criteria.end() ? std::optional<double>(it->second) : t.criterion_pass_rate;
    check.Minimum("criterion_pass_rate", criterion, "criterion \"" + criterion + "\" pass rate", limit,
                  Get(&c, "pass_rate"), "every verdict was indeterminate");
  }
}

// A count of the skill's summary, as text.
std::string Count(const json::value& stats, std::string_view key) {
  return std::to_string(static_cast<long long>(AsNumber(Get(&stats, key)).value_or(0)));
}

void CheckSkill(const SuiteSkill& entry, const json::value& stats, const json::value* baseline,
                const json::value* versus_stable, bool gate_unstable, double alpha, json::array& out) {
  const Thresholds& t = entry.thresholds;
  Checker check(entry.label);
  if (!t.schema_compliance && !t.rubric_pass_rate && !t.expected_match && !t.check_pass_rate) {
    check.NonModelErrors(Get(&stats, "errors"));
  }
  std::int64_t cases = Get(&stats, "cases") ? Get(&stats, "cases")->to_number<std::int64_t>() : 0;
  if (cases == 0) return;  // e.g. a shard that drew none of this skill's cases
  check.Minimum("schema_compliance", "", "schema compliance", t.schema_compliance, Get(&stats, "schema_compliance"),
                "");
  if (!entry.rubric.empty()) {
    check.Minimum("rubric_pass_rate", "", "rubric pass rate", t.rubric_pass_rate, Get(&stats, "rubric_pass_rate"),
                  "no case was judged (" +
                      std::to_string(static_cast<long long>(AsNumber(Get(&stats, "judge_errors")).value_or(0))) +
                      " judge error(s))");
    auto count = [&](std::string_view key) {
      return std::to_string(static_cast<long long>(AsNumber(Get(&stats, key)).value_or(0)));
    };
    // A judge that broke must not leave a green night behind a pass rate of
    // the few cases it did judge.
    check.Maximum("max_judge_error_rate", "judge error rate", t.max_judge_error_rate.value_or(0),
                  Get(&stats, "judge_error_rate"),
                  count("judge_errors") + " judge error(s) in " +
                      std::to_string(static_cast<long long>(AsNumber(Get(&stats, "judged")).value_or(0) +
                                                            AsNumber(Get(&stats, "judge_errors")).value_or(0))) +
                      " case(s) sent to the judge");
    if (t.max_indeterminate_rate) {
      check.Maximum(
          "max_indeterminate_rate", "indeterminate rate", *t.max_indeterminate_rate, Get(&stats, "indeterminate_rate"),
          count("indeterminate") + " of " + count("judged") + " judged case(s) passed with an indeterminate criterion");
    }
  }
  if (t.max_cost_usd) {
    check.Maximum("max_cost_usd", "cost in USD", *t.max_cost_usd, Get(&stats, "cost_usd"),
                  "its cases, judges included, at the models' prices");
  }
  if (t.max_refusal_rate) {
    check.Maximum("max_refusal_rate", "refusal rate", *t.max_refusal_rate, Get(&stats, "refusal_rate"),
                  Count(stats, "refused") + " of " + std::to_string(cases) + " case(s) refused");
  }
  if (entry.expected != ExpectedMode::kNone) {
    check.Minimum("expected_match", "", "expected-match rate", t.expected_match, Get(&stats, "expected_match"), "");
  }
  check.Minimum("check_pass_rate", "", "check pass rate", t.check_pass_rate, Get(&stats, "check_pass_rate"),
                "no case has checks");
  const json::value* criteria = Get(&stats, "criteria");
  CheckCriteria(check, t, criteria);
  if (t.max_regression && baseline) {
    CheckRegressions(check, entry, *baseline, criteria, gate_unstable, alpha);
  }
  if (t.max_regression && versus_stable) {  // design.md §11.2: a candidate no worse than its stable version
    check.Against("the stable version");
    CheckRegressions(check, entry, *versus_stable, criteria, gate_unstable, alpha);
  }
  for (auto& breach : check.Take()) out.push_back(std::move(breach));
}

// A candidate's entry of summary "versions" (its comparison with the stable version), if any.
const json::value* VersusStable(const json::object& summary, const SuiteSkill& entry) {
  const json::value* versions = summary.if_contains("versions");
  if (!entry.version || versions == nullptr || !versions->is_array()) return nullptr;
  for (const json::value& pair : versions->as_array()) {
    const json::value* label = Get(&pair, "candidate");
    if (label && label->is_string() && label->as_string() == entry.label) return &pair;
  }
  return nullptr;
}

}  // namespace

json::array CheckThresholds(const json::object& summary, const Suite& suite) {
  json::array out;
  const json::value* skills = summary.if_contains("skills");
  const json::value* baseline_skills = Get(summary.if_contains("baseline"), "skills");
  for (const SuiteSkill& entry : suite.skills) {
    const json::value* stats = Get(skills, entry.label);
    if (!stats) continue;
    CheckSkill(entry, *stats, Get(baseline_skills, entry.label), VersusStable(summary, entry),
               suite.gate_unstable_criteria, suite.regression_alpha, out);
  }
  if (suite.max_cost_usd) {
    // The whole run (design.md §9.4): every case of every skill, judges included.
    Checker run("(run)");
    run.Maximum("max_cost_usd", "cost in USD", *suite.max_cost_usd, Get(summary.if_contains("totals"), "cost_usd"),
                "the whole run, judges included, at the models' prices");
    for (auto& breach : run.Take()) out.push_back(std::move(breach));
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
