#pragma once

// Lints a skill's JSON Schema at load (DESIGN 9.8): what a metaschema lets
// through but is almost surely a mistake.
//   - an unknown keyword ("requried"), with the closest keyword of the draft;
//   - `required` naming a property that a closed object (additionalProperties:
//     false) does not declare, so no valid instance can exist.

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"

namespace skillrunner {

// `metaschema` is the draft's metaschema (its `properties` are the draft's
// keywords). Each finding is {pointer into the schema, message}.
std::vector<FieldError> LintSchema(const boost::json::value& schema, const boost::json::value& metaschema);

}  // namespace skillrunner
