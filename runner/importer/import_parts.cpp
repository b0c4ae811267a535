#include "runner/importer/import_parts.h"

#include <csv.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "runner/tree/yaml_json.h"

namespace skillrunner::importer {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

struct CsvState {
  std::vector<std::string> row;
  std::vector<std::vector<std::string>> rows;
};

void OnField(void* text, std::size_t size, void* data) {
  static_cast<CsvState*>(data)->row.emplace_back(static_cast<const char*>(text), size);
}

void OnRow(int, void* data) {
  auto* state = static_cast<CsvState*>(data);
  state->rows.push_back(std::move(state->row));
  state->row.clear();
}

Result<json::array> ReadCsv(const fs::path& file, const std::string& text) {
  csv_parser parser;
  if (csv_init(&parser, CSV_STRICT) != 0) return Fail(ErrorCode::kInternal, "cannot start libcsv");
  CsvState state;
  const bool parsed = csv_parse(&parser, text.data(), text.size(), OnField, OnRow, &state) == text.size() &&
                      csv_fini(&parser, OnField, OnRow, &state) == 0;
  const std::string problem = parsed ? "" : csv_strerror(csv_error(&parser));
  csv_free(&parser);
  if (!parsed) return Fail(ErrorCode::kConfigInvalid, file.string() + ": not valid CSV: " + problem);
  json::array rows;
  if (state.rows.empty()) return rows;
  const std::vector<std::string>& names = state.rows.front();
  for (std::size_t r = 1; r < state.rows.size(); ++r) {
    const auto& cells = state.rows[r];
    if (cells.size() == 1 && cells[0].empty()) continue;  // a blank line
    if (cells.size() != names.size()) {
      return Fail(ErrorCode::kConfigInvalid, file.string() + ": row " + std::to_string(r + 1) + " has " +
                                                 std::to_string(cells.size()) + " values for " +
                                                 std::to_string(names.size()) + " columns");
    }
    json::object row;
    for (std::size_t c = 0; c < names.size(); ++c) row[names[c]] = cells[c];
    rows.push_back(std::move(row));
  }
  return rows;
}

Result<json::array> ReadJsonl(const fs::path& file, const std::string& text) {
  json::array rows;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    boost::system::error_code ec;
    json::value row = json::parse(line, ec);
    if (ec) return Fail(ErrorCode::kConfigInvalid, file.string() + ":" + std::to_string(n) + ": not valid JSON");
    rows.push_back(std::move(row));
  }
  return rows;
}

// "string", "integer", "number", "boolean", "array", "object" or "null".
std::string TypeOf(const json::value& v) {
  if (v.is_string()) return "string";
  if (v.is_int64() || v.is_uint64()) return "integer";
  if (v.is_double()) return "number";
  if (v.is_bool()) return "boolean";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return "null";
}

struct Kind {
  std::string_view prefix;  // of a promptfoo provider id
  std::string_view provider;
  std::string_view kind;
  std::string_view base_url;
  std::string_view key_env;
};
constexpr Kind kKinds[] = {
    {"openai", "openai", "openai", "https://api.openai.com/v1", "OPENAI_API_KEY"},
    {"anthropic", "anthropic", "anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY"},
    {"google", "gemini", "gemini", "https://generativelanguage.googleapis.com/v1beta", "GEMINI_API_KEY"},
    {"vertex", "gemini", "gemini", "https://generativelanguage.googleapis.com/v1beta", "GEMINI_API_KEY"},
    {"ollama", "ollama", "openai", "http://127.0.0.1:11434/v1", "OLLAMA_API_KEY"},
};

}  // namespace

