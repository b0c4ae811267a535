#include "services/validation/schema_compat.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <optional>
#include <set>

#include "services/common/json_pointer.h"

namespace skillrunner::validation {
namespace json = boost::json;
namespace {

constexpr int kMaxDepth = 32;
constexpr int kMaxRefHops = 16;
const json::object kNoProperties;

// The node a local `$ref` ("#/definitions/x") leads to in `root`, else the node itself.
const json::value& Resolve(const json::value& node, const json::value& root) {
  const json::value* at = &node;
  for (int hops = 0; hops < kMaxRefHops; ++hops) {
    const json::object* object = at->if_object();
    const json::value* ref = object != nullptr ? object->if_contains("$ref") : nullptr;
    if (ref == nullptr || !ref->is_string() || !ref->get_string().starts_with("#")) break;
    boost::system::error_code ec;
    const json::value* target = root.find_pointer(ref->get_string().subview(1), ec);
    if (target == nullptr) break;
    at = target;
  }
  return *at;
}

// The JSON types a node takes; nullopt: any.
std::optional<std::set<std::string>> Types(const json::object& node) {
  const json::value* type = node.if_contains("type");
  if (type == nullptr) return std::nullopt;
  std::set<std::string> out;
  if (type->is_string()) out.emplace(type->get_string());
  if (type->is_array()) {
    for (const json::value& t : type->get_array()) {
      if (t.is_string()) out.emplace(t.get_string());
    }
  }
  return out;
}

// The types of `a` that `b` does not take ("integer" is inside "number"); "any type" when `a` is any.
std::vector<std::string> TypesNotIn(const std::optional<std::set<std::string>>& a,
                                    const std::optional<std::set<std::string>>& b) {
  if (!b) return {};
  if (!a) return {"any type"};
  std::vector<std::string> out;
  for (const std::string& type : *a) {
    if (!b->contains(type) && !(type == "integer" && b->contains("number"))) out.push_back(type);
  }
  return out;
}

// The values a node is limited to (`enum`, or `const`); nullopt: any.
std::optional<json::array> Values(const json::object& node) {
  if (const json::value* values = node.if_contains("enum"); values != nullptr && values->is_array()) {
    return values->get_array();
  }
  if (const json::value* value = node.if_contains("const")) return json::array{*value};
  return std::nullopt;
}

// The values of `a` that `b` does not allow, written as JSON; "any value" when `a` is any.
std::vector<std::string> ValuesNotIn(const std::optional<json::array>& a, const std::optional<json::array>& b) {
  if (!b) return {};
  if (!a) return {"any value"};
  std::vector<std::string> out;
  for (const json::value& value : *a) {
    if (std::find(b->begin(), b->end(), value) == b->end()) out.push_back(json::serialize(value));
  }
  return out;
}

std::string Joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

std::set<std::string> Required(const json::object& node) {
  std::set<std::string> out;
  if (const json::value* required = node.if_contains("required"); required != nullptr && required->is_array()) {
    for (const json::value& name : required->get_array()) {
      if (name.is_string()) out.emplace(name.get_string());
    }
  }
  return out;
}

const json::object* Properties(const json::object& node) {
  const json::value* properties = node.if_contains("properties");
  return properties != nullptr ? properties->if_object() : nullptr;
}

class Comparer {
 public:
  Comparer(SchemaSide side, const json::value& before_root, const json::value& after_root)
      : input_(side == SchemaSide::kInput), before_root_(before_root), after_root_(after_root) {}

  void Compare(const json::value& before_node, const json::value& after_node, const std::string& pointer, int depth) {
    const json::object* before = Resolve(before_node, before_root_).if_object();
    const json::object* after = Resolve(after_node, after_root_).if_object();
    if (before == nullptr || after == nullptr || depth > kMaxDepth) return;
    CompareTypes(*before, *after, pointer);
    CompareValues(*before, *after, pointer);
    CompareMembers(*before, *after, pointer, depth);
    const json::value* before_items = before->if_contains("items");
    const json::value* after_items = after->if_contains("items");
    if (before_items != nullptr && after_items != nullptr) {
      Compare(*before_items, *after_items, AppendPointer(pointer, "*"), depth + 1);
    }
  }

  std::vector<SchemaBreak> breaks;

 private:
  void CompareTypes(const json::object& before, const json::object& after, const std::string& pointer) {
    if (input_) {
      if (auto lost = TypesNotIn(Types(before), Types(after)); !lost.empty()) {
        breaks.push_back({pointer, "the type narrowed: it no longer takes " + Joined(lost)});
      }
    } else if (auto gained = TypesNotIn(Types(after), Types(before)); !gained.empty()) {
      breaks.push_back({pointer, "the type widened: it may now be " + Joined(gained)});
    }
  }

  void CompareValues(const json::object& before, const json::object& after, const std::string& pointer) {
    if (input_) {
      if (auto lost = ValuesNotIn(Values(before), Values(after)); !lost.empty()) {
        breaks.push_back({pointer, "the enum narrowed: it no longer takes " + Joined(lost)});
      }
    } else if (auto gained = ValuesNotIn(Values(after), Values(before)); !gained.empty()) {
      breaks.push_back({pointer, "the enum widened: it may now be " + Joined(gained)});
    }
  }

  void CompareMembers(const json::object& before, const json::object& after, const std::string& pointer, int depth) {
    const std::set<std::string> required_before = Required(before);
    const std::set<std::string> required_after = Required(after);
    const json::object* properties_before = Properties(before);
    const json::object* properties_after = Properties(after);
    auto declared = [](const json::object* properties, const std::string& name) {
      return properties != nullptr && properties->contains(name);
    };
    if (input_) {
      for (const std::string& name : required_after) {
        if (!required_before.contains(name)) {
          breaks.push_back({AppendPointer(pointer, name), "a required member \"" + name + "\" was added"});
        }
      }
    } else {
      for (const std::string& name : required_before) {
        if (!required_after.contains(name) && declared(properties_after, name)) {
          breaks.push_back({AppendPointer(pointer, name), "\"" + name + "\" is no longer always present"});
        }
      }
      for (const auto& [name, unused] : properties_before != nullptr ? *properties_before : kNoProperties) {
        if (!declared(properties_after, name)) {
          breaks.push_back({AppendPointer(pointer, name), "the member \"" + std::string(name) + "\" was removed"});
        }
      }
    }
    if (properties_before == nullptr || properties_after == nullptr) return;
    for (const auto& [name, schema] : *properties_before) {
      if (const json::value* now = properties_after->if_contains(name)) {
        Compare(schema, *now, AppendPointer(pointer, name), depth + 1);
      }
    }
  }

  bool input_;
  const json::value& before_root_;
  const json::value& after_root_;
};

}  // namespace

std::vector<SchemaBreak> BreakingChanges(SchemaSide side, const json::value& before, const json::value& after) {
  Comparer comparer(side, before, after);
  comparer.Compare(before, after, "", 0);
  return std::move(comparer.breaks);
}

}  // namespace skillrunner::validation
