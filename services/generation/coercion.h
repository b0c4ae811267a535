#pragma once

// `coercion: lax` (design.md §9.2): before validation, values whose type the
// schema does not allow are converted where the schema asks for another type
// and the conversion loses nothing: "42" -> 42 and "2.5" -> 2.5 (but "2.5"
// never becomes an integer), "true"/"false" -> booleans, a number -> its text
// for a string, a single value -> [value] for an array. Followed through
// `properties`, `additionalProperties`, `items` and `prefixItems`; nothing
// under `anyOf`/`oneOf`/`allOf`/`$ref` is touched (which branch is meant is
// not known before validation).

#include <boost/json/value.hpp>
#include <string>
#include <vector>

namespace skillrunner::generation {

enum class Coercion { kStrict, kLax };

// Converts in place; returns the JSON pointers of the values it changed, in
// document order.
std::vector<std::string> CoerceToSchema(boost::json::value& value, const boost::json::value& schema);

}  // namespace skillrunner::generation
