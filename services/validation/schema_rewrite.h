#pragma once

#include <boost/json/value.hpp>
#include <cstddef>
#include <expected>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::validation {

enum class Draft { k4, k6, k7 };

// Draft 7 without `$schema`; 4, 6 and 7 by their json-schema.org URIs (http or
// https, with or without '#'); anything else is refused, naming the value.
Result<Draft> DetectDraft(const boost::json::value& schema);

// Where a rewritten subschema lives: which document and the pointer into it.
struct NodeLocation {
  std::size_t document = 0;
  std::string pointer;
};

// Prepares schema documents for valijson, in place:
//  - checks keyword values (wrong types, bad regexes) with clear messages;
//  - drops keywords the draft does not have (valijson would refuse them);
//  - "format" and "multipleOf" become our own constraints; "integer" types
//    become "number" plus an integer check that accepts 30.0;
//  - anyOf/oneOf move into their own subschema inside allOf, so that a
//    failure can be reported once, at its location;
//  - every subschema gets an id and enter/leave marks (custom constraints)
//    that bracket the errors it reports, so an error can be traced to the
//    subschema, and its keyword values, that raised it;
//  - refuses recursion that makes no progress (a $ref/allOf cycle).
// Numbers must already be normalised (NormaliseNumbers).
class SchemaRewriter {
 public:
  explicit SchemaRewriter(Draft draft) : draft_(draft) {}

  // Returns an error message naming the problem, or nullopt when done.
  std::optional<std::string> Rewrite(boost::json::value& document, std::size_t document_index);

  // Subschema locations indexed by id.
  const std::vector<NodeLocation>& nodes() const { return nodes_; }

 private:
  struct Walk;
  Draft draft_;
  std::vector<NodeLocation> nodes_;
};

}  // namespace skillrunner::validation
