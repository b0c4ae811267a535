#pragma once

#include <boost/json/value.hpp>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::validation {

// Resolves a remote `$ref` document by URI (no network: callers map URIs to
// local files). Returns nullopt when the document is unknown.
using DocumentFetcher = std::function<std::optional<boost::json::value>(std::string_view uri)>;

struct CompileOptions {
  DocumentFetcher fetch;  // optional; without it remote refs fail to compile
};

class CompiledSchemaImpl;

// A JSON Schema (draft 7 by default; draft 4 and 6 by `$schema`), compiled
// once. Immutable after Compile and safe to share between threads: Validate
// may be called concurrently.
class CompiledSchema {
 public:
  // Fails with a message naming what is wrong with the schema (an unsupported
  // `$schema`, a keyword with a value of the wrong type, an unresolvable ref).
  static Result<std::shared_ptr<const CompiledSchema>> Compile(const boost::json::value& schema,
                                                               const CompileOptions& options = {});

  ~CompiledSchema();
  CompiledSchema(const CompiledSchema&) = delete;
  CompiledSchema& operator=(const CompiledSchema&) = delete;

  // One entry per real failure: `path` is an RFC 6901 pointer into the
  // instance ("" for the root, "/lines/0/amount"); `message` says what was
  // expected and what was found. Empty when the instance is valid.
  std::vector<FieldError> Validate(const boost::json::value& instance) const;

  const boost::json::value& source() const;

 private:
  explicit CompiledSchema(std::unique_ptr<CompiledSchemaImpl> impl);
  std::unique_ptr<CompiledSchemaImpl> impl_;
};

}  // namespace skillrunner::validation
