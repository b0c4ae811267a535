// Pointer, ref and null helpers shared by the strict-schema transform and the
// map-back walk.

#include <boost/json/serialize.hpp>
#include <charconv>

#include "services/common/json_text.h"
#include "services/generation/strict_schema_internal.h"
#include "services/validation/error_paths.h"

namespace skillrunner::generation::strict_detail {
namespace {

constexpr std::size_t kValueTextBytes = 80;

bool ArrayIndex(std::string_view token, std::size_t& index) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return false;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
  return ec == std::errc() && end == token.data() + token.size();
}

bool TypeAllowsNull(const json::value& type) {
  if (type.is_string()) return type.get_string() == "null";
  if (!type.is_array()) return true;
  for (const auto& entry : type.get_array()) {
    if (entry.is_string() && entry.get_string() == "null") return true;
  }
  return false;
}

bool EnumHasNull(const json::value& values) {
  if (!values.is_array()) return true;
  for (const auto& entry : values.get_array()) {
    if (entry.is_null()) return true;
  }
  return false;
}

}  // namespace

std::string Where(std::string_view pointer) { return pointer.empty() ? std::string("(root)") : std::string(pointer); }

std::string ValueText(const json::value& value) {
  std::string text = CompactJson(value);
  if (text.size() <= kValueTextBytes) return text;
  std::size_t cut = kValueTextBytes - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  text.resize(cut);
  return text + "…";
}

const json::value* ResolveLocalRef(const json::value& root, std::string_view ref) {
  if (ref.empty() || ref[0] != '#') return nullptr;
  std::vector<std::string> tokens;
  // A named anchor ("#foo") is not supported.
  if (!ParsePointer(validation::DecodeUriFragment(ref.substr(1)), tokens)) return nullptr;
  const json::value* at = &root;
  for (const std::string& token : tokens) {
    if (at->is_object()) {
      at = at->get_object().if_contains(token);
    } else if (at->is_array()) {
      std::size_t index = 0;
      if (!ArrayIndex(token, index) || index >= at->get_array().size()) return nullptr;
      at = &at->get_array()[index];
    } else {
      return nullptr;
    }
    if (at == nullptr) return nullptr;
  }
  return at;
}

bool AllowsNull(const json::value& root, const json::value& schema, int depth) {
  if (depth > kMaxRefHops) return true;
  if (schema.is_bool()) return schema.get_bool();
  if (!schema.is_object()) return true;
  const json::object& s = schema.get_object();
  if (const auto* type = s.if_contains("type"); type && !TypeAllowsNull(*type)) return false;
  if (const auto* values = s.if_contains("enum"); values && !EnumHasNull(*values)) return false;
  if (const auto* value = s.if_contains("const"); value && !value->is_null()) return false;
  if (const auto* ref = s.if_contains("$ref"); ref && ref->is_string()) {
    const json::value* target = ResolveLocalRef(root, ref->get_string());
    if (target != nullptr && !AllowsNull(root, *target, depth + 1)) return false;
  }
  for (std::string_view key : {"anyOf", "oneOf"}) {
    const auto* branches = s.if_contains(key);
    if (branches == nullptr || !branches->is_array() || branches->get_array().empty()) continue;
    bool any = false;
    for (const auto& branch : branches->get_array()) any = any || AllowsNull(root, branch, depth + 1);
    if (!any) return false;
  }
  if (const auto* branches = s.if_contains("allOf"); branches && branches->is_array()) {
    for (const auto& branch : branches->get_array()) {
      if (!AllowsNull(root, branch, depth + 1)) return false;
    }
  }
  return true;
}

}  // namespace skillrunner::generation::strict_detail
