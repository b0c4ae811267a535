#include "runner/diagnostic.h"

#include <boost/json/parse.hpp>

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "runner/embedded_schemas.h"

namespace skillrunner {

std::string Diagnostic::ToString() const {
  std::string out = file;
  if (position.line > 0) {
    out += ":" + std::to_string(position.line) + ":" + std::to_string(position.column);
  }
  out += ": ";
  if (severity == Severity::kWarning) out += "warning: ";
  out += message;
  return out;
}

bool HasErrors(const std::vector<Diagnostic>& diagnostics) {
  for (const auto& d : diagnostics) {
    if (d.severity == Diagnostic::Severity::kError) return true;
  }
  return false;
}

std::expected<YamlDocument, Diagnostic> LoadYamlFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::unexpected(Diagnostic{path, {}, "cannot read file"});
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto doc = ParseYaml(text.str());
  if (!doc) {
    return std::unexpected(Diagnostic{path, doc.error().position,
                                      "YAML syntax error: " + doc.error().message});
  }
  return std::move(*doc);
}

const validation::CompiledSchema& EmbeddedCompiledSchema(std::string_view name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const validation::CompiledSchema>,
                  std::less<>>
      cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(name); it != cache.end()) return *it->second;
  std::string_view text = EmbeddedSchema(name);
  if (text.empty()) throw std::logic_error("no embedded schema " + std::string(name));
  auto compiled = validation::CompiledSchema::Compile(boost::json::parse(text));
  if (!compiled) {
    throw std::logic_error("embedded schema " + std::string(name) +
                           " does not compile: " + compiled.error());
  }
  return *cache.emplace(std::string(name), *compiled).first->second;
}

std::vector<Diagnostic> CheckAgainstEmbeddedSchema(const YamlDocument& doc,
                                                   const std::string& file,
                                                   std::string_view schema_name) {
  std::vector<Diagnostic> out;
  for (const auto& e : EmbeddedCompiledSchema(schema_name).Validate(doc.value)) {
    bool is_key = e.message.starts_with("unexpected property");
    SourcePosition pos = is_key ? doc.positions.FindKey(e.path) : doc.positions.Find(e.path);
    std::string where = e.path.empty() ? std::string("(document)") : e.path;
    out.push_back(Diagnostic{file, pos, where + ": " + e.message});
  }
  return out;
}

}  // namespace skillrunner
