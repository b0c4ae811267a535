// Size limits of the wire copy: OpenAI's (docs/development/providers-notes.md §1) and Anthropic's
// complexity caps and recursion ban (§2). Counted on the wire copy, since that
// is what the provider checks.

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <set>

#include "services/generation/strict_schema_internal.h"

namespace skillrunner::generation::strict_detail {
namespace {

constexpr std::size_t kOpenAiMaxProperties = 5000;
constexpr int kOpenAiMaxNesting = 10;
constexpr std::size_t kOpenAiMaxEnumValues = 1000;
constexpr std::size_t kOpenAiMaxChars = 120000;
constexpr std::size_t kOpenAiBigEnumValues = 250;
constexpr std::size_t kOpenAiBigEnumChars = 15000;
constexpr int kAnthropicMaxOptional = 24;
constexpr int kAnthropicMaxUnions = 16;
constexpr int kWalkGuard = 512;

struct Tally {
  std::size_t properties = 0;
  std::size_t enum_values = 0;
  std::size_t chars = 0;
  std::string big_enum;  // the first failure of the long-string-enum rule
};

std::size_t ValueChars(const json::value& value) {
  if (value.is_string()) return CodePoints(value.get_string());
  if (value.is_null()) return 0;
  return json::serialize(value).size();
}

void CountEnum(const json::array& values, const std::string& ptr, Tally& tally) {
  tally.enum_values += values.size();
  std::size_t strings = 0;
  std::size_t string_chars = 0;
  for (const auto& value : values) {
    tally.chars += ValueChars(value);
    if (value.is_string()) {
      ++strings;
      string_chars += CodePoints(value.get_string());
    }
  }
  if (strings > kOpenAiBigEnumValues && string_chars > kOpenAiBigEnumChars && tally.big_enum.empty()) {
    tally.big_enum = Where(ptr) + ": a string enum of " + std::to_string(strings) + " values totals " +
                     std::to_string(string_chars) + " characters; openai strict mode allows at most " +
                     std::to_string(kOpenAiBigEnumChars) + " for an enum over " + std::to_string(kOpenAiBigEnumValues) +
                     " values";
  }
}

void Count(const json::value& node, const std::string& ptr, Tally& tally, int guard) {
  if (guard > kWalkGuard) return;
  if (node.is_array()) {
    std::size_t index = 0;
    for (const auto& item : node.get_array()) Count(item, ptr + "/" + std::to_string(index++), tally, guard + 1);
    return;
  }
  if (!node.is_object()) return;
  for (const auto& [key, value] : node.get_object()) {
    std::string child = ptr + "/" + EscapePointerToken(key);
    if ((key == "properties" || key == "$defs") && value.is_object()) {
      if (key == "properties") tally.properties += value.get_object().size();
      for (const auto& [name, schema] : value.get_object()) {
        tally.chars += CodePoints(name);
        Count(schema, child + "/" + EscapePointerToken(name), tally, guard + 1);
      }
    } else if (key == "enum" && value.is_array()) {
      CountEnum(value.get_array(), ptr, tally);
    } else if (key == "const") {
      tally.chars += ValueChars(value);
    } else if (key == "items" || key == "anyOf" || key == "allOf") {
      Count(value, child, tally, guard + 1);
    }
  }
}

std::string TooMany(std::size_t count, std::string_view what, std::string_view dialect, std::size_t limit) {
  return std::to_string(count) + " " + std::string(what) + "; " + std::string(dialect) +
         " strict mode allows at most " + std::to_string(limit);
}

bool IsUnion(const json::value& schema) {
  if (!schema.is_object()) return false;
  const json::object& o = schema.get_object();
  const json::value* type = o.if_contains("type");
  return o.contains("anyOf") || (type != nullptr && type->is_array() && type->get_array().size() >= 2);
}

void CountAnthropic(const json::value& node, int& optional, int& unions, int guard) {
  if (guard > kWalkGuard) return;
  if (node.is_array()) {
    for (const auto& item : node.get_array()) CountAnthropic(item, optional, unions, guard + 1);
    return;
  }
  if (!node.is_object()) return;
  const json::object& o = node.get_object();
  if (const auto* properties = o.if_contains("properties"); properties && properties->is_object()) {
    const json::value* required = o.if_contains("required");
    for (const auto& [name, schema] : properties->get_object()) {
      bool is_required = required != nullptr && required->is_array() &&
                         std::find(required->get_array().begin(), required->get_array().end(), json::value(name)) !=
                             required->get_array().end();
      if (!is_required) ++optional;
      if (IsUnion(schema)) ++unions;
      CountAnthropic(schema, optional, unions, guard + 1);
    }
  }
  for (std::string_view key : {"items", "anyOf", "allOf"}) {
    if (const auto* child = o.if_contains(key)) CountAnthropic(*child, optional, unions, guard + 1);
  }
  if (const auto* defs = o.if_contains("$defs"); defs && defs->is_object()) {
    for (const auto& [name, schema] : defs->get_object()) CountAnthropic(schema, optional, unions, guard + 1);
  }
}

}  // namespace

std::pair<int, std::string> Transformer::ObjectDepth(const json::value& node, const std::string& ptr,
                                                     const json::object& defs,
                                                     std::map<std::string, std::pair<int, std::string>>& memo,
                                                     int guard) {
  if (guard > kWalkGuard || !node.is_object()) return {0, ""};
  const json::object& o = node.get_object();
  int self = o.contains("properties") ? 1 : 0;
  std::pair<int, std::string> best{0, ""};
  auto consider = [&](const json::value& child, const std::string& child_ptr) {
    auto found = ObjectDepth(child, child_ptr, defs, memo, guard + 1);
    if (found.first > best.first) best = std::move(found);
  };
  if (const auto* properties = o.if_contains("properties"); properties && properties->is_object()) {
    for (const auto& [name, schema] : properties->get_object()) {
      consider(schema, ptr + "/properties/" + EscapePointerToken(name));
    }
  }
  if (const auto* items = o.if_contains("items")) consider(*items, ptr + "/items");
  for (std::string_view key : {"anyOf", "allOf"}) {
    const auto* branches = o.if_contains(key);
    if (branches == nullptr || !branches->is_array()) continue;
    std::size_t index = 0;
    for (const auto& branch : branches->get_array()) {
      consider(branch, ptr + "/" + std::string(key) + "/" + std::to_string(index++));
    }
  }
  if (const auto* ref = o.if_contains("$ref"); ref && ref->is_string()) {
    for (const auto& [name, schema] : defs) {
      if (ref->get_string() != "#/$defs/" + EscapePointerToken(name)) continue;
      std::string key(name);
      if (!memo.contains(key)) {
        memo[key] = {0, ""};  // in progress: a recursive ref adds nothing
        memo[key] = ObjectDepth(schema, "/$defs/" + EscapePointerToken(name), defs, memo, guard + 1);
      }
      if (memo[key].first > best.first) best = memo[key];
    }
  }
  if (best.first == 0) return {self, self ? ptr : ""};
  return {self + best.first, best.second};
}

void Transformer::CheckOpenAiLimits(const json::value& wire) {
  Tally tally;
  Count(wire, "", tally, 0);
  if (!tally.big_enum.empty()) {
    error_ = tally.big_enum;
  } else if (tally.properties > kOpenAiMaxProperties) {
    Fail("", TooMany(tally.properties, "properties in total", "openai", kOpenAiMaxProperties));
  } else if (tally.enum_values > kOpenAiMaxEnumValues) {
    Fail("", TooMany(tally.enum_values, "enum values in total", "openai", kOpenAiMaxEnumValues));
  } else if (tally.chars > kOpenAiMaxChars) {
    Fail("", TooMany(tally.chars, "characters of property names, definition names, enum and const values", "openai",
                     kOpenAiMaxChars));
  }
  if (error_) return;
  static const json::object kNoDefs;
  const json::value* defs = wire.is_object() ? wire.get_object().if_contains("$defs") : nullptr;
  std::map<std::string, std::pair<int, std::string>> memo;
  auto [depth, where] = ObjectDepth(wire, "", defs && defs->is_object() ? defs->get_object() : kNoDefs, memo, 0);
  if (depth > kOpenAiMaxNesting) {
    Fail(where, "objects nested " + std::to_string(depth) + " levels deep; openai strict mode allows at most " +
                    std::to_string(kOpenAiMaxNesting));
  }
}

void Transformer::CheckAnthropicCaps(const json::value& wire) {
  int optional = 0;
  int unions = 0;
  CountAnthropic(wire, optional, unions, 0);
  if (optional > kAnthropicMaxOptional) {
    Fail("", TooMany(optional, "optional properties", "anthropic", kAnthropicMaxOptional));
  } else if (unions > kAnthropicMaxUnions) {
    Fail("", TooMany(unions, "union-typed properties (anyOf or a type list such as [T, \"null\"])", "anthropic",
                     kAnthropicMaxUnions));
  }
}

void Transformer::CheckRecursion() {
  // Depth-first over the kept refs from the root; a ref into a def that is
  // still open closes a cycle.
  std::map<std::string, int> state;  // 1 open, 2 done
  std::vector<std::pair<std::string, std::size_t>> stack{{"", 0}};
  state[""] = 1;
  while (!stack.empty() && !error_) {
    auto& [node, next] = stack.back();
    std::size_t i = next;
    while (i < edges_.size() && edges_[i].from != node) ++i;
    if (i == edges_.size()) {
      state[node] = 2;
      stack.pop_back();
      continue;
    }
    next = i + 1;
    const Edge& edge = edges_[i];
    int seen = state[edge.to];
    if (seen == 1) {
      Fail(edge.pointer, "$ref \"" + edge.ref + "\" makes the schema recursive; " + std::string(DialectName()) +
                             " strict mode does not take recursive schemas");
    } else if (seen == 0) {
      state[edge.to] = 1;
      stack.emplace_back(edge.to, 0);
    }
  }
}

}  // namespace skillrunner::generation::strict_detail
