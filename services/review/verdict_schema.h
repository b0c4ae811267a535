#pragma once

// The answer a rubric judge must give (design.md §4): one result per criterion,
// the reasoning before the verdict (property order matters to strict
// outputs), then the issues and fixes. Pure.

#include <boost/json/value.hpp>
#include <vector>

#include "services/common/error.h"
#include "services/review/rubric.h"

namespace skillrunner::review {

// {"type":"object","required":["criteria_results","issues","suggested_fixes"],
//  "additionalProperties":false,"properties":{"criteria_results":{"type":"array",
//  "items":{... "criterion_id":{"enum":[ids]},"reasoning","verdict","confidence" ...}},
//  "issues":[string],"suggested_fixes":[string],"pass":boolean}}.
// The judge's own `pass` is allowed but ignored (aggregation decides).
boost::json::value VerdictSchema(const Rubric& rubric);

// What the schema cannot say: every criterion of the rubric is rated exactly
// once. Errors: {"/criteria_results", "criterion \"<id>\" is missing"} and
// {"/criteria_results/<i>", "criterion \"<id>\" appears more than once"}.
// Unknown ids are left to the schema's enum.
std::vector<FieldError> CheckEveryCriterionOnce(const Rubric& rubric, const boost::json::value& answer);

}  // namespace skillrunner::review
