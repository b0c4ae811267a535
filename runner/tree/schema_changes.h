#pragma once

// How a tree's skills changed their schemas against an earlier tree (the one a
// reload replaces, or the skills at a git ref for `validate --against`), by the
// compatibility rules of services/validation/schema_compat.h.

#include <boost/json/array.hpp>
#include <string>
#include <vector>

#include "runner/tree/diagnostic.h"
#include "runner/tree/skill.h"
#include "runner/tree/skill_registry.h"

namespace skillrunner {

// The skills both registries hold whose schemas changed, as skills.changed's
// params ({skill, version, schema_hash, breaking}). A breaking change whose
// version did not rise is appended to `errors`, at the skill file's `version`
// key (code breaking-change). A skill only `after` has breaks nothing.
boost::json::array SchemaChanges(const SkillRegistry& before, const SkillRegistry& after,
                                 std::vector<Diagnostic>& errors);

}  // namespace skillrunner
