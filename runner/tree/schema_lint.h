#pragma once

// Lints a skill's JSON Schema at load (design.md §9.8, §10.1): what a metaschema
// lets through but is almost surely a mistake. Each finding has its lint code
// (runner/tree/lint_codes.h):
//   - keyword-typo (error): a key within 2 edits (a swap counts one) of a
//     keyword of 5+ letters ("requried"): as written it constrains nothing;
//   - unknown-keyword (warning): any other key the draft does not define;
//   - unknown-format (error): a `format` no validator knows, naming the
//     closest known one; format-unchecked (warning): a draft format nothing
//     here checks;
//   - required-undeclared (warning): `required` naming a property that a
//     closed object (additionalProperties: false) does not declare.

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner {

struct SchemaFinding {
  std::string path;     // JSON pointer into the schema
  std::string message;  // without the pointer
  std::string code;     // lint code
  bool error = false;
  bool at_key = false;  // about the key at `path` (else its value)
};

// `metaschema` is the draft's metaschema (its `properties` are the draft's
// keywords); `draft4` picks that draft's format list.
std::vector<SchemaFinding> LintSchema(const boost::json::value& schema, const boost::json::value& metaschema,
                                      bool draft4 = false);

// The `format` names known for a draft: its own list, and the formats
// skillrunner checks or a provider's strict mode takes (uuid, duration).
std::vector<std::string> KnownFormats(bool draft4);

}  // namespace skillrunner
