#pragma once

#include <expected>
#include <memory>
#include <string>

#include "services/review/rubric.h"

namespace skillrunner::review {

// The verdict schema, compiled; the judge's system prompt; the strict wire
// copies. Fails only if the verdict schema does not compile (a defect).
std::expected<std::shared_ptr<const RubricJudge>, std::string> PrepareJudge(const Rubric& rubric);

}  // namespace skillrunner::review
