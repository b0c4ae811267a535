#include "services/validation/leaf_messages.h"

#include <boost/json/serialize.hpp>
#include <optional>
#include <regex>

#include "services/common/regex_guard.h"
#include "services/validation/custom_constraints.h"
#include "services/validation/error_paths.h"
#include "services/validation/value_text.h"

namespace skillrunner::validation {
namespace {

using boost::json::value;

// The text between the first pair of single quotes ("... 'name'.").
std::string Quoted(std::string_view description) {
  auto open = description.find('\'');
  auto close = description.rfind('\'');
  if (open == std::string_view::npos || close <= open) return {};
  return std::string(description.substr(open + 1, close - open - 1));
}

const value* Keyword(const boost::json::object* owner, std::string_view key) {
  if (owner == nullptr) return nullptr;
  auto it = owner->find(key);
  return it == owner->end() ? nullptr : &it->value();
}

std::size_t Utf8Length(std::string_view text) {
  std::size_t count = 0;
  for (char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

std::vector<std::string> With(const std::vector<std::string>& tokens, std::string token) {
  std::vector<std::string> out = tokens;
  out.push_back(std::move(token));
  return out;
}

std::size_t SizeOf(const value& found) {
  if (const auto* s = found.if_string()) return Utf8Length(*s);
  if (const auto* a = found.if_array()) return a->size();
  if (const auto* o = found.if_object()) return o->size();
  return 0;
}

// "expected at most 5 characters, found 7" and the like.
std::string Bound(std::string_view bound, std::string_view description, const value& found) {
  auto number_at = description.find_first_of("0123456789");
  std::string limit;
  while (number_at < description.size() && std::isdigit(static_cast<unsigned char>(description[number_at]))) {
    limit += description[number_at++];
  }
  const bool one = limit == "1";
  std::string unit;
  if (found.is_string()) unit = one ? " character" : " characters";
  if (found.is_array()) unit = one ? " item" : " items";
  if (found.is_object()) unit = one ? " property" : " properties";
  return "expected " + std::string(bound) + " " + limit + unit + ", found " + std::to_string(SizeOf(found));
}

// One error per property that neither "properties" nor "patternProperties"
// accepts (valijson names only the first).
void UnexpectedProperties(const Leaf& leaf, const value& found, std::vector<FieldError>& out) {
  const value* properties = Keyword(leaf.owner, "properties");
  const value* patterns = Keyword(leaf.owner, "patternProperties");
  std::vector<std::regex> regexes;
  if (patterns != nullptr && patterns->is_object()) {
    for (const auto& member : patterns->get_object()) {
      if (auto regex = CompileSchemaRegex(member.key())) regexes.push_back(std::move(*regex));
    }
  }
  for (const auto& member : found.get_object()) {
    if (properties != nullptr && properties->is_object() && properties->get_object().contains(member.key())) {
      continue;
    }
    bool matched = false;
    for (const auto& regex : regexes) {
      matched = matched || std::regex_search(std::string(member.key()), regex);
    }
    if (matched) continue;
    out.push_back({MakePointer(With(leaf.tokens, std::string(member.key()))),
                   "unexpected property " + boost::json::serialize(value(member.key()))});
  }
}

// Which present property made `missing` required through "dependencies".
std::string DependencyOwner(const Leaf& leaf, const value& found, const std::string& missing) {
  const value* dependencies = Keyword(leaf.owner, "dependencies");
  if (dependencies == nullptr || !dependencies->is_object() || !found.is_object()) return {};
  for (const auto& member : dependencies->get_object()) {
    if (!found.get_object().contains(member.key()) || !member.value().is_array()) continue;
    for (const auto& name : member.value().get_array()) {
      if (name.is_string() && name.get_string() == missing) return std::string(member.key());
    }
  }
  return {};
}

std::string Limit(const value* v) { return v != nullptr ? RenderJson(*v) : std::string("?"); }

// Messages for keywords compared against the found value.
std::optional<std::string> CompareMessage(const Leaf& leaf, const value& found) {
  std::string_view d = leaf.description;
  const std::string was = ", found " + DescribeValue(found);
  auto exclusive = [&](std::string_view key, std::string_view plain) {
    const value* v = Keyword(leaf.owner, key);
    return leaf.draft4 || v == nullptr || !v->is_number() ? Keyword(leaf.owner, plain) : v;
  };
  if (d.starts_with("Expected number less than or equal to")) {
    return "expected at most " + Limit(Keyword(leaf.owner, "maximum")) + was;
  }
  if (d.starts_with("Expected number less than")) {
    return "expected less than " + Limit(exclusive("exclusiveMaximum", "maximum")) + was;
  }
  if (d.starts_with("Expected number greater than or equal to")) {
    return "expected at least " + Limit(Keyword(leaf.owner, "minimum")) + was;
  }
  if (d.starts_with("Expected number greater than")) {
    return "expected more than " + Limit(exclusive("exclusiveMinimum", "minimum")) + was;
  }
  if (d.starts_with("Failed to match against any enum values")) {
    return "expected one of " + Limit(Keyword(leaf.owner, "enum")) + was;
  }
  if (d.starts_with("Failed to match expected value set by 'const'")) {
    return "expected " + Limit(Keyword(leaf.owner, "const")) + was;
  }
  if (d == kMultipleOfTag) return "expected a multiple of " + Limit(Keyword(leaf.owner, kMultipleOfKeyword)) + was;
  if (d.starts_with("Failed to match regex specified by 'pattern'")) {
    return "expected a string matching " + Limit(Keyword(leaf.owner, "pattern")) + was;
  }
  if (d == kFormatTag) {
    const value* format = Keyword(leaf.owner, kFormatKeyword);
    std::string name = format != nullptr && format->is_string() ? std::string(format->get_string()) : "?";
    return "expected format " + name + was;
  }
  if (d.starts_with("Target should not validate against schema specified in 'not'")) {
    return "expected a value not matching the \"not\" schema" + was;
  }
  return std::nullopt;
}

std::optional<std::string> ShapeMessage(const Leaf& leaf, const value& found) {
  std::string_view d = leaf.description;
  if (d.starts_with("Value type not permitted by 'type'") || d == kIntegerTag) {
    const value* type = Keyword(leaf.owner, kOriginalTypeKeyword);
    if (type == nullptr) type = Keyword(leaf.owner, "type");
    std::string expected = type != nullptr ? DescribeTypes(*type) : std::string("another type");
    return "expected " + expected + ", found " + DescribeTypedValue(found);
  }
  if (d.find("no more than") != std::string_view::npos) return Bound("at most", d, found);
  if (d.find("no fewer than") != std::string_view::npos) return Bound("at least", d, found);
  if (d.starts_with("Array contains more items than allowed by items")) {
    const value* items = Keyword(leaf.owner, "items");
    std::size_t limit = items != nullptr && items->is_array() ? items->get_array().size() : 0;
    return "expected at most " + std::to_string(limit) + " item(s), found " + std::to_string(SizeOf(found));
  }
  if (d.starts_with(kUniqueItemsTag)) {
    std::string_view pair = d.substr(kUniqueItemsTag.size());
    std::string_view first = pair.substr(0, pair.find(' '));
    std::string_view second = pair.substr(pair.find(' ') + 1);
    return "expected unique items, found item " + std::string(second) + " equal to item " + std::string(first);
  }
  if (d.starts_with("Failed to any values against subschema in 'contains'")) {
    return "expected an array with at least one item matching \"contains\", found none";
  }
  return std::nullopt;
}

}  // namespace

std::string DescribeTypes(const value& type) {
  if (type.is_string()) return std::string(type.get_string());
  std::vector<std::string> names;
  if (const auto* list = type.if_array()) {
    for (const auto& item : *list) {
      if (item.is_string()) names.emplace_back(item.get_string());
    }
  }
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

void AppendLeafErrors(const Leaf& leaf, std::vector<FieldError>& out) {
  std::string_view d = leaf.description;
  if (d.starts_with("Cannot validate item #")) return;  // repeats another error
  const value* found = FindByTokens(leaf.instance, leaf.tokens);
  const std::string path = MakePointer(leaf.tokens);
  if (d.starts_with("Missing required property '")) {
    out.push_back({MakePointer(With(leaf.tokens, Quoted(d))), "required property is missing"});
    return;
  }
  if (d.starts_with("Missing dependency '")) {
    std::string missing = Quoted(d);
    std::string because = found != nullptr ? DependencyOwner(leaf, *found, missing) : std::string();
    std::string message = "required property is missing";
    if (!because.empty()) message += " (required when \"" + because + "\" is present)";
    out.push_back({MakePointer(With(leaf.tokens, missing)), message});
    return;
  }
  if (found == nullptr) {
    out.push_back({path, std::string(d)});
    return;
  }
  if (d.starts_with("Object contains a property that could not be validated") && found->is_object()) {
    std::size_t before = out.size();
    UnexpectedProperties(leaf, *found, out);
    if (out.size() == before) {
      out.push_back({MakePointer(With(leaf.tokens, Quoted(d))),
                     "unexpected property " + boost::json::serialize(value(Quoted(d)))});
    }
    return;
  }
  if (auto message = CompareMessage(leaf, *found)) {
    out.push_back({path, *message});
  } else if (auto shape = ShapeMessage(leaf, *found)) {
    out.push_back({path, *shape});
  } else {
    out.push_back({path, std::string(d)});
  }
}

}  // namespace skillrunner::validation
