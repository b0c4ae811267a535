#include "runner/schema_lint.h"

#include <algorithm>

#include "services/common/json_pointer.h"
#include "services/common/text.h"

namespace skillrunner {
namespace json = boost::json;
namespace {

constexpr int kMaxDepth = 64;

// Keywords whose value is one schema, a map of schemas, or a list of them.
constexpr std::string_view kSchemaKeys[] = {"items", "additionalItems", "additionalProperties", "contains",
                                            "propertyNames", "if", "then", "else", "not"};
constexpr std::string_view kSchemaMapKeys[] = {"properties", "patternProperties", "definitions", "$defs",
                                               "dependencies"};
constexpr std::string_view kSchemaListKeys[] = {"allOf", "anyOf", "oneOf", "items"};

class Linter {
 public:
  explicit Linter(const json::value& metaschema) {
    if (const auto* props = metaschema.is_object() ? metaschema.as_object().if_contains("properties") : nullptr;
        props && props->is_object()) {
      for (const auto& [key, unused] : props->as_object()) keywords_.emplace_back(key);
    }
    keywords_.emplace_back("$defs");  // read like definitions (DESIGN 8)
  }

  void Node(const json::value& schema, const std::string& pointer, int depth) {
    if (!schema.is_object() || depth > kMaxDepth) return;
    const json::object& object = schema.as_object();
    for (const auto& [key, value] : object) {
      if (std::find(keywords_.begin(), keywords_.end(), key) == keywords_.end()) {
        findings_.push_back({AppendPointer(pointer, key), "unknown keyword \"" + std::string(key) + "\"" +
                                                              DidYouMean(ClosestNames(key, keywords_, 1))});
      }
    }
    CheckRequired(object, pointer);
    Children(object, pointer, depth);
  }

  std::vector<FieldError> Take() { return std::move(findings_); }

 private:
  void Children(const json::object& object, const std::string& pointer, int depth) {
    for (std::string_view key : kSchemaKeys) {
      if (const auto* child = object.if_contains(key); child && child->is_object()) {
        Node(*child, AppendPointer(pointer, key), depth + 1);
      }
    }
    for (std::string_view key : kSchemaMapKeys) {
      const auto* map = object.if_contains(key);
      if (map == nullptr || !map->is_object()) continue;
      for (const auto& [name, child] : map->as_object()) {
        Node(child, AppendPointer(AppendPointer(pointer, key), name), depth + 1);
      }
    }
    for (std::string_view key : kSchemaListKeys) {
      const auto* list = object.if_contains(key);
      if (list == nullptr || !list->is_array()) continue;
      for (std::size_t i = 0; i < list->as_array().size(); ++i) {
        Node(list->as_array()[i], AppendPointer(AppendPointer(pointer, key), std::to_string(i)), depth + 1);
      }
    }
  }

  void CheckRequired(const json::object& object, const std::string& pointer) {
    const auto* required = object.if_contains("required");
    const auto* additional = object.if_contains("additionalProperties");
    bool closed = additional && additional->is_bool() && !additional->as_bool();
    if (!closed || required == nullptr || !required->is_array()) return;
    const auto* props = object.if_contains("properties");
    for (std::size_t i = 0; i < required->as_array().size(); ++i) {
      const json::value& name = required->as_array()[i];
      if (!name.is_string()) continue;
      bool declared = props && props->is_object() && props->as_object().contains(name.as_string());
      if (declared) continue;
      findings_.push_back({AppendPointer(AppendPointer(pointer, "required"), std::to_string(i)),
                           "required names \"" + std::string(name.as_string()) +
                               "\", which properties does not declare and additionalProperties: false forbids, "
                               "so no answer can match"});
    }
  }

  std::vector<std::string> keywords_;
  std::vector<FieldError> findings_;
};

}  // namespace

std::vector<FieldError> LintSchema(const json::value& schema, const json::value& metaschema) {
  Linter linter(metaschema);
  linter.Node(schema, "", 0);
  return linter.Take();
}

}  // namespace skillrunner
