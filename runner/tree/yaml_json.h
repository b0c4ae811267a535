#pragma once

#include <boost/json/value.hpp>
#include <expected>
#include <string>
#include <string_view>
#include <unordered_map>

#include "services/common/json_pointer.h"

namespace skillrunner {

// 1-based line and column in a source file; 0 means unknown.
struct SourcePosition {
  int line = 0;
  int column = 0;
};

// Maps JSON pointers of a converted YAML document to where their values (and,
// for object members, their keys) were written.
class SourceMap {
 public:
  void Add(std::string pointer, SourcePosition value, SourcePosition key);

  // Where the value at `pointer` was written, or else the nearest ancestor's.
  SourcePosition Find(std::string_view pointer) const;
  // Where the key of the member at `pointer` was written (for "unexpected
  // property" errors), falling back to Find.
  SourcePosition FindKey(std::string_view pointer) const;

 private:
  struct Entry {
    SourcePosition value;
    SourcePosition key;
  };
  std::unordered_map<std::string, Entry> entries_;
};

struct YamlDocument {
  boost::json::value value;
  SourceMap positions;
};

struct YamlError {
  SourcePosition position;
  std::string message;
};

struct YamlLimits {
  std::size_t max_nodes = 1'000'000;  // after alias expansion
  std::size_t max_depth = 256;
};

// Parses one YAML document into JSON following the YAML 1.2 core schema:
// quoted scalars are strings; plain true/false, null/~/empty, integers and
// floats become those types; everything else (yes, on, 0x1F as text) stays a
// string. Duplicate keys, non-scalar keys and documents over the limits are
// errors with a position.
std::expected<YamlDocument, YamlError> ParseYaml(std::string_view text, const YamlLimits& limits = {});

}  // namespace skillrunner