Result<std::string> ReadText(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Fail(ErrorCode::kConfigInvalid, "cannot read " + file.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<json::value> ReadYamlFile(const fs::path& file) {
  auto text = ReadText(file);
  if (!text) return std::unexpected(std::move(text.error()));
  auto doc = ParseYaml(*text);
  if (!doc) {
    return Fail(ErrorCode::kConfigInvalid, file.string() + ":" + std::to_string(doc.error().position.line) + ":" +
                                               std::to_string(doc.error().position.column) + ": " +
                                               doc.error().message);
  }
  return std::move(doc->value);
}

Result<json::array> ReadRows(const fs::path& file) {
  const std::string ext = file.extension().string();
  if (ext != ".csv" && ext != ".jsonl") {
    auto value = ReadYamlFile(file);
    if (!value) return std::unexpected(std::move(value.error()));
    if (!value->is_array()) return Fail(ErrorCode::kConfigInvalid, file.string() + ": expected an array of rows");
    return std::move(value->as_array());
  }
  auto text = ReadText(file);
  if (!text) return std::unexpected(std::move(text.error()));
  return ext == ".csv" ? ReadCsv(file, *text) : ReadJsonl(file, *text);
}

std::string AddModel(ImportedTree& tree, std::string_view provider_id, std::string_view base_url,
                     const std::string& where) {
  const std::string id(provider_id);
  const std::size_t colon = id.find(':');
  const std::string prefix = id.substr(0, colon);
  std::string model = colon == std::string::npos ? id : id.substr(id.rfind(':') + 1);
  if (model.empty()) model = id;
  const Kind* kind = nullptr;
  for (const Kind& k : kKinds) {
    if (prefix == k.prefix) kind = &k;
  }
  // Both members first: a reference into an object does not survive an insertion into it.
  for (const char* key : {"providers", "models"}) {
    if (!tree.config[key].is_object()) tree.config[key].emplace_object();
  }
  json::object& providers = tree.config["providers"].as_object();
  json::object& models = tree.config["models"].as_object();
  if (!kind) {
    tree.Report("provider " + prefix, where, "model " + MakeId(id) + " runs on the simulated provider \"unmapped\"");
    providers["unmapped"] = json::object{{"kind", "simulated"}};
    model = MakeId(id);
    models[model] = json::object{{"provider", "unmapped"}};
    return model;
  }
  if (prefix == "vertex") tree.Report("provider vertex", where, "imported as the Gemini API (kind gemini)");
  std::string name(kind->provider);
  json::object entry{
      {"kind", kind->kind}, {"base_url", base_url.empty() ? kind->base_url : base_url}, {"api_key_env", kind->key_env}};
  if (!base_url.empty() && providers.contains(name) &&
      providers[name].as_object().at("base_url") != json::value(json::string(base_url))) {
    name += "_" + MakeId(base_url);
  }
  providers[name] = std::move(entry);
  models[model] = json::object{{"provider", name}};
  return model;
}

json::object InferInputSchema(const std::vector<json::object>& inputs) {
  std::map<std::string, std::set<std::string>> types;
  std::map<std::string, std::size_t> seen;
  for (const auto& input : inputs) {
    for (const auto& [name, value] : input) {
      types[name].insert(TypeOf(value));
      ++seen[name];
    }
  }
  json::object properties;
  json::array required;
  for (const auto& [name, kinds] : types) {
    json::object property;
    if (kinds.size() == 1) property["type"] = *kinds.begin();
    if (kinds == std::set<std::string>{"integer", "number"}) property["type"] = "number";
    properties[name] = std::move(property);
    if (seen[name] == inputs.size()) required.push_back(json::string(name));
  }
  json::object schema{{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) schema["required"] = std::move(required);
  return schema;
}

std::string ConvertTemplate(std::string_view text, std::string_view strip, ImportedTree& tree,
                            const std::string& where) {
  static const std::regex kPlain(R"(\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*(\|[^}]*)?\}\})");
  static const std::regex kOther(R"(\{\{[^}]*\}\}|\{%[^%]*%\}|\{#[^#]*#\})");
  std::string out;
  std::string rest(text);
  std::smatch m;
  while (std::regex_search(rest, m, kPlain)) {
    std::string name = m[1].str();
    if (!strip.empty() && name.starts_with(std::string(strip) + ".")) name = name.substr(strip.size() + 1);
    out += m.prefix().str();
    out += name == strip ? "{{input}}" : "{{input." + name + "}}";
    if (m[2].matched) tree.Report("template filter", where, "dropped: " + m[2].str() + " (the value goes in as it is)");
    rest = m.suffix().str();
  }
  out += rest;
  std::string cleaned;
  std::string tail = out;
  while (std::regex_search(tail, m, kOther)) {
    if (!m.str().starts_with("{{input")) {
      tree.Report(
          "template " + std::string(m.str().substr(0, 2)) + " ... " + std::string(m.str().substr(m.length() - 2)),
          where, "removed: " + m.str());
      cleaned += m.prefix().str();
    } else {
      cleaned += m.prefix().str() + m.str();
    }
    tail = m.suffix().str();
  }
  return cleaned + tail;
}

json::object AnswerSchema() {
  return json::object{{"type", "object"},
                      {"required", json::array{"answer"}},
                      {"additionalProperties", false},
                      {"properties", json::object{{"answer", json::object{{"type", "string"}}}}}};
}

std::string UniqueId(const std::string& id, std::vector<std::string>& taken) {
  std::string candidate = id;
  for (int n = 2; std::find(taken.begin(), taken.end(), candidate) != taken.end(); ++n) {
    candidate = id + "_" + std::to_string(n);
  }
  taken.push_back(candidate);
  return candidate;
}

}  // namespace skillrunner::importer
