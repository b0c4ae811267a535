#pragma once

// Early abort (design.md §10.7): members of a streamed answer checked against
// the output schema as soon as they are complete.

#include <boost/json/value.hpp>
#include <cstddef>
#include <map>
#include <memory>
#include <vector>

#include "services/common/error.h"
#include "services/common/partial_json.h"
#include "services/validation/compiled_schema.h"

namespace skillrunner::generation {

// Checks each completed value of a PartialJson against the subschema that
// `properties`, `items` and local `$ref`s lead to from the root (nothing
// under anyOf/oneOf/allOf, patternProperties or prefixItems is checked: which
// branch is meant is not known yet). Only what cannot change any more is
// checked: `enum`, `const`, `minimum`, `maximum`, `exclusiveMinimum`,
// `exclusiveMaximum`, and `required` once an object has closed; with the
// validator's own messages. `skip_nulls`: a null is not checked (strict wire
// schemas send absent optional members as null). The schema must outlive it.
class StreamCheck {
 public:
  StreamCheck(const boost::json::value& schema, bool skip_nulls);

  // The errors of the values completed since the last call, by pointer into
  // the answer; empty while every one holds.
  std::vector<FieldError> CheckNew(const PartialJson& parsed);

 private:
  const boost::json::value* SchemaAt(const std::vector<std::string>& tokens) const;
  const boost::json::value* Resolve(const boost::json::value* schema) const;
  const validation::CompiledSchema* Final(const boost::json::value& subschema);

  const boost::json::value& schema_;
  bool skip_nulls_;
  std::size_t checked_ = 0;
  // The final keywords of each subschema met, compiled once (nullptr: none).
  std::map<const boost::json::value*, std::shared_ptr<const validation::CompiledSchema>> compiled_;
};

}  // namespace skillrunner::generation
