#pragma once

// Compares a run with a baseline run from the history (--baseline).

#include <boost/json/object.hpp>
#include <vector>

#include "runner/eval/history.h"

namespace skillrunner::eval {

// Returns the "baseline" object of summary.json:
//   {"run_id" (the baseline's), "started_at" (the baseline's),
//    "skills": {"<id>": {"schema_compliance_delta", "rubric_pass_rate_delta",
//                        "criteria": {"<cid>": {"pass_rate_delta"}}}},
//    "flipped": [{"skill", "case", "repeat"?, "from", "to"}]}
// Deltas are current minus baseline (rounded to 1e-9, so 0.9 - 0.8 is 0.1),
// null where either side is null or missing; skills and criteria are those
// of the current summary. "flipped" lists the cases whose baseline outcome was
// pass and whose current outcome is fail or error (outcome names as
// CaseOutcomeName; a judge error is no flip, since it says nothing about the
// output), sorted by skill, then case, then repeat. Never throws on odd input.
// A skill with criteria flagged "unstable" also gets
// "rubric_pass_rate_stable_delta": its pass rate recomputed over the stable
// counted criteria, current records minus the baseline's verdicts (decided
// cases only; null when either side has none).
boost::json::object CompareWithBaseline(const boost::json::object& summary,
                                        const std::vector<boost::json::object>& records,
                                        const BaselineRun& baseline);

}  // namespace skillrunner::eval
