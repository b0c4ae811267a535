#include "services/validation/schema_checks.h"

#include <cmath>

#include "services/common/regex_guard.h"
#include "services/validation/value_text.h"

namespace skillrunner::validation {
namespace {

using boost::json::value;

bool IsTypeName(const value& v) {
  if (!v.is_string()) return false;
  static constexpr std::string_view kNames[] = {"array", "boolean", "integer", "null", "number", "object", "string"};
  for (auto name : kNames) {
    if (v.get_string() == name) return true;
  }
  return false;
}

std::string Problem(std::string_view key, std::string_view expected, const value& found) {
  return "\"" + std::string(key) + "\" must be " + std::string(expected) + ", found " + DescribeTypedValue(found);
}

// nullopt for a pattern std::regex takes; else what to add to the message
// naming it ("" when std::regex refused it).
std::optional<std::string> InvalidRegex(std::string_view pattern) {
  if (!RegexNumbersFit(pattern)) return " (a repetition count or back-reference of more than 9 digits)";
  if (!CompileSchemaRegex(pattern)) return "";
  return std::nullopt;
}

std::optional<std::string> CheckType(const value& type) {
  if (IsTypeName(type)) return std::nullopt;
  if (const auto* list = type.if_array(); list != nullptr && !list->empty()) {
    for (const auto& item : *list) {
      if (!IsTypeName(item)) return Problem("type", "a type name or an array of them", item);
    }
    return std::nullopt;
  }
  return Problem("type", "a type name or an array of them", type);
}

std::optional<std::string> CheckCount(boost::json::object& schema, std::string_view key) {
  auto it = schema.find(key);
  if (it == schema.end()) return std::nullopt;
  value& v = it->value();
  if (v.is_double() && std::trunc(v.get_double()) == v.get_double() && std::fabs(v.get_double()) < 9e15) {
    v = static_cast<int64_t>(v.get_double());
  }
  if (!v.is_int64() || v.get_int64() < 0) return Problem(key, "a non-negative integer", v);
  return std::nullopt;
}

bool IsSchema(const value& v) { return v.is_object() || v.is_bool(); }

}  // namespace

std::optional<std::string> CheckKeywords(boost::json::object& schema, bool draft4) {
  for (const char* key : {"maxLength", "minLength", "maxItems", "minItems", "maxProperties", "minProperties"}) {
    if (auto problem = CheckCount(schema, key)) return problem;
  }
  for (const auto& member : schema) {
    std::string_view key = member.key();
    const value& v = member.value();
    if (key == "type") {
      if (auto problem = CheckType(v)) return problem;
    } else if (key == "maximum" || key == "minimum" ||
               (!draft4 && (key == "exclusiveMaximum" || key == "exclusiveMinimum"))) {
      if (!v.is_number()) return Problem(key, "a number", v);
    } else if (draft4 && (key == "exclusiveMaximum" || key == "exclusiveMinimum")) {
      if (!v.is_bool()) return Problem(key, "a boolean in draft 4", v);
    } else if (key == "multipleOf") {
      if (!v.is_number() || !(v.to_number<double>() > 0)) return Problem(key, "a number greater than 0", v);
    } else if (key == "properties" || key == "patternProperties" || key == "definitions" || key == "$defs" ||
               key == "dependencies") {
      if (!v.is_object()) return Problem(key, "an object", v);
      for (const auto& inner : v.get_object()) {
        if (auto why = key == "patternProperties" ? InvalidRegex(inner.key()) : std::nullopt) {
          return "\"patternProperties\" has an invalid regular expression \"" + std::string(inner.key()) + "\"" + *why;
        }
        if (key == "dependencies" && inner.value().is_array()) continue;
        if (!IsSchema(inner.value())) {
          return Problem(std::string(key) + "/" + std::string(inner.key()), "a schema", inner.value());
        }
      }
    } else if (key == "required") {
      if (!v.is_array()) return Problem(key, "an array of property names", v);
      for (const auto& item : v.get_array()) {
        if (!item.is_string()) return Problem(key, "an array of property names", item);
      }
    } else if (key == "enum") {
      if (!v.is_array()) return Problem(key, "an array", v);
    } else if (key == "pattern") {
      if (!v.is_string()) return Problem(key, "a string", v);
      if (auto why = InvalidRegex(v.get_string())) {
        return "\"pattern\" is an invalid regular expression \"" + std::string(v.get_string()) + "\"" + *why;
      }
    } else if (key == "format" || key == "$ref") {
      if (!v.is_string()) return Problem(key, "a string", v);
    } else if (key == "allOf" || key == "anyOf" || key == "oneOf") {
      if (!v.is_array() || v.get_array().empty()) return Problem(key, "a non-empty array of schemas", v);
    } else if (key == "not" || key == "additionalProperties" || key == "additionalItems" || key == "contains" ||
               key == "propertyNames" || key == "if" || key == "then" || key == "else") {
      if (!IsSchema(v)) return Problem(key, "a schema", v);
    } else if (key == "items") {
      if (!IsSchema(v) && !v.is_array()) return Problem(key, "a schema or an array of schemas", v);
    } else if (key == "uniqueItems") {
      if (!v.is_bool()) return Problem(key, "a boolean", v);
    }
  }
  return std::nullopt;
}

}  // namespace skillrunner::validation
