#include "tests/docs/protocol_schemas.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include "services/validation/compiled_schema.h"

namespace skillrunner::testing {
namespace fs = std::filesystem;
namespace json = boost::json;

namespace {

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A `$ref` to another file names it relative to schemas/ ("x.schema.json").
std::optional<json::value> FetchSibling(std::string_view uri) {
  std::string name(uri.substr(0, uri.find('#')));
  if (name.empty() || name.find('/') != std::string::npos) return std::nullopt;
  fs::path path = fs::path(SchemasDir()) / name;
  if (!fs::exists(path)) return std::nullopt;
  boost::system::error_code ec;
  json::value parsed = json::parse(ReadFile(path), ec);
  if (ec) return std::nullopt;
  return parsed;
}

using Compiled = Result<std::shared_ptr<const validation::CompiledSchema>>;

const Compiled& CompiledFor(const std::string& name) {
  static std::mutex mutex;
  static std::map<std::string, Compiled> cache;
  std::lock_guard lock(mutex);
  auto it = cache.find(name);
  if (it == cache.end()) {
    validation::CompileOptions options;
    options.fetch = FetchSibling;
    it = cache.emplace(name, validation::CompiledSchema::Compile(SchemaJson(name), options)).first;
  }
  return it->second;
}

}  // namespace

std::string SchemasDir() { return (fs::path(SKILLRUNNER_SOURCE_DIR) / "schemas").string(); }

std::vector<std::string> SchemaFiles() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(SchemasDir())) {
    // schemas/view/ holds the viewer's HTTP API, not the socket protocol.
    if (entry.is_regular_file()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

json::value SchemaJson(const std::string& name) {
  fs::path path = fs::path(SchemasDir()) / name;
  boost::system::error_code ec;
  json::value parsed = json::parse(ReadFile(path), ec);
  EXPECT_FALSE(ec) << path << " is not JSON: " << ec.message();
  return parsed;
}

std::string SchemaViolations(const std::string& name, const json::value& instance) {
  const Compiled& compiled = CompiledFor(name);
  if (!compiled) return name + " does not compile: " + compiled.error().message;
  std::string out;
  for (const auto& e : (*compiled)->Validate(instance))
    out += (e.path.empty() ? "(root)" : e.path) + ": " + e.message + "\n";
  if (!out.empty()) out += "in " + json::serialize(instance);
  return out;
}

std::string ProtocolDoc() { return ReadFile(fs::path(SKILLRUNNER_SOURCE_DIR) / "docs" / "protocol.md"); }

}  // namespace skillrunner::testing
