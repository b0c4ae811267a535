#pragma once

// One skill descriptor as the loaders read it (skill_loader, skill_schemas,
// skill_routing): typed access to its keys, and the errors and warnings they
// find, each placed at the file's line and column of its JSON pointer.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runner/tree/diagnostic.h"

namespace skillrunner {

class DescriptorReader {
 public:
  // `doc`'s value is an object; `warnings` collects the warnings.
  DescriptorReader(const std::string& path, const YamlDocument& doc, std::vector<Diagnostic>& warnings)
      : path_(path), doc_(doc), root_(doc.value.as_object()), warnings_(warnings) {}

  bool Has(std::string_view key) const { return root_.contains(key); }
  std::string Str(std::string_view key) const;
  std::int64_t Int(std::string_view key, std::int64_t fallback) const;
  double Num(std::string_view key, double fallback) const;
  // Where the schema says integer, 2.0 is 2 too (found by the skill_yaml
  // fuzz target: as_int64 threw on it).
  static std::int64_t IntOf(const boost::json::value& v, std::int64_t fallback = 0);

  // "POINTER: MESSAGE" at the pointer's place in the descriptor.
  void Error(const std::string& pointer, const std::string& message, std::string code = "skill-invalid");
  void Warn(const std::string& pointer, const std::string& message, std::string code);
  // A finding placed by the caller (in a schema file of the skill, say).
  void Add(Diagnostic diagnostic);

  const std::string& path() const { return path_; }
  const YamlDocument& doc() const { return doc_; }
  const boost::json::object& root() const { return root_; }
  std::vector<Diagnostic>& errors() { return errors_; }
  std::vector<Diagnostic>& warnings() { return warnings_; }

 private:
  const std::string& path_;
  const YamlDocument& doc_;
  const boost::json::object& root_;
  std::vector<Diagnostic>& warnings_;
  std::vector<Diagnostic> errors_;
};

}  // namespace skillrunner
