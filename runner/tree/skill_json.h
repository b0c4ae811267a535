#pragma once

// How a loaded skill is shown to users: `skillrunner list --json`,
// `skills.list` and `skills.describe` on the socket.

#include <boost/json/object.hpp>

#include "runner/tree/skill_registry.h"

namespace skillrunner {

// {"id","version","template_type","description","schema_hash","model"?,
//  "provider"?,"handler"?,"review_rubric"?}
boost::json::object SkillSummaryJson(const Skill& skill);

// "sha256:<hex>" of the canonical JSON of {"input": ..., "output": ...}, the
// skill's schemas as written: what generated clients were built against.
std::string SkillSchemaHash(const Skill& skill);

// The summary plus what a caller needs to build a valid request: the input and
// output schemas as written, the output mode, the timeout, the rubric (with
// its criteria) of a review skill or gate, and the descriptor as loaded.
boost::json::object SkillDescriptionJson(const Skill& skill, const SkillRegistry& registry);

}  // namespace skillrunner
