#pragma once

// Whether a change of a skill's schemas breaks its callers, after schema
// registries' BACKWARD rule: callers keep sending inputs the old input schema
// took, and keep reading outputs as the old output schema described them.
//
// Breaking, for an input schema (it must still take every old input):
//   a required member added; a type narrowed (a type it took is gone); an
//   enum narrowed (a value it took is gone, or an enum where there was none).
// Breaking, for an output schema (every new output must still read as an old one):
//   a member removed; a required member made optional; a type widened (a
//   type it never gave); an enum widened (a value it never gave, or no enum
//   where there was one).
// Anything else is compatible: an optional input member added, an output
// member added, an input type or enum widened, an output narrowed, text
// changed. Bounds (minimum, maxLength, pattern, ...) are not compared.
//
// Schemas are compared where both describe the same place: the root, each
// property both declare, `items`; local `$ref`s ("#/...") are followed.

#include <boost/json/value.hpp>
#include <string>
#include <vector>

namespace skillrunner::validation {

enum class SchemaSide { kInput, kOutput };

struct SchemaBreak {
  // Where in an instance: "" for the root, "/customer/tier", "/lines/*/amount" (* for any item).
  std::string pointer;
  std::string message;  // e.g. "a required member \"tier\" was added"

  friend bool operator==(const SchemaBreak&, const SchemaBreak&) = default;
};

// Every breaking change from `before` to `after` on `side`, in document order.
std::vector<SchemaBreak> BreakingChanges(SchemaSide side, const boost::json::value& before,
                                         const boost::json::value& after);

}  // namespace skillrunner::validation
