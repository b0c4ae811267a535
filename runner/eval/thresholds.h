#pragma once

// The suite's thresholds against a summary: every breach, in suite order.
// A rate that could not be measured where a threshold asks for it (nothing
// judged because every judge failed, every verdict indeterminate) is a
// breach: a broken judge must not turn a night green.
// max_regression reads summary["baseline"] (CompareWithBaseline): a skill's
// schema_compliance_delta or rubric_pass_rate_delta, or a criterion's
// pass_rate_delta, below -max_regression is a breach; criteria flagged
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

#include "runner/eval/suite.h"

namespace skillrunner::eval {

// [{"skill", "criterion"?, "threshold", "limit", "actual", "message"}]
boost::json::array CheckThresholds(const boost::json::object& summary, const Suite& suite);

}  // namespace skillrunner::eval
