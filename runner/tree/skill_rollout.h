#pragma once

// A skill's `rollout:` block (design.md §11.2): read and checked on its own
// here; the candidate it names is loaded and compared with the stable
// version by the registry (it needs the rest of the tree to link).

#include "runner/tree/descriptor_reader.h"
#include "runner/tree/skill.h"

namespace skillrunner {

// Fills skill.rollout from a schema-valid descriptor's `rollout:`, reporting
// to `reader` what the schema cannot say (steps that do not rise, a traffic
// that is not steps[0], a sticky that is not a JSON pointer, a review with
// both a rubric and a skill, a skill without an output to compare).
void LoadRollout(DescriptorReader& reader, Skill& skill);

}  // namespace skillrunner
