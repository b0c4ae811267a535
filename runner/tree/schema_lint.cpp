#include "runner/tree/schema_lint.h"

#include <algorithm>

#include "services/common/json_pointer.h"
#include "services/common/text.h"
#include "services/validation/formats.h"

namespace skillrunner {
namespace json = boost::json;
namespace {

constexpr int kMaxDepth = 64;
// A typo is this close to a keyword this long (design.md §10.1).
constexpr std::size_t kTypoDistance = 2;
constexpr std::size_t kTypoKeywordLength = 5;

// Keywords whose value is one schema, a map of schemas, or a list of them.
constexpr std::string_view kSchemaKeys[] = {
    "items", "additionalItems", "additionalProperties", "contains", "propertyNames", "if", "then", "else", "not"};
constexpr std::string_view kSchemaMapKeys[] = {"properties", "patternProperties", "definitions", "$defs",
                                               "dependencies"};
constexpr std::string_view kSchemaListKeys[] = {"allOf", "anyOf", "oneOf", "items"};

constexpr std::string_view kDraft4Formats[] = {"date-time", "email", "hostname", "ipv4", "ipv6", "uri"};
constexpr std::string_view kDraft7Formats[] = {
    "date-time",     "date",         "time",          "email",
    "idn-email",     "hostname",     "idn-hostname",  "ipv4",
    "ipv6",          "uri",          "uri-reference", "iri",
    "iri-reference", "uri-template", "json-pointer",  "relative-json-pointer",
    "regex"};
// Outside draft-07's list, but checked here (uuid) or taken by a provider's
// strict mode (duration): not a typo.
constexpr std::string_view kExtraFormats[] = {"date", "time", "uuid", "duration"};

// Keys that are no keyword but never a typo: annotations by convention.
bool TypoExempt(std::string_view key) { return key == "example" || key == "examples" || key.starts_with("x-"); }

class Linter {
 public:
  Linter(const json::value& metaschema, bool draft4) : formats_(KnownFormats(draft4)) {
    if (const auto* props = metaschema.is_object() ? metaschema.as_object().if_contains("properties") : nullptr;
        props && props->is_object()) {
      for (const auto& [key, unused] : props->as_object()) keywords_.emplace_back(key);
    }
    keywords_.emplace_back("$defs");  // read like definitions (design.md §8)
  }

  void Node(const json::value& schema, const std::string& pointer, int depth) {
    if (!schema.is_object() || depth > kMaxDepth) return;
    const json::object& object = schema.as_object();
    for (const auto& [key, value] : object) {
      if (std::find(keywords_.begin(), keywords_.end(), key) == keywords_.end()) Unknown(key, pointer);
    }
    CheckFormat(object, pointer);
    CheckRequired(object, pointer);
    Children(object, pointer, depth);
  }

  std::vector<SchemaFinding> Take() { return std::move(findings_); }

 private:
  void Unknown(std::string_view key, const std::string& pointer) {
    std::string at = AppendPointer(pointer, key);
    std::string message = "unknown keyword \"" + std::string(key) + "\"";
    if (!TypoExempt(key)) {
      for (const std::string& keyword : keywords_) {
        if (keyword.size() < kTypoKeywordLength || DamerauDistance(key, keyword) > kTypoDistance) continue;
        findings_.push_back(
            {at, message + DidYouMean({keyword}) + "; as written it constrains nothing", "keyword-typo", true, true});
        return;
      }
    }
    findings_.push_back({at, message + DidYouMean(ClosestNames(key, keywords_, 1)), "unknown-keyword", false, true});
  }

  void CheckFormat(const json::object& object, const std::string& pointer) {
    const auto* format = object.if_contains("format");
    if (format == nullptr || !format->is_string()) return;
    const std::string name(format->as_string());
    const std::string at = AppendPointer(pointer, "format");
    if (std::find(formats_.begin(), formats_.end(), name) == formats_.end()) {
      auto closest = ClosestNames(name, formats_, 1);
      std::string known;
      for (const auto& f : formats_) known += (known.empty() ? "" : ", ") + f;
      findings_.push_back(
          {at,
           "unknown format \"" + name + "\"" +
               (closest.empty() ? " (known formats: " + known + ")" : ": did you mean \"" + closest.front() + "\"?"),
           "unknown-format", true, false});
    } else if (!validation::IsCheckedFormat(name)) {
      findings_.push_back({at, "format \"" + name + "\" is checked by no validator here: any string passes",
                           "format-unchecked", false, false});
    }
  }

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
                               "\", which properties does not declare and "
                               "additionalProperties: false forbids, "
                               "so no answer can match",
                           "required-undeclared", false, false});
    }
  }

  std::vector<std::string> keywords_;
  std::vector<std::string> formats_;
  std::vector<SchemaFinding> findings_;
};

}  // namespace

std::vector<std::string> KnownFormats(bool draft4) {
  std::vector<std::string> out;
  auto add = [&out](std::string_view name) {
    if (std::find(out.begin(), out.end(), name) == out.end()) out.emplace_back(name);
  };
  if (draft4) {
    for (std::string_view name : kDraft4Formats) add(name);
  } else {
    for (std::string_view name : kDraft7Formats) add(name);
  }
  for (std::string_view name : kExtraFormats) add(name);
  return out;
}

std::vector<SchemaFinding> LintSchema(const json::value& schema, const json::value& metaschema, bool draft4) {
  Linter linter(metaschema, draft4);
  linter.Node(schema, "", 0);
  return linter.Take();
}

}  // namespace skillrunner
