#pragma once

#include <expected>
#include <memory>
#include <string>

#include "services/common/error.h"
#include "services/review/rubric.h"

namespace skillrunner::review {

// The verdict schema, compiled; the judge's system prompt; the strict wire
// copies. Fails only if the verdict schema does not compile (a defect).
Result<std::shared_ptr<const RubricJudge>> PrepareJudge(const Rubric& rubric);

}  // namespace skillrunner::review
