#pragma once

// Compares a run with a baseline run from the history (--baseline).

#include <boost/json/object.hpp>
#include <vector>

#include "runner/eval/history/history.h"
#include "runner/eval/summary.h"

namespace skillrunner::eval {

// Returns summary.json's "baseline" (RunSummary; in JSON):
//   {"status": "compared", "run_id" (the baseline's), "started_at" (the baseline's),
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
// design.md §9.5, §10.1: the cases present in both runs are paired, per skill
// ("paired": {"schema", "outcome", "expected"?, "rubric"?, "review_gate"?})
// and per criterion (criteria[id].paired):
// {"cases", "baseline_rate", "baseline_interval", "rate", "interval" (Wilson
// 95%, [low, high]), "pass_to_fail", "fail_to_pass", "p_value" (exact
// two-sided McNemar), "significant" (p < alpha)}. A case's schema gate passes
// when it has valid output; its outcome gate when every gate it has passed,
// the skill's own review gate included (a judge error is left out); expected,
// rubric and review_gate as GatesOf says (present when some paired case has
// the gate on both sides); a criterion's on a pass verdict (indeterminate
// left out).
BaselineComparison CompareWithBaseline(const RunSummary& summary, const std::vector<boost::json::object>& records,
                                       const BaselineRun& baseline, double alpha = 0.05);

// design.md §11.2: the "versions" array of summary.json, one entry per skill
// the suite ran at both versions: {"skill", "stable_version",
// "candidate_version", "candidate" (its label), "regression_alpha", then the
// candidate's comparison with the stable version as a baseline skill entry
// of CompareWithBaseline has it (the deltas, "paired", criteria), with
// "flipped" and "flips"}. The stable version's cases are the baseline: a case
// pairs with the same case id and repeat.
std::vector<VersionComparison> CompareVersions(const RunSummary& summary,
                                               const std::vector<boost::json::object>& records,
                                               const std::vector<VersionPair>& pairs, double alpha = 0.05);

}  // namespace skillrunner::eval
