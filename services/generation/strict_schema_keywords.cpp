// Keyword by keyword: what each dialect keeps, rewrites, drops and reports,
// and the object rules (every object closed; OpenAI: every property required,
// optional ones made nullable).

#include <algorithm>
#include <boost/json/array.hpp>
#include <set>

#include "services/generation/strict_schema_internal.h"
#include "services/validation/formats.h"

namespace skillrunner::generation::strict_detail {
namespace {

bool IsTypeName(const json::value& name) {
  if (!name.is_string()) return false;
  std::string_view n = name.get_string();
  return n == "object" || n == "array" || n == "string" || n == "integer" || n == "number" || n == "boolean" ||
         n == "null";
}

bool ValidType(const json::value& type) {
  if (type.is_string()) return IsTypeName(type);
  if (!type.is_array() || type.get_array().empty()) return false;
  return std::all_of(type.get_array().begin(), type.get_array().end(), IsTypeName);
}

bool TypeIncludes(const json::object& schema, std::string_view name) {
  const json::value* type = schema.if_contains("type");
  if (type == nullptr) return false;
  if (type->is_string()) return type->get_string() == name;
  if (!type->is_array()) return false;
  return std::any_of(type->get_array().begin(), type->get_array().end(),
                     [&](const json::value& t) { return t.is_string() && t.get_string() == name; });
}

bool IsPrimitiveType(const json::value& name) {
  return name.is_string() && name.get_string() != "object" && name.get_string() != "array";
}

bool HasShape(const json::object& out) {
  return out.contains("type") || out.contains("enum") || out.contains("const") || out.contains("anyOf") ||
         out.contains("allOf") || out.contains("$ref");
}

bool IsFormat(StrictDialect dialect, std::string_view format) {
  static const std::set<std::string_view> kOpenAi = {"date-time", "time", "date", "duration", "email",
                                                     "hostname",  "ipv4", "ipv6", "uuid"};
  // Gemini documents the date and time formats only.
  if (dialect == StrictDialect::kGemini) return format == "date-time" || format == "date" || format == "time";
  if (format == "uri") return dialect == StrictDialect::kAnthropic;
  return kOpenAi.contains(format);
}

// Enforced only client-side by both dialects (and noted in the description).
bool IsDroppedKeyword(std::string_view key) {
  static const std::set<std::string_view> kKeys = {"minLength",
                                                   "maxLength",
                                                   "uniqueItems",
                                                   "minProperties",
                                                   "maxProperties",
                                                   "patternProperties",
                                                   "propertyNames",
                                                   "contains",
                                                   "minContains",
                                                   "maxContains",
                                                   "dependencies",
                                                   "dependentRequired",
                                                   "dependentSchemas",
                                                   "not",
                                                   "if",
                                                   "then",
                                                   "else",
                                                   "unevaluatedProperties",
                                                   "unevaluatedItems",
                                                   "contentEncoding",
                                                   "contentMediaType"};
  return kKeys.contains(key);
}

bool IsNumericBound(std::string_view key) {
  return key == "minimum" || key == "maximum" || key == "exclusiveMinimum" || key == "exclusiveMaximum" ||
         key == "multipleOf";
}

bool IsDraft4Exclusive(const json::object& in, std::string_view bound) {
  std::string key = bound == "minimum" ? "exclusiveMinimum" : "exclusiveMaximum";
  const json::value* flag = in.if_contains(key);
  return flag != nullptr && flag->is_bool() && flag->get_bool();
}

}  // namespace

void Transformer::ClientOnly(const std::string& ptr, std::string_view key, const json::value& value,
                             std::vector<std::string>& notes) {
  std::string what = std::string(key) + " " + ValueText(value);
  client_only_.push_back(Where(ptr) + ": " + what + " is enforced only by client-side validation");
  notes.push_back(std::move(what));
}

json::value Transformer::Keywords(const json::object& in, const std::string& ptr, int depth) {
  json::object out;
  std::vector<std::string> notes;
  for (const auto& [key, value] : in) {
    Keyword(key, value, in, ptr, depth, out, notes);
    if (error_) return nullptr;
  }
  bool has_type = in.contains("type");
  if (TypeIncludes(in, "object") || (!has_type && in.contains("properties"))) {
    ObjectRules(in, ptr, depth, out);
    if (error_) return nullptr;
  }
  if (!HasShape(out) && in.contains("items")) out["type"] = "array";
  if (openai() && (TypeIncludes(in, "array") || in.contains("items")) && !out.contains("items")) {
    Fail(ptr, "array has no items schema; openai strict mode needs typed items");
    return nullptr;
  }
  if (!HasShape(out)) {
    Fail(ptr, "schema has no type (nor enum, const, anyOf or $ref); strict mode needs one");
    return nullptr;
  }
  if (!notes.empty()) {
    std::string joined;
    for (const auto& note : notes) joined += (joined.empty() ? "" : ", ") + note;
    json::value& description = out["description"];
    if (description.is_string() && !description.get_string().empty()) {
      description = std::string(description.get_string()) + " (" + joined + ")";
    } else {
      description = "(" + joined + ")";
    }
  }
  return out;
}

void Transformer::Keyword(std::string_view key, const json::value& value, const json::object& in,
                          const std::string& ptr, int depth, json::object& out, std::vector<std::string>& notes) {
  if (key == "type") {
    if (!ValidType(value)) return Fail(ptr, "type " + ValueText(value) + " is not a JSON Schema type");
    out["type"] = value;
  } else if (key == "items") {
    if (value.is_array()) {
      return Fail(ptr, "items given as an array of schemas (a tuple) cannot be expressed in strict mode");
    }
    out["items"] = Node(value, ptr + "/items", depth + 1);
  } else if (key == "enum" || key == "const") {
    EnumKeyword(key, value, in, ptr, out, notes);
  } else if (key == "anyOf" || key == "oneOf" || key == "allOf") {
    if (key == "oneOf" && in.contains("anyOf")) {
      return Fail(ptr, "anyOf and oneOf together cannot be expressed in strict mode");
    }
    json::value branches = Union(value, ptr + "/" + std::string(key), depth);
    if (error_) return;
    out[key == "allOf" ? "allOf" : "anyOf"] = std::move(branches);
    if (key == "oneOf") {
      client_only_.push_back(Where(ptr) +
                             ": oneOf (exactly one branch) is enforced only by client-side validation; sent as anyOf");
    }
  } else if (key == "description" || key == "title") {
    if (value.is_string()) out[key] = value;
  } else if (key == "format") {
    if (!value.is_string()) return;
    if (IsFormat(dialect_, value.get_string())) {
      out["format"] = value;
    } else if (validation::IsCheckedFormat(value.get_string())) {
      ClientOnly(ptr, key, value, notes);
    } else {
      // Nothing checks it (the schema lint says so): only told to the model.
      notes.push_back("format " + ValueText(value));
    }
  } else if (key == "pattern") {
    if (!value.is_string()) return Fail(ptr, "pattern must be a string, found " + ValueText(value));
    if (openai()) {
      out["pattern"] = value;
    } else {
      ClientOnly(ptr, key, value, notes);
    }
  } else if (IsNumericBound(key) || key == "minItems" || key == "maxItems") {
    BoundKeyword(key, value, in, ptr, out, notes);
  } else if (IsDroppedKeyword(key)) {
    if (key == "uniqueItems" && value == json::value(false)) return;
    ClientOnly(ptr, key, value, notes);
  }
  // properties / required / additionalProperties: ObjectRules. Everything else
  // (default, examples, $schema, $id, $comment, nested definitions, unknown
  // annotations) is removed silently: it constrains nothing.
}

void Transformer::EnumKeyword(std::string_view key, const json::value& value, const json::object& in,
                              const std::string& ptr, json::object& out, std::vector<std::string>& notes) {
  json::array values;
  if (key == "const") {
    values.push_back(value);
  } else if (value.is_array() && !value.get_array().empty()) {
    values = value.get_array();
  } else {
    return Fail(ptr, "enum must be a non-empty array, found " + ValueText(value));
  }
  for (const auto& entry : values) {
    if (entry.is_object() || entry.is_array()) {
      return Fail(ptr, std::string(key) + " value " + ValueText(entry) +
                           " is an object or array; strict mode takes only strings, numbers, booleans and null");
    }
  }
  if (key == "enum" || openai()) {
    out[key] = value;
  } else if (!in.contains("enum")) {
    out["enum"] = std::move(values);  // anthropic takes enum, not const
  } else {
    ClientOnly(ptr, key, value, notes);
  }
}

void Transformer::BoundKeyword(std::string_view key, const json::value& value, const json::object& in,
                               const std::string& ptr, json::object& out, std::vector<std::string>& notes) {
  bool draft4_flag = value.is_bool() && (key == "exclusiveMinimum" || key == "exclusiveMaximum");
  if (!value.is_number() && !draft4_flag) {
    return Fail(ptr, std::string(key) + " must be a number, found " + ValueText(value));
  }
  if (draft4_flag && !value.get_bool()) return;  // no constraint
  // Gemini takes minimum, maximum, minItems and maxItems; Anthropic minItems 0 or 1.
  bool keep = openai() ||
              (gemini() && (key == "minimum" || key == "maximum" || key == "minItems" || key == "maxItems")) ||
              (key == "minItems" && (value == json::value(0) || value == json::value(1)));
  if (!keep) return ClientOnly(ptr, key, value, notes);
  if (draft4_flag) {  // draft 4: {"minimum": 1, "exclusiveMinimum": true} -> {"exclusiveMinimum": 1}
    const json::value* bound = in.if_contains(key == "exclusiveMinimum" ? "minimum" : "maximum");
    if (bound != nullptr && bound->is_number()) out[key] = *bound;
  } else if (!((key == "minimum" || key == "maximum") && IsDraft4Exclusive(in, key))) {
    out[key] = value;
  }
}

json::value Transformer::Union(const json::value& branches, const std::string& ptr, int depth) {
  if (!branches.is_array() || branches.get_array().empty()) {
    Fail(ptr, "must be a non-empty array of schemas, found " + ValueText(branches));
    return nullptr;
  }
  json::array out;
  std::size_t index = 0;
  for (const auto& branch : branches.get_array()) {
    out.push_back(Node(branch, ptr + "/" + std::to_string(index++), depth + 1));
    if (error_) return nullptr;
  }
  return out;
}

void Transformer::ObjectRules(const json::object& in, const std::string& ptr, int depth, json::object& out) {
  const json::value* properties = in.if_contains("properties");
  const json::value* required = in.if_contains("required");
  const json::value* additional = in.if_contains("additionalProperties");
  if (properties != nullptr && !properties->is_object()) {
    return Fail(ptr, "properties must be an object, found " + ValueText(*properties));
  }
  std::vector<std::string> required_names;
  if (required != nullptr && !RequiredNames(*required, ptr, required_names)) return;
  bool closed = additional != nullptr && additional->is_bool() && !additional->get_bool();
  if (additional != nullptr && additional->is_object() && !additional->get_object().empty()) {
    return Fail(ptr, "additionalProperties with a schema (a map type) cannot be expressed in strict mode");
  }
  if (additional != nullptr && !additional->is_bool() && !additional->is_object()) {
    return Fail(ptr, "additionalProperties must be a schema, found " + ValueText(*additional));
  }
  bool has_properties = properties != nullptr && !properties->get_object().empty();
  if (!has_properties && !closed) {
    return Fail(ptr, "object has no properties (a free-form object); strict mode cannot express it");
  }
  const json::object empty;
  const json::object& declared = properties != nullptr ? properties->get_object() : empty;
  for (const auto& name : required_names) {
    if (!declared.contains(name)) {
      return Fail(ptr,
                  "required property \"" + name + "\" is not declared in properties; strict mode cannot produce it");
    }
  }
  json::object wire_properties;
  json::array wire_required;
  if (!WireProperties(declared, required_names, ptr, depth, wire_properties, wire_required)) return;
  if (!HasShape(out)) out["type"] = "object";
  out["properties"] = std::move(wire_properties);
  if (openai() || required != nullptr) out["required"] = std::move(wire_required);
  out["additionalProperties"] = false;
}

bool Transformer::RequiredNames(const json::value& required, const std::string& ptr, std::vector<std::string>& names) {
  if (!required.is_array()) {
    Fail(ptr, "required must be an array, found " + ValueText(required));
    return false;
  }
  for (const auto& name : required.get_array()) {
    if (!name.is_string()) {
      Fail(ptr, "required lists " + ValueText(name) + ", not a property name");
      return false;
    }
    std::string text(name.get_string());
    if (std::find(names.begin(), names.end(), text) == names.end()) names.push_back(std::move(text));
  }
  return true;
}

bool Transformer::WireProperties(const json::object& declared, const std::vector<std::string>& required_names,
                                 const std::string& ptr, int depth, json::object& wire_properties,
                                 json::array& wire_required) {
  for (const auto& [name, schema] : declared) {
    std::string child = ptr + "/properties/" + EscapePointerToken(name);
    bool is_required = std::find(required_names.begin(), required_names.end(), name) != required_names.end();
    if (schema.is_bool() && !schema.get_bool()) {
      if (is_required) {
        Fail(child, "property is required but its schema is false");
        return false;
      }
      continue;  // may never appear: leave it out of the wire copy
    }
    json::value wire = Node(schema, child, depth + 1);
    if (error_) return false;
    if (openai()) {
      if (!is_required) wire = Nullable(std::move(wire), schema);
      wire_required.push_back(json::string(name));
    } else if (is_required) {
      wire_required.push_back(json::string(name));
    }
    wire_properties[name] = std::move(wire);
  }
  return true;
}

json::value Transformer::Nullable(json::value wire, const json::value& original) const {
  if (AllowsNull(root_, original) || !wire.is_object()) return wire;
  json::object& o = wire.get_object();
  bool blocked = o.contains("const") || o.contains("$ref") || o.contains("allOf");
  json::value* type = o.if_contains("type");
  json::value* values = o.if_contains("enum");
  if (!blocked && type != nullptr && !o.contains("anyOf")) {
    bool primitive = type->is_string()
                         ? IsPrimitiveType(*type)
                         : std::all_of(type->get_array().begin(), type->get_array().end(), IsPrimitiveType);
    if (primitive) {
      if (type->is_string()) {
        *type = json::array{*type, "null"};
      } else if (!TypeIncludes(o, "null")) {
        type->get_array().push_back("null");
      }
      if (values != nullptr && values->is_array()) values->get_array().push_back(nullptr);
      return wire;
    }
  }
  if (!blocked && type == nullptr && values != nullptr && !o.contains("anyOf")) {
    values->get_array().push_back(nullptr);
    return wire;
  }
  if (!blocked && type == nullptr && values == nullptr && o.contains("anyOf")) {
    o["anyOf"].get_array().push_back(json::object{{"type", "null"}});
    return wire;
  }
  return json::object{{"anyOf", json::array{std::move(wire), json::object{{"type", "null"}}}}};
}

}  // namespace skillrunner::generation::strict_detail
