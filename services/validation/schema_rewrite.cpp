#include "services/validation/schema_rewrite.h"

#include <boost/json.hpp>
#include <map>
#include <regex>
#include <valijson/internal/uri.hpp>

#include "services/validation/custom_constraints.h"
#include "services/validation/error_paths.h"
#include "services/validation/schema_checks.h"
#include "services/validation/value_text.h"

namespace skillrunner::validation {
namespace {

constexpr int kMaxSchemaDepth = 512;

std::string PercentDecode(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '%' && i + 2 < text.size() + 0 && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(std::string(text.substr(i + 1, 2)), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

bool HasType(const boost::json::value& type, std::string_view name) {
  if (type.is_string()) return type.get_string() == name;
  if (const auto* list = type.if_array()) {
    for (const auto& item : *list) {
      if (item.is_string() && item.get_string() == name) return true;
    }
  }
  return false;
}

// "integer" -> "number" (+ our integer check), so that 30.0 is an integer.
void RewriteIntegerType(boost::json::object& schema) {
  auto it = schema.find("type");
  if (it == schema.end() || !HasType(it->value(), "integer") || HasType(it->value(), "number")) {
    return;
  }
  boost::json::value original = it->value();
  if (it->value().is_string()) {
    it->value() = "number";
  } else {
    for (auto& item : it->value().get_array()) {
      if (item.is_string() && item.get_string() == "integer") item = "number";
    }
  }
  schema[kOriginalTypeKeyword] = std::move(original);
  schema[kIntegerKeyword] = true;
}

void Rename(boost::json::object& schema, std::string_view from, std::string_view to) {
  auto it = schema.find(from);
  if (it == schema.end()) return;
  boost::json::value value = std::move(it->value());
  schema.erase(it);
  schema[to] = std::move(value);
}

void DropKeywordsOutsideDraft(boost::json::object& schema, Draft draft) {
  if (draft == Draft::k7) return;
  for (const char* key : {"if", "then", "else"}) schema.erase(key);
  if (draft == Draft::k4) {
    for (const char* key : {"propertyNames", "contains", "const"}) schema.erase(key);
  }
}

}  // namespace

struct SchemaRewriter::Walk {
  SchemaRewriter& owner;
  boost::json::value& root;
  std::size_t document;
  std::set<std::string> visited;
  std::map<std::string, std::vector<std::string>> in_place;  // edges without progress
  std::string error;
  // Following the root schema's $ref chain: valijson resolves a relative
  // document there in this document (the pointer only), so `$ref: object`
  // at the root referred to itself and recursed until the stack ran out.
  bool root_chain;

  bool Fail(std::string message) {
    if (error.empty()) error = std::move(message);
    return false;
  }

  bool Node(boost::json::value& node, const std::string& path, int depth) {
    if (depth > kMaxSchemaDepth) return Fail("schema is nested deeper than 512 levels");
    if (node.is_bool()) return true;
    if (!node.is_object()) {
      return Fail("invalid schema at " + Where(path) + ": expected an object or boolean, found " +
                  DescribeTypedValue(node));
    }
    if (!visited.insert(path).second) return true;
    boost::json::object& schema = node.get_object();
    if (schema.contains(kEnterKeyword)) return true;
    if (auto problem = CheckKeywords(schema, owner.draft_ == Draft::k4)) {
      return Fail("invalid schema at " + Where(path) + ": " + *problem);
    }
    if (auto it = schema.find("$ref"); it != schema.end()) return Ref(it->value().get_string(), path, depth);
    root_chain = false;
    DropKeywordsOutsideDraft(schema, owner.draft_);
    RewriteIntegerType(schema);
    Rename(schema, "format", kFormatKeyword);
    Rename(schema, "multipleOf", kMultipleOfKeyword);
    Rename(schema, "uniqueItems", kUniqueItemsKeyword);
    const int64_t id = static_cast<int64_t>(owner.nodes_.size());
    owner.nodes_.push_back({document, path});
    Bracket(schema, id);
    return Children(schema, path, depth);
  }

  static std::string Where(const std::string& path) { return path.empty() ? std::string("the root") : path; }

  // allOf: [enter, ...allOf, {anyOf}, {oneOf}] and a leave mark: valijson
  // applies allOf first and custom constraints last.
  void Bracket(boost::json::object& schema, int64_t id) {
    boost::json::array all_of;
    all_of.push_back(boost::json::object{{kEnterKeyword, id}});
    if (auto it = schema.find("allOf"); it != schema.end()) {
      for (auto& item : it->value().get_array()) all_of.push_back(std::move(item));
    }
    if (!schema.contains(kWrappedKeyword)) {
      for (const char* key : {"anyOf", "oneOf"}) {
        auto it = schema.find(key);
        if (it == schema.end()) continue;
        boost::json::object wrapped{{key, std::move(it->value())}, {kWrappedKeyword, true}};
        schema.erase(it);
        all_of.push_back(std::move(wrapped));
      }
    }
    schema["allOf"] = std::move(all_of);
    schema[kLeaveKeyword] = id;
  }

  bool Ref(std::string_view ref, const std::string& path, int depth) {
    if (!ref.starts_with('#')) {  // another document: valijson fetches it
      const std::string uri(ref.substr(0, ref.find('#')));
      if (root_chain && !valijson::internal::uri::isUriAbsolute(uri) && !valijson::internal::uri::isUrn(uri)) {
        return Fail("unresolvable $ref \"" + std::string(ref) + "\" at " + Where(path) +
                    ": a relative URI names no document here (a place in this schema is \"#/...\")");
      }
      return true;
    }
    std::string pointer = PercentDecode(ref.substr(1));
    while (!pointer.empty() && pointer.back() == '/') pointer.pop_back();
    boost::system::error_code ec;
    boost::json::value* target = root.find_pointer(pointer, ec);
    if (target == nullptr) return Fail("unresolvable $ref \"" + std::string(ref) + "\" at " + Where(path));
    in_place[path].push_back(pointer);
    return Node(*target, pointer, depth + 1);
  }

  bool Child(boost::json::object& schema, std::string_view key, const std::string& path, int depth, bool progress) {
    auto it = schema.find(key);
    if (it == schema.end()) return true;
    std::string child = path + "/" + EscapePointerToken(key);
    if (!progress) in_place[path].push_back(child);
    return Node(it->value(), child, depth + 1);
  }

  bool ChildList(boost::json::object& schema, std::string_view key, const std::string& path, int depth, bool progress) {
    auto it = schema.find(key);
    if (it == schema.end() || !it->value().is_array()) return Child(schema, key, path, depth, progress);
    auto& list = it->value().get_array();
    for (std::size_t i = 0; i < list.size(); ++i) {
      std::string child = path + "/" + EscapePointerToken(key) + "/" + std::to_string(i);
      if (!progress) in_place[path].push_back(child);
      if (!Node(list[i], child, depth + 1)) return false;
    }
    return true;
  }

  bool ChildMap(boost::json::object& schema, std::string_view key, const std::string& path, int depth, bool progress) {
    auto it = schema.find(key);
    if (it == schema.end()) return true;
    for (auto& member : it->value().get_object()) {
      if (member.value().is_array()) continue;  // property dependencies
      std::string child = path + "/" + EscapePointerToken(key) + "/" + EscapePointerToken(member.key());
      if (!progress) in_place[path].push_back(child);
      if (!Node(member.value(), child, depth + 1)) return false;
    }
    return true;
  }

  bool Children(boost::json::object& schema, const std::string& path, int depth) {
    for (const char* key : {"allOf", "anyOf", "oneOf"}) {
      if (!ChildList(schema, key, path, depth, false)) return false;
    }
    for (const char* key : {"not", "if", "then", "else"}) {
      if (!Child(schema, key, path, depth, false)) return false;
    }
    if (!ChildMap(schema, "dependencies", path, depth, false)) return false;
    for (const char* key : {"properties", "patternProperties", "definitions", "$defs"}) {
      if (!ChildMap(schema, key, path, depth, true)) return false;
    }
    if (!ChildList(schema, "items", path, depth, true)) return false;
    for (const char* key : {"additionalItems", "additionalProperties", "contains", "propertyNames"}) {
      if (!Child(schema, key, path, depth, true)) return false;
    }
    return true;
  }

  // A cycle of in-place edges ($ref, allOf, not, ...) would recurse forever.
  bool CheckCycles() {
    std::map<std::string, int> state;  // 1 = on the stack, 2 = done
    for (const auto& [start, _] : in_place) {
      if (!Visit(start, state)) return false;
    }
    return true;
  }

  bool Visit(const std::string& path, std::map<std::string, int>& state) {
    int& mark = state[path];
    if (mark == 2) return true;
    if (mark == 1) return Fail("schema recursion without progress through " + Where(path));
    mark = 1;
    if (auto it = in_place.find(path); it != in_place.end()) {
      for (const auto& next : it->second) {
        if (!Visit(next, state)) return false;
      }
    }
    state[path] = 2;
    return true;
  }
};

std::optional<std::string> SchemaRewriter::Rewrite(boost::json::value& document, std::size_t document_index) {
  Walk walk{*this, document, document_index, {}, {}, {}, document_index == 0};
  if (!walk.Node(document, "", 0) || !walk.CheckCycles()) return walk.error;
  return std::nullopt;
}

Result<Draft> DetectDraft(const boost::json::value& schema) {
  const auto* object = schema.if_object();
  if (object == nullptr) return Draft::k7;
  auto it = object->find("$schema");
  if (it == object->end()) return Draft::k7;
  if (!it->value().is_string()) return Fail(ErrorCode::kConfigInvalid, "\"$schema\" must be a string");
  std::string_view uri = it->value().get_string();
  std::string_view rest = uri;
  if (rest.starts_with("https://")) {
    rest.remove_prefix(8);
  } else if (rest.starts_with("http://")) {
    rest.remove_prefix(7);
  }
  if (rest.ends_with('#')) rest.remove_suffix(1);
  if (rest == "json-schema.org/draft-07/schema") return Draft::k7;
  if (rest == "json-schema.org/draft-06/schema") return Draft::k6;
  if (rest == "json-schema.org/draft-04/schema") return Draft::k4;
  return Fail(ErrorCode::kConfigInvalid,
              "unsupported \"$schema\" \"" + std::string(uri) + "\": only JSON Schema draft 4, 6 and 7 are supported");
}

}  // namespace skillrunner::validation
