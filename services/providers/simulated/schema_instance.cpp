#include "services/providers/simulated/schema_instance.h"

#include <algorithm>
#include <boost/json/array.hpp>
#include <unordered_set>
#include <utility>

namespace skillrunner::providers::simulation {
namespace {

namespace json = boost::json;

constexpr int kOptionalDepth = 4;  // optional properties only this close to the root
constexpr int kHardDepth = 2 * kMaxDepth;
constexpr std::int64_t kDefaultExtraItems = 3;
constexpr int kUniqueTries = 8;
// The most an instance holds: values, a string counting one more per 4
// characters (about a token each). 10,000 is past what any model's output
// limit could write, and a schema asking for more (minItems: 1e6 of arrays,
// found by the schema_strict fuzz target: 10 s and more) gets an answer that
// stops there and fails its own minItems or minProperties, rather than a
// simulator that does not answer. Unique arrays compare each item with the
// ones before it, which 10,000 keeps within milliseconds.
constexpr std::int64_t kMaxValues = 10'000;

const json::value* Member(const json::object& object, std::string_view key) { return object.if_contains(key); }

std::optional<std::int64_t> Count(const json::object& schema, std::string_view key) {
  const json::value* value = Member(schema, key);
  if (value == nullptr || !value->is_number()) return std::nullopt;
  double number = value->to_number<double>();
  if (number < 0) return 0;
  return static_cast<std::int64_t>(std::min(number, 1e6));
}

bool IsNullOnly(const SchemaWalker& walker, const json::value& schema) {
  json::object storage;
  const json::object* effective = walker.Effective(schema, storage);
  if (effective == nullptr) return false;
  const json::value* type = Member(*effective, "type");
  return type != nullptr && type->is_string() && type->get_string() == "null";
}

std::string Singular(std::string_view name) {
  if (name.size() > 3 && name.ends_with("ies")) return std::string(name.substr(0, name.size() - 3)) + "y";
  if (name.size() > 1 && name.ends_with('s') && !name.ends_with("ss")) {
    return std::string(name.substr(0, name.size() - 1));
  }
  return std::string(name);
}

// For uniqueItems: an enum value (or boolean) of `schema` not yet in `used`.
std::optional<json::value> UnusedOption(const SchemaWalker& walker, const json::value& schema,
                                        const json::array& used) {
  json::object storage;
  const json::object* effective = walker.Effective(schema, storage);
  if (effective == nullptr) return std::nullopt;
  json::array options;
  if (const json::value* values = Member(*effective, "enum"); values && values->is_array()) {
    options = values->get_array();
  } else if (const json::value* type = Member(*effective, "type");
             type && type->is_string() && type->get_string() == "boolean") {
    options = {false, true};
  }
  for (const auto& option : options) {
    if (std::find(used.begin(), used.end(), option) == used.end()) return option;
  }
  return std::nullopt;
}

// Only annotations: the schema accepts anything.
bool SaysNothing(const json::object& schema) {
  static constexpr std::string_view kAnnotations[] = {"$schema", "$id",      "id",          "title", "description",
                                                      "default", "examples", "definitions", "$defs", "$comment"};
  for (const auto& member : schema) {
    if (std::find(std::begin(kAnnotations), std::end(kAnnotations), member.key()) == std::end(kAnnotations)) {
      return false;
    }
  }
  return true;
}

json::value Minimal(std::string_view type) {
  if (type == "object") return json::object();
  if (type == "array") return json::array();
  if (type == "string") return "";
  if (type == "integer" || type == "number") return 0;
  if (type == "boolean") return false;
  return nullptr;
}

}  // namespace

InstanceGenerator::InstanceGenerator(const json::value& root_schema, Rng& rng, std::vector<std::string> criteria)
    : root_(root_schema), walker_(root_schema), rng_(rng), criteria_(std::move(criteria)), left_(kMaxValues) {}

json::value InstanceGenerator::Generate() {
  if (root_.is_null()) return json::object();
  json::object storage;
  const json::object* effective = walker_.Effective(root_, storage);
  if (effective != nullptr && SaysNothing(*effective)) return json::object();  // an answer is an object
  return GenerateFor(root_, "", 0);
}

json::value InstanceGenerator::GenerateFor(const json::value& schema, std::string_view name, int depth) {
  json::object storage;
  const json::object* effective = walker_.Effective(schema, storage);
  if (effective == nullptr) return nullptr;
  --left_;
  json::value value = FromEffective(*effective, name, depth);
  if (value.is_string()) left_ -= static_cast<std::int64_t>(value.get_string().size() / 4);
  return value;
}

json::value InstanceGenerator::FromEffective(const json::object& schema, std::string_view name, int depth) {
  if (const json::value* constant = Member(schema, "const")) return *constant;
  if (const json::value* options = Member(schema, "enum");
      options && options->is_array() && !options->get_array().empty()) {
    const json::array& values = options->get_array();
    if (name == "verdict") {
      for (const auto& v : values) {
        if (v.is_string() && v.get_string() == "pass") return v;
      }
    }
    std::vector<const json::value*> non_null;
    for (const auto& v : values) {
      if (!v.is_null()) non_null.push_back(&v);
    }
    if (non_null.empty()) return nullptr;
    return *non_null[rng_.Below(non_null.size())];
  }
  for (const char* combinator : {"oneOf", "anyOf"}) {
    const json::value* branches = Member(schema, combinator);
    if (branches != nullptr && branches->is_array() && !branches->get_array().empty()) {
      return PickBranch(schema, *branches, name, depth);
    }
  }
  std::string type = PickType(schema);
  if (depth > kHardDepth) return Minimal(type);
  if (type == "object") return Object(schema, depth);
  if (type == "array") return Array(schema, name, depth);
  if (type == "string") return GenerateString(schema, name, rng_);
  if (type == "integer" || type == "number") return GenerateNumber(schema, type == "integer", name, rng_);
  if (type == "boolean") return rng_.Chance(1, 2);
  return nullptr;
}

json::value InstanceGenerator::PickBranch(const json::object& schema, const json::value& branches,
                                          std::string_view name, int depth) {
  const json::array& list = branches.get_array();
  std::vector<std::size_t> candidates;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!IsNullOnly(walker_, list[i])) candidates.push_back(i);
  }
  std::size_t pick = candidates.empty() ? 0 : candidates[rng_.Below(candidates.size())];
  const json::value& branch = list[pick];
  // The branch still has to satisfy the keywords beside the combinator.
  json::object base = schema;
  base.erase(&branches == Member(schema, "oneOf") ? "oneOf" : "anyOf");
  if (base.empty()) return GenerateFor(branch, name, depth);
  json::value combined = json::object{{"allOf", json::array{std::move(base), branch}}};
  return GenerateFor(combined, name, depth);
}

