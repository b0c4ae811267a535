#pragma once

#include <boost/json/value.hpp>
#include <string>

namespace skillrunner::validation {

// Compact JSON for a value, with numbers written the way a person would
// (5, 0.5, 1e+20) rather than Boost.JSON's "5E0".
std::string RenderJson(const boost::json::value& value);

// A found value for an error message: strings JSON-quoted and cut to about 40
// characters with "…", numbers/booleans/null as JSON, "object", "array".
std::string DescribeValue(const boost::json::value& value);

// DescribeValue prefixed with the JSON type where it helps: `string "high"`,
// `number 3`, `boolean true`, `null`, `object`, `array`.
std::string DescribeTypedValue(const boost::json::value& value);

// "string", "number", "boolean", "null", "object" or "array".
const char* JsonTypeName(const boost::json::value& value);

}  // namespace skillrunner::validation
