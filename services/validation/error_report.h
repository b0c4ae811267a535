#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <vector>

#include "services/common/error.h"

namespace valijson {
class ValidationResults;
}

namespace skillrunner::validation {

// Turns valijson's raw results for a failed validation into one FieldError
// per real failure: RFC 6901 paths, wrapper errors dropped, anyOf/oneOf
// failures reported once where they happened, and messages that say what was
// expected (read from the subschema that failed, found through the enter/leave
// marks of schema_rewrite.h) and what was found (read from `instance`, the
// value as the caller gave it).
std::vector<FieldError> BuildReport(const valijson::ValidationResults& results,
                                    const std::vector<const boost::json::object*>& nodes,
                                    const boost::json::value& instance, bool draft4);

}  // namespace skillrunner::validation
