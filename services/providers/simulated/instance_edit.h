#pragma once

// Small edits of JSON instances by RFC 6901 tokens, for faults and repairs in
// the simulated provider.

#include <boost/json/array.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/utf8.h"
#include "services/providers/simulated/schema_walk.h"

namespace skillrunner::providers::simulation {

// The value at `tokens`, or nullptr.
boost::json::value* Find(boost::json::value& root, const std::vector<std::string>& tokens);

// Sets the value at `tokens` (the root for none). The parent must exist: an
// object gets the key, an array has the index replaced or, at its size or
// "-", appended. False when the parent is missing or not a container.
bool Put(boost::json::value& root, const std::vector<std::string>& tokens, boost::json::value value);

// Removes the member or element at `tokens`; false when absent.
bool Remove(boost::json::value& root, const std::vector<std::string>& tokens);

// The default target of a fault: the first required property of the root
// schema, else the answer's first property, else the root.
std::vector<std::string> DefaultTokens(const SchemaWalker& walker, const boost::json::value& answer);

// The JSON types `schema` admits ("string", "integer", "number", ...) from
// type, enum, const and anyOf/oneOf; empty when it does not say.
std::vector<std::string> AcceptedTypes(const SchemaWalker& walker, const boost::json::value& schema);

// A judge answer's results: the first array member of the root whose items
// are objects with "criterion_id"; nullptr when there is none.
boost::json::array* JudgeResults(boost::json::value& answer);

using skillrunner::CodePoints;

}  // namespace skillrunner::providers::simulation
