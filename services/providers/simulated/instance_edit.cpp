#include "services/providers/simulated/instance_edit.h"

#include <algorithm>
#include <boost/json/object.hpp>
#include <charconv>

namespace skillrunner::providers::simulation {
namespace {

namespace json = boost::json;

bool Index(std::string_view token, std::size_t& index) {
  if (token.empty() || (token.size() > 1 && token[0] == '0')) return false;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
  return ec == std::errc() && end == token.data() + token.size();
}

json::value* Child(json::value& parent, std::string_view token) {
  if (parent.is_object()) return parent.get_object().if_contains(token);
  std::size_t index = 0;
  if (parent.is_array() && Index(token, index) && index < parent.get_array().size()) {
    return &parent.get_array()[index];
  }
  return nullptr;
}

void AddType(std::vector<std::string>& types, std::string_view type) {
  if (std::find(types.begin(), types.end(), type) == types.end()) types.emplace_back(type);
}

std::string_view TypeOf(const json::value& value) {
  switch (value.kind()) {
    case json::kind::null:
      return "null";
    case json::kind::bool_:
      return "boolean";
    case json::kind::int64:
    case json::kind::uint64:
      return "integer";
    case json::kind::double_:
      return "number";
    case json::kind::string:
      return "string";
    case json::kind::array:
      return "array";
    case json::kind::object:
      break;
  }
  return "object";
}

void CollectTypes(const SchemaWalker& walker, const json::value& schema, std::vector<std::string>& types, int depth) {
  json::object storage;
  const json::object* effective = walker.Effective(schema, storage);
  if (effective == nullptr || depth > 8) return;
  if (const json::value* type = effective->if_contains("type")) {
    if (type->is_string()) AddType(types, type->get_string());
    if (type->is_array()) {
      for (const auto& t : type->get_array()) {
        if (t.is_string()) AddType(types, t.get_string());
      }
    }
    return;
  }
  if (const json::value* constant = effective->if_contains("const")) {
    AddType(types, TypeOf(*constant));
    return;
  }
  if (const json::value* options = effective->if_contains("enum"); options && options->is_array()) {
    for (const auto& v : options->get_array()) AddType(types, TypeOf(v));
    return;
  }
  for (const char* combinator : {"anyOf", "oneOf"}) {
    const json::value* branches = effective->if_contains(combinator);
    if (branches == nullptr || !branches->is_array()) continue;
    for (const auto& branch : branches->get_array()) CollectTypes(walker, branch, types, depth + 1);
  }
}

}  // namespace

json::value* Find(json::value& root, const std::vector<std::string>& tokens) {
  json::value* current = &root;
  for (const auto& token : tokens) {
    current = Child(*current, token);
    if (current == nullptr) return nullptr;
  }
  return current;
}

bool Put(json::value& root, const std::vector<std::string>& tokens, json::value value) {
  if (tokens.empty()) {
    root = std::move(value);
    return true;
  }
  std::vector<std::string> parent_tokens(tokens.begin(), tokens.end() - 1);
  json::value* parent = Find(root, parent_tokens);
  if (parent == nullptr) return false;
  const std::string& last = tokens.back();
  if (parent->is_object()) {
    parent->get_object()[last] = std::move(value);
    return true;
  }
  if (!parent->is_array()) return false;
  json::array& items = parent->get_array();
  std::size_t index = 0;
  if (last == "-" || (Index(last, index) && index == items.size())) {
    items.push_back(std::move(value));
    return true;
  }
  if (Index(last, index) && index < items.size()) {
    items[index] = std::move(value);
    return true;
  }
  return false;
}

bool Remove(json::value& root, const std::vector<std::string>& tokens) {
  if (tokens.empty()) return false;
  std::vector<std::string> parent_tokens(tokens.begin(), tokens.end() - 1);
  json::value* parent = Find(root, parent_tokens);
  if (parent == nullptr) return false;
  if (parent->is_object()) return parent->get_object().erase(tokens.back()) > 0;
  std::size_t index = 0;
  if (parent->is_array() && Index(tokens.back(), index) && index < parent->get_array().size()) {
    parent->get_array().erase(parent->get_array().begin() + static_cast<std::ptrdiff_t>(index));
    return true;
  }
  return false;
}

std::vector<std::string> DefaultTokens(const SchemaWalker& walker, const json::value& answer) {
  json::object storage;
  const json::object* root = walker.root().is_null() ? nullptr : walker.Effective(walker.root(), storage);
  if (root != nullptr) {
    if (const json::value* required = root->if_contains("required"); required && required->is_array()) {
      for (const auto& name : required->get_array()) {
        if (name.is_string()) return {std::string(name.get_string())};
      }
    }
  }
  if (answer.is_object() && !answer.get_object().empty()) {
    return {std::string(answer.get_object().begin()->key())};
  }
  return {};
}

std::vector<std::string> AcceptedTypes(const SchemaWalker& walker, const json::value& schema) {
  std::vector<std::string> types;
  CollectTypes(walker, schema, types, 0);
  return types;
}

json::array* JudgeResults(json::value& answer) {
  if (!answer.is_object()) return nullptr;
  for (auto& member : answer.get_object()) {
    if (!member.value().is_array()) continue;
    json::array& items = member.value().get_array();
    if (!items.empty() && items.front().is_object() && items.front().get_object().contains("criterion_id")) {
      return &items;
    }
  }
  return nullptr;
}

}  // namespace skillrunner::providers::simulation
