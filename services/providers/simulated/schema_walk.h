#pragma once

// Reading JSON Schemas (draft 4-7) the way the simulated provider needs:
// `$ref` resolution inside one document (#, #/definitions/x, #/$defs/x, any
// local JSON pointer), `allOf` merged into one schema, and the schema that
// governs a JSON pointer into an instance.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/json_pointer.h"

namespace skillrunner::providers::simulation {

using skillrunner::MakePointer;
using skillrunner::ParsePointer;

class SchemaWalker {
 public:
  explicit SchemaWalker(const boost::json::value& root) : root_(root) {}
  explicit SchemaWalker(const boost::json::value&& root) = delete;  // would dangle

  const boost::json::value& root() const { return root_; }

  // The schema `schema` stands for, with `$ref`s followed and `allOf` merged
  // (into `storage` when a merge is needed). `true` and objects without
  // keywords give an empty object; `false`, a broken ref or a non-schema give
  // nullptr.
  const boost::json::object* Effective(const boost::json::value& schema, boost::json::object& storage) const;

  // The schema a child of an instance governed by `parent` must match:
  // properties / patternProperties / additionalProperties for an object key,
  // items / additionalItems for an array index. nullptr when the child is not
  // allowed (additionalProperties: false); `true`-like empty schema when
  // anything goes. anyOf/oneOf branches are searched for the key.
  const boost::json::value* ChildSchema(const boost::json::value& parent, std::string_view token) const;

  // The schema for `tokens` below the root; nullptr when a step is not allowed.
  const boost::json::value* SchemaAt(const std::vector<std::string>& tokens) const;

 private:
  enum class Found { kSpecific, kAny, kForbidden };
  Found Child(const boost::json::value& parent, std::string_view token, int depth,
              const boost::json::value*& out) const;
  const boost::json::value* Resolve(const boost::json::value& schema) const;
  void MergeInto(boost::json::object& into, const boost::json::value& schema, int depth) const;

  const boost::json::value& root_;
};

// The empty schema (accepts anything).
const boost::json::value& AnySchema();

}  // namespace skillrunner::providers::simulation
