#include "services/providers/simulated/schema_walk.h"

#include <algorithm>
#include <boost/json/array.hpp>
#include <charconv>

#include "services/providers/simulated/regex_sample.h"
#include "services/validation/error_paths.h"

namespace skillrunner::providers::simulation {
namespace {

namespace json = boost::json;

constexpr int kMaxRefHops = 32;
constexpr int kMaxMergeDepth = 16;

const json::value* Member(const json::object& object, std::string_view key) { return object.if_contains(key); }

bool IsIndex(std::string_view token, std::size_t& index) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return false;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
  return ec == std::errc() && end == token.data() + token.size();
}

void MergeRequired(json::object& into, const json::value& required) {
  if (!required.is_array()) return;
  json::value& target = into["required"];
  if (!target.is_array()) target = json::array();
  for (const auto& name : required.get_array()) {
    auto& names = target.get_array();
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
}

bool IsLowerBound(std::string_view key) {
  return key == "minimum" || key == "minLength" || key == "minItems" || key == "minProperties";
}
bool IsUpperBound(std::string_view key) {
  return key == "maximum" || key == "maxLength" || key == "maxItems" || key == "maxProperties";
}

}  // namespace

const json::value& AnySchema() {
  static const json::value kAny = json::object();
  return kAny;
}

const json::value* SchemaWalker::Resolve(const json::value& schema) const {
  const json::value* current = &schema;
  for (int hop = 0; hop < kMaxRefHops; ++hop) {
    if (!current->is_object()) return current;
    const json::value* ref = Member(current->get_object(), "$ref");
    if (ref == nullptr || !ref->is_string()) return current;
    std::string_view text = ref->get_string();
    if (text.empty() || text.front() != '#') return nullptr;  // remote refs: unknown
    std::vector<std::string> tokens;
    if (!ParsePointer(validation::DecodeUriFragment(text.substr(1)), tokens)) return nullptr;
    const json::value* target = &root_;
    for (const auto& token : tokens) {
      std::size_t index = 0;
      if (target->is_object()) {
        target = Member(target->get_object(), token);
      } else if (target->is_array() && IsIndex(token, index) && index < target->get_array().size()) {
        target = &target->get_array()[index];
      } else {
        target = nullptr;
      }
      if (target == nullptr) return nullptr;
    }
    current = target;
  }
  return nullptr;
}

void SchemaWalker::MergeInto(json::object& into, const json::value& schema, int depth) const {
  const json::value* resolved = Resolve(schema);
  if (resolved == nullptr || !resolved->is_object() || depth > kMaxMergeDepth) return;
  for (const auto& member : resolved->get_object()) {
    std::string_view key = member.key();
    const json::value& value = member.value();
    if (key == "$ref" || key == "allOf") continue;
    json::value* existing = into.if_contains(key);
    if (key == "required") {
      MergeRequired(into, value);
    } else if (existing == nullptr) {
      into[key] = value;
    } else if (key == "properties" && existing->is_object() && value.is_object()) {
      for (const auto& property : value.get_object()) {
        json::value* old = existing->get_object().if_contains(property.key());
        if (old == nullptr) {
          existing->get_object()[property.key()] = property.value();
        } else {
          *old = json::object{{"allOf", json::array{*old, property.value()}}};
        }
      }
    } else if (existing->is_number() && value.is_number()) {
      double a = existing->to_number<double>();
      double b = value.to_number<double>();
      if ((IsLowerBound(key) && b > a) || (IsUpperBound(key) && b < a)) *existing = value;
    }
  }
  const json::value* all_of = Member(resolved->get_object(), "allOf");
  if (all_of != nullptr && all_of->is_array()) {
    for (const auto& branch : all_of->get_array()) MergeInto(into, branch, depth + 1);
  }
}

const json::object* SchemaWalker::Effective(const json::value& schema, json::object& storage) const {
  static const json::object kEmpty;
  const json::value* resolved = Resolve(schema);
  if (resolved == nullptr) return nullptr;
  if (resolved->is_bool()) return resolved->get_bool() ? &kEmpty : nullptr;
  if (!resolved->is_object()) return nullptr;
  const json::object& object = resolved->get_object();
  const json::value* all_of = Member(object, "allOf");
  if (all_of == nullptr || !all_of->is_array()) return &object;
  storage.clear();
  MergeInto(storage, *resolved, 0);
  return &storage;
}

SchemaWalker::Found SchemaWalker::Child(const json::value& parent, std::string_view token, int depth,
                                        const json::value*& out) const {
  const json::value* resolved = Resolve(parent);
  if (resolved == nullptr || depth > kMaxMergeDepth) return Found::kAny;
  if (resolved->is_bool()) return resolved->get_bool() ? Found::kAny : Found::kForbidden;
  if (!resolved->is_object()) return Found::kAny;
  const json::object& schema = resolved->get_object();
  if (const auto* properties = Member(schema, "properties"); properties && properties->is_object()) {
    if (const auto* found = properties->get_object().if_contains(token)) {
      out = found;
      return Found::kSpecific;
    }
  }
  std::size_t index = 0;
  if (IsIndex(token, index)) {
    if (const auto* items = Member(schema, "items")) {
      if (!items->is_array()) {
        out = items;
        return Found::kSpecific;
      }
      if (index < items->get_array().size()) {
        out = &items->get_array()[index];
        return Found::kSpecific;
      }
      if (const auto* more = Member(schema, "additionalItems")) {
        out = more;
        return Found::kSpecific;
      }
    }
  }
  for (const char* combinator : {"allOf", "anyOf", "oneOf"}) {
    const auto* branches = Member(schema, combinator);
    if (branches == nullptr || !branches->is_array()) continue;
    for (const auto& branch : branches->get_array()) {
      if (Child(branch, token, depth + 1, out) == Found::kSpecific) return Found::kSpecific;
    }
  }
  if (const auto* patterns = Member(schema, "patternProperties"); patterns && patterns->is_object()) {
    for (const auto& member : patterns->get_object()) {
      if (RegexSearch(member.key(), token)) {
        out = &member.value();
        return Found::kSpecific;
      }
    }
  }
  if (const auto* additional = Member(schema, "additionalProperties")) {
    if (additional->is_object()) {
      out = additional;
      return Found::kSpecific;
    }
    if (additional->is_bool() && !additional->get_bool()) return Found::kForbidden;
  }
  return Found::kAny;
}

const json::value* SchemaWalker::ChildSchema(const json::value& parent, std::string_view token) const {
  const json::value* out = nullptr;
  switch (Child(parent, token, 0, out)) {
    case Found::kSpecific:
      return out;
    case Found::kAny:
      return &AnySchema();
    case Found::kForbidden:
      break;
  }
  return nullptr;
}

const json::value* SchemaWalker::SchemaAt(const std::vector<std::string>& tokens) const {
  const json::value* current = &root_;
  for (const auto& token : tokens) {
    current = ChildSchema(*current, token);
    if (current == nullptr) return nullptr;
  }
  return current;
}

}  // namespace skillrunner::providers::simulation
