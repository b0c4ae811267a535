#pragma once

// A skill's input and output schemas: inline or in a file beside the
// descriptor, checked against their draft's metaschema and the schema lint,
// compiled; and the prompt's placeholders checked against the input schema.

#include "runner/tree/descriptor_reader.h"
#include "runner/tree/skill.h"

namespace skillrunner {

// Fills skill.input_schema(_json) and skill.output_schema(_json) (review
// skills get the fixed {subject, context?} input), reporting to `reader`.
void LoadSkillSchemas(DescriptorReader& reader, Skill& skill);

}  // namespace skillrunner
