#pragma once

// design.md §9.5 `eval compare`: which of two outputs better meets a rubric,
// asked as a rubric judgement of its own, so that it runs through the same
// judge machinery (routes, retries, fail-closed verdicts, the attempt log):
// one criterion, "a_better", whose verdict is pass when answer A meets the
// rubric better, fail when B does, indeterminate for a tie.

#include <boost/json/value.hpp>
#include <expected>
#include <memory>
#include <string>

#include "services/common/error.h"
#include "services/review/rubric.h"

namespace skillrunner {

// The pairwise rubric made from `rubric` (its criteria become the
// criterion's guidance). Fails only if its verdict schema does not compile.
Result<std::shared_ptr<const review::Rubric>> PairwiseRubric(const review::Rubric& rubric);

// The subject a pairwise judge sees: {"A": first, "B": second}.
boost::json::value PairSubject(const boost::json::value& first, const boost::json::value& second);

enum class Preference { kFirst, kSecond, kTie };
// A pairwise verdict (the judge's aggregated review) as a preference.
Preference PreferenceOf(const boost::json::value& verdict);

}  // namespace skillrunner
