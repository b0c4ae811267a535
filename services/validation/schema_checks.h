#pragma once

#include <boost/json/object.hpp>
#include <optional>
#include <string>

namespace skillrunner::validation {

// Checks the values of the standard keywords of one schema object, so that a
// malformed schema ({"type": 5}, {"minimum": "x"}, a bad regex) is refused at
// compile time with a clear message instead of failing inside valijson.
// Count keywords written as 2.0 become 2. Returns the problem, if any.
std::optional<std::string> CheckKeywords(boost::json::object& schema, bool draft4);

}  // namespace skillrunner::validation