std::string InstanceGenerator::PickType(const json::object& schema) {
  if (const json::value* type = Member(schema, "type")) {
    if (type->is_string()) return std::string(type->get_string());
    if (type->is_array()) {
      std::vector<std::string_view> non_null;
      bool has_null = false;
      for (const auto& t : type->get_array()) {
        if (!t.is_string()) continue;
        if (t.get_string() == "null") {
          has_null = true;
        } else {
          non_null.push_back(t.get_string());
        }
      }
      if (!non_null.empty()) return std::string(non_null[rng_.Below(non_null.size())]);
      if (has_null) return "null";
    }
  }
  for (const char* key :
       {"properties", "required", "additionalProperties", "minProperties", "maxProperties", "patternProperties"}) {
    if (Member(schema, key) != nullptr) return "object";
  }
  for (const char* key : {"items", "minItems", "maxItems", "uniqueItems", "contains"}) {
    if (Member(schema, key) != nullptr) return "array";
  }
  for (const char* key : {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"}) {
    if (Member(schema, key) != nullptr) return "number";
  }
  return "string";
}

namespace {

std::vector<std::string> RequiredNames(const json::object& schema) {
  std::vector<std::string> required;
  if (const json::value* names = Member(schema, "required"); names && names->is_array()) {
    for (const auto& n : names->get_array()) {
      if (n.is_string()) required.emplace_back(n.get_string());
    }
  }
  return required;
}

bool Has(const std::vector<std::string>& keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

// Adds what `dependencies` says the chosen keys need.
void AddDependencies(const json::value* dependencies, std::vector<std::string>& chosen) {
  for (std::size_t i = 0; dependencies && dependencies->is_object() && i < chosen.size(); ++i) {
    const json::value* needs = dependencies->get_object().if_contains(chosen[i]);
    if (needs == nullptr || !needs->is_array()) continue;
    for (const auto& n : needs->get_array()) {
      if (n.is_string() && !Has(chosen, n.get_string())) chosen.emplace_back(n.get_string());
    }
  }
}

}  // namespace

std::vector<std::string> InstanceGenerator::ChooseKeys(const json::object& schema, const json::object& props,
                                                       int depth) {
  const std::vector<std::string> required = RequiredNames(schema);
  std::int64_t max_props = Count(schema, "maxProperties").value_or(1 << 20);
  std::int64_t min_props = Count(schema, "minProperties").value_or(0);
  auto optional_budget = max_props - static_cast<std::int64_t>(required.size());
  std::vector<std::string> chosen;
  for (const auto& member : props) {
    bool take = Has(required, member.key());
    if (!take && depth < kOptionalDepth && optional_budget > 0 && rng_.Chance(1, 2)) {
      take = true;
      --optional_budget;
    }
    if (take) chosen.emplace_back(member.key());
  }
  for (const auto& name : required) {
    if (!props.contains(name)) chosen.push_back(name);
  }
  const json::value* dependencies = Member(schema, "dependencies");
  AddDependencies(dependencies, chosen);
  for (const auto& member : props) {
    if (static_cast<std::int64_t>(chosen.size()) >= min_props) break;
    if (!Has(chosen, member.key())) {
      chosen.emplace_back(member.key());
      AddDependencies(dependencies, chosen);
    }
  }
  const json::value* additional = Member(schema, "additionalProperties");
  bool closed = additional != nullptr && additional->is_bool() && !additional->get_bool();
  // No more than are left to write; each name once (a set: minProperties may be large).
  min_props = std::min(min_props, std::max<std::int64_t>(left_, 0));
  std::unordered_set<std::string> taken(chosen.begin(), chosen.end());
  for (int n = 1; !closed && static_cast<std::int64_t>(chosen.size()) < min_props; ++n) {
    std::string key = "field_" + std::to_string(n);
    if (taken.insert(key).second) chosen.push_back(key);
  }
  return chosen;
}

json::value InstanceGenerator::Object(const json::object& schema, int depth) {
  static const json::object kNoProperties;
  const json::value* props_value = Member(schema, "properties");
  const json::object& props = props_value && props_value->is_object() ? props_value->get_object() : kNoProperties;
  const json::value* additional = Member(schema, "additionalProperties");
  json::object out;
  for (const auto& key : ChooseKeys(schema, props, depth)) {
    if (left_ <= 0) break;
    const json::value* child = props.if_contains(key);
    if (child == nullptr) {
      child = additional != nullptr && additional->is_object() ? additional : &AnySchema();
    }
    out[key] = GenerateFor(*child, key, depth + 1);
  }
  return out;
}

json::value InstanceGenerator::Array(const json::object& schema, std::string_view name, int depth) {
  if (auto judged = JudgeArray(schema, depth)) return std::move(*judged);
  const json::value* items = Member(schema, "items");
  const json::value* additional = Member(schema, "additionalItems");
  std::int64_t low = Count(schema, "minItems").value_or(0);
  std::int64_t high = Count(schema, "maxItems").value_or(low + kDefaultExtraItems);
  if (items != nullptr && items->is_array() && additional != nullptr && additional->is_bool() &&
      !additional->get_bool()) {
    high = std::min<std::int64_t>(high, static_cast<std::int64_t>(items->get_array().size()));
  }
  std::int64_t count = low;
  if (depth < kMaxDepth) {
    count = rng_.Between(std::max(low, std::min<std::int64_t>(1, high)), std::min(high, low + 4));
  }
  bool unique = Member(schema, "uniqueItems") != nullptr && Member(schema, "uniqueItems")->is_bool() &&
                Member(schema, "uniqueItems")->get_bool();
  std::string item_name = Singular(name);
  json::array out;
  for (std::int64_t i = 0; i < count && left_ > 0; ++i) {
    const json::value* item_schema = &AnySchema();
    if (items != nullptr && items->is_array()) {
      auto index = static_cast<std::size_t>(i);
      if (index < items->get_array().size()) {
        item_schema = &items->get_array()[index];
      } else if (additional != nullptr && additional->is_object()) {
        item_schema = additional;
      }
    } else if (items != nullptr) {
      item_schema = items;
    }
    json::value item = GenerateFor(*item_schema, item_name, depth + 1);
    for (int tries = 0; unique && tries < kUniqueTries && std::find(out.begin(), out.end(), item) != out.end();
         ++tries) {
      item = GenerateFor(*item_schema, item_name, depth + 1);
    }
    if (unique && std::find(out.begin(), out.end(), item) != out.end()) {
      if (auto other = UnusedOption(walker_, *item_schema, out)) {
        item = std::move(*other);
      } else if (i >= low) {
        break;
      }
    }
    out.push_back(std::move(item));
  }
  if (const json::value* contains = Member(schema, "contains")) {
    json::value wanted = GenerateFor(*contains, item_name, depth + 1);
    if (out.empty()) {
      out.push_back(std::move(wanted));
    } else if (std::find(out.begin(), out.end(), wanted) == out.end()) {
      out.back() = std::move(wanted);
    }
  }
  return out;
}

std::optional<json::value> InstanceGenerator::JudgeArray(const json::object& schema, int depth) {
  const json::value* items = Member(schema, "items");
  if (items == nullptr || items->is_array()) return std::nullopt;
  json::object item_storage;
  const json::object* item = walker_.Effective(*items, item_storage);
  if (item == nullptr) return std::nullopt;
  const json::value* props = Member(*item, "properties");
  if (props == nullptr || !props->is_object()) return std::nullopt;
  const json::value* criterion = props->get_object().if_contains("criterion_id");
  if (criterion == nullptr) return std::nullopt;
  json::object criterion_storage;
  const json::object* criterion_schema = walker_.Effective(*criterion, criterion_storage);
  std::vector<std::string> ids;
  if (criterion_schema != nullptr) {
    if (const json::value* options = Member(*criterion_schema, "enum"); options && options->is_array()) {
      for (const auto& v : options->get_array()) {
        if (v.is_string()) ids.emplace_back(v.get_string());
      }
    }
  }
  if (ids.empty()) ids = criteria_;
  if (ids.empty()) return std::nullopt;
  judged_ = true;
  json::array out;
  for (const auto& id : ids) out.push_back(JudgeItem(*item, id, depth + 1));
  return json::value(std::move(out));
}

json::value InstanceGenerator::JudgeItem(const json::object& item_schema, const std::string& id, int depth) {
  static constexpr std::string_view kJudgeKeys[] = {"criterion_id", "verdict", "reasoning", "confidence"};
  const json::object& props = Member(item_schema, "properties")->get_object();
  std::vector<std::string> required;
  if (const json::value* names = Member(item_schema, "required"); names && names->is_array()) {
    for (const auto& n : names->get_array()) {
      if (n.is_string()) required.emplace_back(n.get_string());
    }
  }
  json::object out;
  for (const auto& member : props) {
    std::string_view key = member.key();
    bool judge_key = std::find(std::begin(kJudgeKeys), std::end(kJudgeKeys), key) != std::end(kJudgeKeys);
    if (!judge_key && std::find(required.begin(), required.end(), key) == required.end()) continue;
    json::object storage;
    const json::object* effective = walker_.Effective(member.value(), storage);
    if (key == "criterion_id") {
      out[key] = id;
    } else if (key == "reasoning") {
      out[key] = "The output satisfies \"" + id + "\": every relevant detail is supported by the input.";
    } else if (key == "confidence" && effective != nullptr && !Member(*effective, "enum")) {
      bool in_range = true;
      if (const auto* max = Member(*effective, "maximum"); max && max->is_number()) {
        in_range = in_range && max->to_number<double>() >= 90;
      }
      if (const auto* min = Member(*effective, "minimum"); min && min->is_number()) {
        in_range = in_range && min->to_number<double>() <= 90;
      }
      out[key] = in_range ? json::value(90) : GenerateFor(member.value(), key, depth + 1);
    } else {
      out[key] = GenerateFor(member.value(), key, depth + 1);  // verdict: "pass" by name
    }
  }
  for (const auto& name : required) {
    if (!out.contains(name)) out[name] = GenerateFor(AnySchema(), name, depth + 1);
  }
  return out;
}

}  // namespace skillrunner::providers::simulation
