#pragma once

#include <string_view>

namespace skillrunner {

// The JSON Schemas compiled into the program (from skills/, rubrics/ and
// runner/): "skill.schema.json", "rubric.schema.json", "verdict.schema.json",
// "config.schema.json", "suite.schema.json". Returns an empty view for an unknown name.
std::string_view EmbeddedSchema(std::string_view name);

}  // namespace skillrunner
