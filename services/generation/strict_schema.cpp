// The strict-schema transform: the walk over the schema, $ref handling and
// root definitions. Keyword rules live in strict_schema_keywords.cpp, size
// limits in strict_schema_limits.cpp.

#include "services/generation/strict_schema.h"

#include <algorithm>
#include <boost/json/array.hpp>

#include "services/generation/strict_schema_internal.h"

namespace skillrunner::generation {
namespace strict_detail {
namespace {

// Keys a $ref may sit beside without forcing an inline copy: they carry no
// constraint and are removed from the wire anyway.
bool IsSilentKey(std::string_view key) {
  return key == "$ref" || key == "$comment" || key == "$id" || key == "$schema" || key == "default" ||
         key == "examples" || key == "$defs" || key == "definitions";
}

bool IsPlainAllOfKey(std::string_view key) {
  return key == "type" || key == "properties" || key == "required" || key == "additionalProperties" ||
         key == "description" || key == "title" || (key != "$ref" && IsSilentKey(key));
}

}  // namespace

void Transformer::Fail(std::string_view pointer, std::string_view message) {
  if (!error_) error_ = Where(pointer) + ": " + std::string(message);
}

Result<StrictSchema> Transformer::Run() {
  if (!CollectDefs()) return skillrunner::Fail(ErrorCode::kConfigInvalid, *error_);
  json::value wire;
  if (root_.is_object()) {
    json::object root_copy = root_.get_object();
    root_copy.erase("$defs");
    root_copy.erase("definitions");
    wire = root_copy.contains("$ref") ? Ref(root_copy, "", 0, true) : Node(root_copy, "", 0);
  } else {
    wire = Node(root_, "", 0);
  }
  for (std::size_t i = 0; i < needed_.size() && !error_; ++i) {
    current_def_ = needed_[i];
    const Def& def = defs_.at(current_def_);
    wire_defs_[current_def_] = Node(*def.schema, def.pointer, 1);
  }
  current_def_.clear();
  if (error_) return skillrunner::Fail(ErrorCode::kConfigInvalid, *error_);
  if (!wire.is_object()) {
    Fail("", "the schema must be an object");
    return skillrunner::Fail(ErrorCode::kConfigInvalid, *error_);
  }
  // Gemini takes any root; OpenAI and Anthropic need one object.
  bool wrap = !gemini() && !IsOneObject(wire);
  if (wrap) {
    for (const Edge& edge : edges_) {
      if (!edge.to.empty()) continue;
      Fail(edge.pointer,
           "$ref \"#\" makes the root recursive, and a root that is not one object goes on the "
           "wire inside {\"value\": ...}, where \"#\" would mean that wrapper");
      return skillrunner::Fail(ErrorCode::kConfigInvalid, *error_);
    }
    // design.md §9.2: any root, as the one required property of a closed object.
    wire = json::object{{"type", "object"},
                        {"properties", json::object{{"value", std::move(wire)}}},
                        {"required", json::array{"value"}},
                        {"additionalProperties", false}};
  }
  if (!needed_.empty()) wire.get_object()["$defs"] = WireDefs();
  if (openai()) {
    CheckOpenAiLimits(wire);
  } else {
    CheckRecursion();
    if (!gemini()) CheckAnthropicCaps(wire);
  }
  if (error_) return skillrunner::Fail(ErrorCode::kConfigInvalid, *error_);
  return StrictSchema{std::move(wire), std::move(client_only_), wrap};
}

bool Transformer::CollectDefs() {
  if (!root_.is_object()) return true;
  for (const auto& [key, value] : root_.get_object()) {
    if (key != "$defs" && key != "definitions") continue;
    std::string base = "/" + std::string(key);
    if (!value.is_object()) {
      Fail(base, "must be an object of schemas");
      return false;
    }
    for (const auto& [name, schema] : value.get_object()) {
      std::string pointer = base + "/" + EscapePointerToken(name);
      std::string def_name(name);
      if (auto found = defs_.find(def_name); found != defs_.end()) {
        if (*found->second.schema == schema) continue;
        Fail(pointer, "\"" + def_name + "\" is defined in both definitions and $defs, differently");
        return false;
      }
      defs_[def_name] = Def{pointer, &schema, key == "definitions"};
      def_order_.push_back(def_name);
    }
  }
  return true;
}

bool Transformer::IsOneObject(const json::value& wire) {
  const json::object& o = wire.get_object();
  const json::value* type = o.if_contains("type");
  return type != nullptr && type->is_string() && type->get_string() == "object" && !o.contains("anyOf") &&
         !o.contains("oneOf") && !o.contains("$ref");
}

json::value Transformer::Node(const json::value& schema, const std::string& ptr, int depth) {
  if (error_) return nullptr;
  if (depth > kMaxSchemaDepth) {
    Fail(ptr, "the schema is nested more than " + std::to_string(kMaxSchemaDepth) + " levels deep");
    return nullptr;
  }
  if (schema.is_bool()) {
    Fail(ptr, schema.get_bool() ? "schema true (anything) has no type; strict mode needs one"
                                : "schema false (nothing) cannot be expressed in strict mode");
    return nullptr;
  }
  if (!schema.is_object()) {
    Fail(ptr, "a schema must be an object or a boolean, found " + ValueText(schema));
    return nullptr;
  }
  const json::object& in = schema.get_object();
  if (in.contains("$ref")) return Ref(in, ptr, depth, false);
  if ((openai() || gemini()) && in.contains("allOf")) {
    json::object merged;
    if (!MergeAllOf(in, ptr, merged)) return nullptr;
    return Node(merged, ptr, depth + 1);
  }
  return Keywords(in, ptr, depth);
}

std::optional<std::string> Transformer::DefName(std::string_view ref) const {
  std::string_view rest;
  if (ref.starts_with("#/$defs/")) {
    rest = ref.substr(8);
  } else if (ref.starts_with("#/definitions/")) {
    rest = ref.substr(14);
  } else {
    return std::nullopt;
  }
  if (rest.find('/') != std::string_view::npos) return std::nullopt;
  const json::value* target = ResolveLocalRef(root_, ref);
  if (target == nullptr) return std::nullopt;
  for (const auto& [name, def] : defs_) {
    if (def.schema == target) return name;
  }
  for (const auto& [name, def] : defs_) {  // the same schema under the other container
    if (*def.schema == *target && (ref.ends_with("/" + EscapePointerToken(name)))) return name;
  }
  return std::nullopt;
}

json::value Transformer::Ref(const json::object& schema, const std::string& ptr, int depth, bool force_inline) {
  const json::value& ref_value = schema.at("$ref");
  if (!ref_value.is_string()) {
    Fail(ptr, "$ref must be a string, found " + ValueText(ref_value));
    return nullptr;
  }
  std::string ref(ref_value.get_string());
  std::string quoted = "$ref \"" + ref + "\"";
  if (ref.empty() || ref[0] != '#') {
    Fail(ptr, quoted + " is not local; strict mode takes only references inside the schema (\"#...\")");
    return nullptr;
  }
  bool has_siblings =
      std::any_of(schema.begin(), schema.end(), [](const auto& member) { return !IsSilentKey(member.key()); });
  if (!has_siblings && !force_inline) {
    if (ref == "#") {
      if (!openai()) {
        Fail(ptr, quoted + " makes the schema recursive; " + std::string(DialectName()) +
                      " strict mode does not take recursive schemas");
        return nullptr;
      }
      edges_.push_back(Edge{current_def_, "", ptr, ref});
      return json::object{{"$ref", "#"}};
    }
    if (auto name = DefName(ref)) {
      if (std::find(needed_.begin(), needed_.end(), *name) == needed_.end()) needed_.push_back(*name);
      edges_.push_back(Edge{current_def_, *name, ptr, ref});
      return json::object{{"$ref", "#/$defs/" + EscapePointerToken(*name)}};
    }
  }
  return InlineRef(schema, ref, ptr, depth);
}

json::value Transformer::InlineRef(const json::object& schema, const std::string& ref, const std::string& ptr,
                                   int depth) {
  const std::string quoted = "$ref \"" + ref + "\"";
  const json::value* target = ResolveLocalRef(root_, ref);
  if (target == nullptr) {
    Fail(ptr, quoted + " does not resolve inside the schema");
    return nullptr;
  }
  if (std::find(inline_stack_.begin(), inline_stack_.end(), ref) != inline_stack_.end()) {
    Fail(ptr, quoted + " recurses through a schema that has to be copied in place; strict mode cannot express it");
    return nullptr;
  }
  if (++inlines_ > kMaxInlines) {
    Fail(ptr, "more than " + std::to_string(kMaxInlines) + " $ref expansions; the schema is too large for strict mode");
    return nullptr;
  }
  json::value merged;
  if (target->is_object()) {
    json::object copy = target->get_object();
    if (target == &root_) {
      copy.erase("$defs");
      copy.erase("definitions");
    }
    for (const auto& [key, value] : schema) {
      if (key != "$ref") copy[key] = value;
    }
    merged = std::move(copy);
  } else {
    merged = *target;
  }
  inline_stack_.push_back(ref);
  json::value result = Node(merged, ptr, depth + 1);
  inline_stack_.pop_back();
  return result;
}

bool Transformer::MergeAllOf(const json::object& schema, const std::string& ptr, json::object& merged) {
  merged = schema;
  merged.erase("allOf");
  const json::value& branches = schema.at("allOf");
  if (!branches.is_array() || branches.get_array().empty()) {
    Fail(ptr + "/allOf", "allOf must be a non-empty array of schemas");
    return false;
  }
  std::size_t index = 0;
  for (const auto& raw : branches.get_array()) {
    std::string bptr = ptr + "/allOf/" + std::to_string(index++);
    const json::value* branch = &raw;
    if (branch->is_object() && branch->get_object().size() == 1 && branch->get_object().contains("$ref") &&
        branch->get_object().at("$ref").is_string()) {
      branch = ResolveLocalRef(root_, branch->get_object().at("$ref").get_string());
      if (branch == nullptr) {
        Fail(bptr, "$ref " + ValueText(raw.get_object().at("$ref")) + " does not resolve inside the schema");
        return false;
      }
    }
    if (branch->is_bool() && branch->get_bool()) continue;
    if (!branch->is_object()) {
      Fail(bptr, "allOf branch " + ValueText(*branch) + " cannot be merged for openai strict mode");
      return false;
    }
    if (!MergeBranch(branch->get_object(), bptr, merged)) return false;
  }
  return true;
}

bool Transformer::MergeBranch(const json::object& branch, const std::string& bptr, json::object& merged) {
  for (const auto& [key, value] : branch) {
    if (!IsPlainAllOfKey(key) || (key == "additionalProperties" && !value.is_bool()) ||
        (key == "type" && value != json::value("object"))) {
      Fail(bptr,
           "openai strict mode takes allOf only as plain object schemas (type, properties, required) "
           "that can be merged into one; this branch has \"" +
               std::string(key) + "\"");
      return false;
    }
    if (key == "type") {
      if (const auto* own = merged.if_contains("type"); own && *own != value) {
        Fail(bptr, "allOf branch type \"object\" conflicts with type " + ValueText(*own));
        return false;
      }
      merged["type"] = value;
    } else if (key == "properties" && value.is_object()) {
      json::value& into = merged["properties"];
      if (!into.is_object()) into = json::object();
      for (const auto& [name, property] : value.get_object()) {
        const json::value* seen = into.get_object().if_contains(name);
        if (seen != nullptr && *seen != property) {
          Fail(bptr, "allOf branches declare property \"" + std::string(name) +
                         "\" differently; openai strict mode cannot merge them");
          return false;
        }
        into.get_object()[name] = property;
      }
    } else if (key == "required" && value.is_array()) {
      json::value& into = merged["required"];
      if (!into.is_array()) into = json::array();
      for (const auto& name : value.get_array()) {
        auto& names = into.get_array();
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
      }
    } else if ((key == "description" || key == "title") && !merged.contains(key)) {
      merged[key] = value;
    }
  }
  return true;
}

json::object Transformer::WireDefs() {
  json::object out;
  for (const auto& name : def_order_) {
    if (auto found = wire_defs_.find(name); found != wire_defs_.end()) out[name] = std::move(found->second);
  }
  return out;
}

}  // namespace strict_detail

StrictDialect DialectOf(std::string_view provider_kind) {
  if (provider_kind == "anthropic") return StrictDialect::kAnthropic;
  if (provider_kind == "gemini") return StrictDialect::kGemini;
  return StrictDialect::kOpenAi;
}

Result<StrictSchema> MakeStrictSchema(const boost::json::value& original, StrictDialect dialect) {
  return strict_detail::Transformer(original, dialect).Run();
}

}  // namespace skillrunner::generation
