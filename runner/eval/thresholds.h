#pragma once

// The suite's thresholds against a summary: every breach, in suite order.
// A rate that could not be measured where a threshold asks for it (nothing
// judged because every judge failed, every verdict indeterminate) is a
// breach: a broken judge must not turn a night green.
// max_regression reads the summary's baseline (CompareWithBaseline), one
// measure at a time (design.md §10.1): case_pass_rate, expected_match (when the
// entry checks expected values) and review_gate (when the suite judges with
// another rubric than the skill's gate) by the rates of their paired cases;
// schema_compliance, rubric_pass_rate and criterion:<id> by the summary's
// deltas. A drop below -max_regression with a paired McNemar p below
// regression_alpha is a breach (case_pass_rate is not gated while the skill
// has unstable criteria, see below); criteria flagged
// "unstable" by --rejudge are left out unless the suite sets
// gate_unstable_criteria, and so is their share of the skill-level rate: when
// a skill has unstable criteria its rubric_pass_rate_stable_delta (the rate
// recomputed over the stable criteria, on both sides) is checked instead of
// rubric_pass_rate_delta.
// Criteria flagged "uncalibrated" (min_judge_kappa) are left out of the
// criterion minimums and regressions always, and out of the stable rate.
// max_judge_error_rate (default 0 for a skill with a rubric) and
// max_indeterminate_rate (default unchecked) are maximums of the summary's
// judge_error_rate and indeterminate_rate.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>

#include "runner/eval/records/run_summary.h"
#include "runner/eval/suite.h"

namespace skillrunner::eval {

// [{"skill", "criterion"?, "threshold", "measure", "kind", "limit", "actual",
//   "message"}]; "kind" is "regression" (max_regression) or "threshold";
// "measure" names the regression measure, or what a threshold bounds
// (schema_compliance, criterion:<id>, judge_error_rate, cost_usd, errors, ...).
std::vector<Breach> CheckThresholds(const RunSummary& summary, const Suite& suite);

// summary.json's "thresholds": {"<skill label>": {"schema_compliance": 0.98, ..., "criteria": {...}}},
// each skill's limits as the run applied them (the suite's overlaid with the entry's), only the set ones.
boost::json::object ThresholdsJson(const Suite& suite);

}  // namespace skillrunner::eval
