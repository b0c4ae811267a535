#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::validation {

// One failure valijson reported at `tokens` (the instance location), raised by
// the subschema `owner` (nullptr when unknown).
struct Leaf {
  std::string_view description;  // valijson's text, or one of our tags
  const std::vector<std::string>& tokens;
  const boost::json::object* owner;
  const boost::json::value& instance;  // the whole instance, as given
  bool draft4;
};

// Appends the FieldError(s) for one leaf failure: "expected ..., found ...",
// falling back to valijson's description when the subschema is unknown.
void AppendLeafErrors(const Leaf& leaf, std::vector<FieldError>& out);

// The type list of a "type" keyword: "integer", "string or null",
// "string, number or null".
std::string DescribeTypes(const boost::json::value& type);

}  // namespace skillrunner::validation
