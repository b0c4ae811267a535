#include "services/generation/coercion.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <cmath>
#include <optional>
#include <string_view>

#include "services/common/json_pointer.h"

namespace skillrunner::generation {
namespace json = boost::json;
namespace {

// The types the schema names at this node (empty: any).
std::vector<std::string_view> Types(const json::object& schema) {
  std::vector<std::string_view> out;
  const json::value* type = schema.if_contains("type");
  if (type == nullptr) return out;
  if (type->is_string()) out.push_back(type->as_string());
  if (type->is_array()) {
    for (const auto& t : type->as_array()) {
      if (t.is_string()) out.push_back(t.as_string());
    }
  }
  return out;
}

bool Allows(const std::vector<std::string_view>& types, const json::value& value) {
  for (std::string_view t : types) {
    if (t == "null" && value.is_null()) return true;
    if (t == "boolean" && value.is_bool()) return true;
    if (t == "string" && value.is_string()) return true;
    if (t == "array" && value.is_array()) return true;
    if (t == "object" && value.is_object()) return true;
    if (t == "number" && value.is_number()) return true;
    if (t == "integer" && value.is_number()) {
      if (!value.is_double()) return true;
      double d = value.as_double();
      if (std::isfinite(d) && std::floor(d) == d) return true;
    }
  }
  return false;
}

// A number as a person would write it: 42, 2.5 (the shortest text that reads back).
std::string NumberText(const json::value& number) {
  if (number.is_int64()) return std::to_string(number.as_int64());
  if (number.is_uint64()) return std::to_string(number.as_uint64());
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, number.as_double());
  return ec == std::errc() ? std::string(buffer, end) : json::serialize(number);
}

// A string holding exactly one JSON number (no sign tricks, no spaces).
std::optional<json::value> NumberIn(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::int64_t i = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), i);
  if (ec == std::errc() && end == text.data() + text.size()) return json::value(i);
  double d = 0;
  auto [dend, dec] = std::from_chars(text.data(), text.data() + text.size(), d);
  if (dec == std::errc() && dend == text.data() + text.size() && std::isfinite(d)) return json::value(d);
  return std::nullopt;
}

// The value converted to one of `types`, when one conversion loses nothing.
std::optional<json::value> Converted(const json::value& value, const std::vector<std::string_view>& types) {
  for (std::string_view t : types) {
    if (value.is_string()) {
      std::string_view text = value.as_string();
      if (t == "integer" || t == "number") {
        auto number = NumberIn(text);
        // Only when the number reads back as the same text: "42" but not "042" or "1e2".
        if (number && NumberText(*number) == text && Allows({t}, *number)) return number;
      }
      if (t == "boolean" && (text == "true" || text == "false")) return json::value(text == "true");
    }
    if (value.is_number() && t == "string") return json::value(NumberText(value));
  }
  return std::nullopt;
}

void Walk(json::value& value, const json::value& schema_value, const std::string& pointer,
          std::vector<std::string>& coerced) {
  if (!schema_value.is_object()) return;
  const json::object& schema = schema_value.as_object();
  std::vector<std::string_view> types = Types(schema);
  if (!types.empty() && !Allows(types, value)) {
    if (auto converted = Converted(value, types)) {
      value = std::move(*converted);
      coerced.push_back(pointer);
    } else if (std::find(types.begin(), types.end(), "array") != types.end()) {
      json::array wrapped;
      wrapped.push_back(std::move(value));
      value = std::move(wrapped);
      coerced.push_back(pointer);
    }
  }
  if (value.is_object()) {
    const json::value* properties = schema.if_contains("properties");
    const json::value* additional = schema.if_contains("additionalProperties");
    for (auto& member : value.as_object()) {
      const json::value* sub = nullptr;
      if (properties && properties->is_object()) sub = properties->as_object().if_contains(member.key());
      if (sub == nullptr) sub = additional;
      if (sub != nullptr) Walk(member.value(), *sub, AppendPointer(pointer, member.key()), coerced);
    }
  }
  if (value.is_array()) {
    const json::value* prefix = schema.if_contains("prefixItems");
    const json::value* items = schema.if_contains("items");
    json::array& array = value.as_array();
    for (std::size_t i = 0; i < array.size(); ++i) {
      const json::value* sub = items;
      if (prefix && prefix->is_array() && i < prefix->as_array().size()) sub = &prefix->as_array()[i];
      if (sub != nullptr) Walk(array[i], *sub, AppendPointer(pointer, std::to_string(i)), coerced);
    }
  }
}

}  // namespace

std::vector<std::string> CoerceToSchema(json::value& value, const json::value& schema) {
  std::vector<std::string> coerced;
  Walk(value, schema, "", coerced);
  return coerced;
}

}  // namespace skillrunner::generation
