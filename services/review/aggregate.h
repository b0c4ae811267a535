#pragma once

// Turns judge answers into the verdict of design.md §4, in code: the judge's own
// `pass` is never trusted. Pure.

#include <boost/json/value.hpp>
#include <string_view>
#include <vector>

#include "services/review/rubric.h"

namespace skillrunner::review {

// "required" when the rubric says so, or says nothing and marks a criterion
// required; else "all".
std::string_view EffectivePassRule(const Rubric& rubric);

// `answers`: one judge answer per sample, each valid against VerdictSchema
// (a criterion an answer lacks counts as indeterminate for it).
// Per sample, a verdict given with confidence below the rubric's
// indeterminate_below_confidence becomes "indeterminate". Across samples the
// most frequent verdict wins; a tie for first place is "indeterminate".
// Output, keys in this order:
//   {"pass", "issues", "suggested_fixes", "indeterminate", "criteria_results"}
//   pass:            no counted criterion (EffectivePassRule) has verdict fail;
//                    indeterminate never fails
//   issues:          the judges' own issues (first-seen order, duplicates
//                    dropped), then "<id>: <reasoning>" for every failed
//                    criterion, in rubric order
//   suggested_fixes: the judges' suggested fixes, duplicates dropped
//   indeterminate:   the ids of the indeterminate criteria, in rubric order
//   criteria_results: rubric order, {"criterion_id","verdict","reasoning",
//                    "confidence"}; reasoning from the first sample that gave
//                    the winning verdict (on a tie: "the judges split: 1 pass,
//                    1 fail, 1 indeterminate"), confidence the mean over those
//                    samples (over all samples on a tie), rounded to 2 decimals.
//   With more than one answer each entry also has "agreement": the share of
//   samples that gave the largest vote (rounded to 2 decimals; 2 of 3 -> 0.67;
//   a whole number such as 1 as an integer, like confidence).
boost::json::value Aggregate(const Rubric& rubric, const std::vector<boost::json::value>& answers);

}  // namespace skillrunner::review
