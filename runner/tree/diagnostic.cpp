#include "runner/tree/diagnostic.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "runner/tree/embedded_schemas.h"

namespace skillrunner {

std::string Diagnostic::ToString() const {
  std::string out = file;
  if (position.line > 0) {
    out += ":" + std::to_string(position.line) + ":" + std::to_string(position.column);
  }
  out += ": ";
  if (severity == Severity::kWarning) out += "warning: ";
  out += message;
  if (severity == Severity::kWarning && !code.empty()) out += " [" + code + "]";
  return out;
}

void StampCode(std::vector<Diagnostic>& diagnostics, std::size_t from, std::string_view code) {
  for (std::size_t i = from; i < diagnostics.size(); ++i) {
    if (diagnostics[i].code.empty()) diagnostics[i].code = std::string(code);
  }
}

boost::json::array DiagnosticsToJson(const std::vector<Diagnostic>& diagnostics) {
  boost::json::array items;
  for (const auto& d : diagnostics) {
    // Messages start with the JSON pointer they are about ("/model: ...").
    std::string pointer;
    std::string message = d.message;
    if (std::size_t colon = message.find(": "); !message.empty() && message[0] == '/' && colon != std::string::npos) {
      pointer = message.substr(0, colon);
      message = message.substr(colon + 2);
    }
    items.push_back(boost::json::object{{"file", d.file},
                                        {"line", d.position.line},
                                        {"col", d.position.column},
                                        {"pointer", pointer},
                                        {"severity", d.severity == Diagnostic::Severity::kError ? "error" : "warning"},
                                        {"code", d.code},
                                        {"allowed", d.acknowledged},
                                        {"message", message}});
  }
  return items;
}

bool HasErrors(const std::vector<Diagnostic>& diagnostics) {
  for (const auto& d : diagnostics) {
    if (d.severity == Diagnostic::Severity::kError) return true;
  }
  return false;
}

std::expected<YamlDocument, Diagnostic> LoadYamlFile(const std::string& path) {
  // Only a regular file of a sane size: a schema named as /dev/zero or a FIFO
  // would otherwise be read until memory runs out, or forever.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    return std::unexpected(Diagnostic{path, {}, "not a regular file", Diagnostic::Severity::kError, "file-unreadable"});
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return std::unexpected(Diagnostic{path, {}, "cannot read file", Diagnostic::Severity::kError, "file-unreadable"});
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxYamlFileBytes) {
    return std::unexpected(Diagnostic{path,
                                      {},
                                      "larger than " + std::to_string(kMaxYamlFileBytes >> 20) + " MiB",
                                      Diagnostic::Severity::kError,
                                      "file-unreadable"});
  }
  std::ostringstream text;
  text << in.rdbuf();
  return ParseYamlText(path, text.str());
}

std::expected<YamlDocument, Diagnostic> ParseYamlText(const std::string& path, std::string_view text) {
  auto doc = ParseYaml(text);
  if (!doc) {
    return std::unexpected(Diagnostic{path, doc.error().position, "YAML syntax error: " + doc.error().message,
                                      Diagnostic::Severity::kError, "yaml-syntax"});
  }
  return std::move(*doc);
}

const validation::CompiledSchema& EmbeddedCompiledSchema(std::string_view name) {
  static std::mutex mutex;
  static std::map<std::string, std::shared_ptr<const validation::CompiledSchema>, std::less<>> cache;
  std::lock_guard lock(mutex);
  if (auto it = cache.find(name); it != cache.end()) return *it->second;
  std::string_view text = EmbeddedSchema(name);
  if (text.empty()) throw std::logic_error("no embedded schema " + std::string(name));
  auto compiled = validation::CompiledSchema::Compile(boost::json::parse(text));
  if (!compiled) {
    throw std::logic_error("embedded schema " + std::string(name) + " does not compile: " + compiled.error().message);
  }
  return *cache.emplace(std::string(name), *compiled).first->second;
}

PlacedMessage PlaceUnder(std::string base, std::string_view text) {
  std::size_t split = text.starts_with("/") ? text.find(": ") : std::string_view::npos;
  if (split == std::string_view::npos) return {std::move(base), std::string(text)};
  return {base + std::string(text.substr(0, split)), std::string(text.substr(split + 2))};
}

namespace {

const boost::json::value* ResolveRef(const boost::json::value& root, const boost::json::value* node) {
  for (int hops = 0; node && node->is_object() && hops < 8; ++hops) {
    auto* ref = node->as_object().if_contains("$ref");
    if (!ref || !ref->is_string() || !ref->as_string().starts_with("#")) break;
    boost::system::error_code ec;
    node = root.find_pointer(std::string_view(ref->as_string()).substr(1), ec);
  }
  return node;
}

// For an "unexpected property" at `pointer`: the declared property closest to
// its name, found by walking the embedded schema along the pointer.
std::string DidYouMean(const boost::json::value& schema, std::string_view pointer) {
  std::size_t slash = pointer.rfind('/');
  std::string name(pointer.substr(slash + 1));
  const boost::json::value* node = &schema;
  std::string_view rest = pointer.substr(0, slash);
  while (node && !rest.empty()) {
    rest.remove_prefix(1);
    std::size_t next = rest.find('/');
    std::string segment(rest.substr(0, next));
    rest = next == std::string_view::npos ? std::string_view() : rest.substr(next);
    node = ResolveRef(schema, node);
    if (!node || !node->is_object()) return {};
    const auto& obj = node->as_object();
    const boost::json::value* props = obj.if_contains("properties");
    if (props && props->is_object() && props->as_object().contains(segment)) {
      node = &props->as_object().at(segment);
    } else if (auto* extra = obj.if_contains("additionalProperties"); extra && extra->is_object()) {
      node = extra;
    } else if (auto* items = obj.if_contains("items"); items && items->is_object()) {
      node = items;
    } else {
      return {};
    }
  }
  node = ResolveRef(schema, node);
  if (!node || !node->is_object()) return {};
  const boost::json::value* props = node->as_object().if_contains("properties");
  if (!props || !props->is_object()) return {};
  std::string best;
  std::size_t best_distance = 3;
  for (const auto& [key, unused] : props->as_object()) {
    std::size_t d = EditDistance(name, key);
    if (d < best_distance) {
      best_distance = d;
      best = std::string(key);
    }
  }
  return best.empty() ? std::string() : " (did you mean \"" + best + "\"?)";
}

}  // namespace

std::vector<Diagnostic> CheckAgainstEmbeddedSchema(const YamlDocument& doc, const std::string& file,
                                                   std::string_view schema_name) {
  std::vector<Diagnostic> out;
  for (const auto& e : EmbeddedCompiledSchema(schema_name).Validate(doc.value)) {
    bool is_key = e.message.starts_with("unexpected property");
    SourcePosition pos = is_key ? doc.positions.FindKey(e.path) : doc.positions.Find(e.path);
    std::string where = e.path.empty() ? std::string("(document)") : e.path;
    std::string hint = is_key ? DidYouMean(EmbeddedCompiledSchema(schema_name).source(), e.path) : "";
    out.push_back(Diagnostic{file, pos, where + ": " + e.message + hint, Diagnostic::Severity::kError,
                             is_key ? "unknown-key" : "invalid-value"});
  }
  return out;
}

}  // namespace skillrunner
