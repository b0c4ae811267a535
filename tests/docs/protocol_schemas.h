#pragma once

// The protocol's JSON Schemas as shipped in schemas/, compiled once, with the
// references between them resolved from that folder, for tests that hold real
// answers against them.

#include <boost/json/value.hpp>
#include <string>
#include <vector>

namespace skillrunner::testing {

// schemas/ in the source tree.
std::string SchemasDir();

// The names of every file in schemas/, sorted.
std::vector<std::string> SchemaFiles();

// The parsed JSON of schemas/NAME (fails the test when it cannot be read).
boost::json::value SchemaJson(const std::string& name);

// What is wrong with `instance` under schemas/NAME: one "pointer: message"
// line per failure with the instance itself, or "" when it is valid. A schema
// that does not compile is reported the same way.
std::string SchemaViolations(const std::string& name, const boost::json::value& instance);

// docs/protocol.md.
std::string ProtocolDoc();

}  // namespace skillrunner::testing
