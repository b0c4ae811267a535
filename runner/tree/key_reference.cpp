#include "runner/tree/key_reference.h"

#include <boost/json/parse.hpp>

#include "runner/tree/embedded_schemas.h"
#include "runner/tree/lint_codes.h"
#include "services/common/json_text.h"

namespace skillrunner {
namespace json = boost::json;
namespace {

struct Section {
  std::string_view schema;
  std::string_view title;
  std::string_view where;
};

constexpr Section kSections[] = {
    {"skill.schema.json", "skill.yaml", "one per skill folder: `skills/<folder>/skill.yaml`"},
    {"rubric.schema.json", "Rubrics", "`rubrics/<name>.yaml`"},
    {"suite.schema.json", "Eval suites", "the file given to `skillrunner eval SUITE.yaml`"},
    {"config.schema.json", "skillrunner.yaml", "`./skillrunner.yaml` or `--config FILE`"},
};

struct Row {
  std::string key;
  std::string takes;
  std::string description;
};

const json::value& Resolve(const json::value& root, const json::value& node) {
  const json::object* object = node.if_object();
  const json::value* ref = object ? object->if_contains("$ref") : nullptr;
  if (ref == nullptr || !ref->is_string() || !ref->as_string().starts_with("#/definitions/")) return node;
  std::string name(std::string_view(ref->as_string()).substr(14));
  const json::value* target = root.at("definitions").as_object().if_contains(name);
  return target ? *target : node;
}

std::string Takes(const json::value& node) {
  const json::object& object = node.as_object();
  if (const auto* values = object.if_contains("enum")) {
    std::string out;
    for (const auto& value : values->as_array()) out += (out.empty() ? "" : " \\| ") + CompactJson(value);
    return out;
  }
  std::string out;
  if (const auto* type = object.if_contains("type"); type && type->is_string()) out = std::string(type->as_string());
  if (const auto* type = object.if_contains("type"); type && type->is_array()) {
    for (const auto& name : type->as_array()) {
      if (name.is_string()) out += (out.empty() ? "" : " or ") + std::string(name.as_string());
    }
  }
  if (out.empty()) out = object.contains("properties") ? "object" : "any";
  if (const auto* min = object.if_contains("minimum")) out += " >= " + CompactJson(*min);
  if (const auto* max = object.if_contains("maximum")) out += " <= " + CompactJson(*max);
  return out;
}

std::string Description(const json::value& declared, const json::value& resolved) {
  for (const json::value* node : {&declared, &resolved}) {
    if (const auto* d = node->as_object().if_contains("description"); d && d->is_string())
      return std::string(d->as_string());
  }
  return {};
}

void Walk(const json::value& root, const json::value& schema, const std::string& prefix, std::vector<Row>& rows,
          int depth) {
  const json::value& node = Resolve(root, schema);
  if (!node.is_object() || depth > 8) return;
  if (const auto* props = node.as_object().if_contains("properties"); props && props->is_object()) {
    for (const auto& [name, child] : props->as_object()) {
      const json::value& resolved = Resolve(root, child);
      std::string key = prefix + std::string(name);
      rows.push_back({key, resolved.is_object() ? Takes(resolved) : "any", Description(child, resolved)});
      if (!resolved.is_object()) continue;
      const json::object& r = resolved.as_object();
      if (const auto* items = r.if_contains("items"); items && Resolve(root, *items).is_object()) {
        Walk(root, *items, key + "[].", rows, depth + 1);
      }
      if (const auto* extra = r.if_contains("additionalProperties"); extra && extra->is_object()) {
        Walk(root, *extra, key + ".<name>.", rows, depth + 1);
      }
      if (r.contains("properties") && !r.contains("$schema")) Walk(root, resolved, key + ".", rows, depth + 1);
    }
  }
}

std::vector<Row> RowsOf(std::string_view schema_name) {
  json::value root = json::parse(EmbeddedSchema(schema_name));
  std::vector<Row> rows;
  Walk(root, root, "", rows, 0);
  return rows;
}

}  // namespace

std::string KeyReferenceMarkdown() {
  std::string out =
      "# Key reference\n\n"
      "Every key of the files a team writes, generated from the JSON Schemas compiled into skillrunner\n"
      "(`skillrunner schema --markdown` prints this page; a test keeps docs/reference.md equal to it).\n"
      "Unknown keys are errors, reported with their line and column.\n";
  for (const Section& section : kSections) {
    out += "\n## " + std::string(section.title) + "\n\n" + std::string(section.where) + "\n\n";
    out += "| key | takes | what it does |\n|---|---|---|\n";
    for (const Row& row : RowsOf(section.schema)) {
      out += "| `" + row.key + "` | " + row.takes + " | " + row.description + " |\n";
    }
  }
  return out + LintCodesMarkdown();
}

std::vector<std::string> UndescribedKeys() {
  std::vector<std::string> out;
  for (const Section& section : kSections) {
    for (const Row& row : RowsOf(section.schema)) {
      if (row.description.empty()) out.push_back(std::string(section.schema) + ": " + row.key);
    }
  }
  return out;
}

}  // namespace skillrunner
