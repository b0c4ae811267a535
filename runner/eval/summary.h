#pragma once

// summary.json, computed from results.jsonl records alone (so a resumed or
// merged run summarises exactly what its records say). Per skill and per
// criterion:
//   schema_compliance = valid outputs / (cases - review-gate judge errors):
//     a case whose skill's own review gate could not judge it (error code
//     JUDGE_ERROR) says nothing about the schema, so it is in neither part.
//   judge_errors = cases whose judge gave no usable verdict (the eval's judge
//     or the review gate's); judge_error_rate = judge_errors / (judged +
//     judge_errors). Judge errors never enter a pass rate.
//   judged = cases with a usable verdict. A judged case is "indeterminate"
//     when its review passed while a counted criterion (the rubric's pass
//     rule; SummaryHeader::counted_criteria) was indeterminate: it did not
//     really pass, and it did not fail. decided = judged - indeterminate.
//   rubric_pass_rate = passed / decided (indeterminate cases are left out and
//     counted in "indeterminate"; indeterminate_rate = indeterminate / judged).
//   criterion pass_rate = passed / (passed + failed); indeterminate_rate =
//     indeterminate / judged; "counted": whether the criterion decides pass.
// With --rejudge, criteria get "agreement" (share of re-judged cases whose
// verdicts on the criterion all agree) and "unstable" (agreement < 0.8).

#include <boost/json/object.hpp>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/eval/records/run_summary.h"

namespace skillrunner::eval {

inline constexpr double kStableAgreement = 0.8;

// design.md §11.2: a skill whose suite runs its stable version and its
// candidate; summary.json's "versions" pairs their cases (by case id and
// repeat; CompareVersions in regression.h).
struct VersionPair {
  std::string skill;            // the id
  int stable_version = 0;       // its records' label is the id
  int candidate_version = 0;    // "<id>@<candidate_version>"
  std::string candidate_label;  // that label
};

struct SummaryHeader {
  std::string run_id;
  std::string suite;
  std::string started_at;
  std::string finished_at;
  std::int64_t duration_ms = 0;
  std::optional<std::string> shard;
  std::optional<std::string> git_ref;
  int concurrency = 0;
  std::vector<std::string> skills;  // suite order; skills without records still appear
  // Per skill, the criteria that decide whether a review passes (the rubric's
  // pass rule); a skill not listed here counts every criterion.
  std::map<std::string, std::set<std::string>> counted_criteria;
  // design.md §9.5 min_judge_kappa: a criterion with human labels whose judge
  // agrees with them less (or whose kappa is undefined) is "uncalibrated".
  std::optional<double> min_judge_kappa;
};

// The header, "totals" and "skills"; the versions, the baseline, the breaches
// and the status are the caller's to add.
RunSummary BuildSummary(const SummaryHeader& header, const std::vector<boost::json::object>& records);

}  // namespace skillrunner::eval
