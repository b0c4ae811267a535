// Maps a strict answer back to the shape of the ORIGINAL schema (design.md §5.1):
// a null becomes absent only for a property that the original neither
// requires nor allows to be null. Best effort, never fails.

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <limits>

#include "services/generation/strict_schema.h"
#include "services/generation/strict_schema_internal.h"

namespace skillrunner::generation {
namespace {

namespace json = boost::json;
using strict_detail::AllowsNull;
using strict_detail::kMaxRefHops;
using strict_detail::ResolveLocalRef;

constexpr int kMaxDepth = 256;

class MapBack {
 public:
  explicit MapBack(const json::value& root) : root_(root) {}

  json::value Value(const json::value& value, const json::value& schema, int depth) const {
    if (depth > kMaxDepth || (!value.is_object() && !value.is_array())) return value;
    std::vector<const json::object*> parts;
    Collect(value, schema, parts, depth);
    if (parts.empty()) return value;
    return value.is_object() ? Object(value.get_object(), parts, depth) : Array(value.get_array(), parts, depth);
  }

 private:
  // The schema with its $ref chain followed; nullptr for booleans and breaks.
  const json::object* Resolve(const json::value& schema) const {
    const json::value* at = &schema;
    for (int hops = 0; hops <= kMaxRefHops; ++hops) {
      if (!at->is_object()) return nullptr;
      const json::value* ref = at->get_object().if_contains("$ref");
      if (ref == nullptr || !ref->is_string()) return &at->get_object();
      at = ResolveLocalRef(root_, ref->get_string());
      if (at == nullptr) return nullptr;
    }
    return nullptr;
  }

  // Every schema that applies to `value`: the schema itself, its allOf
  // branches, and the anyOf/oneOf branch the value fits best.
  void Collect(const json::value& value, const json::value& schema, std::vector<const json::object*>& parts,
               int depth) const {
    const json::object* s = Resolve(schema);
    if (s == nullptr || depth > kMaxDepth || parts.size() > 64) return;
    parts.push_back(s);
    if (const auto* all = s->if_contains("allOf"); all && all->is_array()) {
      for (const auto& branch : all->get_array()) Collect(value, branch, parts, depth + 1);
    }
    for (std::string_view key : {"anyOf", "oneOf"}) {
      const auto* branches = s->if_contains(key);
      if (branches == nullptr || !branches->is_array()) continue;
      const json::value* best = nullptr;
      int best_score = 0;
      for (const auto& branch : branches->get_array()) {
        int score = Fit(value, branch);
        if (score > best_score) {
          best = &branch;
          best_score = score;
        }
      }
      if (best != nullptr) Collect(value, *best, parts, depth + 1);
    }
  }

  // How well `value` (an object or array) fits `branch`: 0 not at all (wrong
  // type, not in enum/const, no nested branch fits); typed fits beat untyped
  // ones; for objects, more declared keys fit better.
  int Fit(const json::value& value, const json::value& branch, int depth = 0) const {
    const json::object* s = Resolve(branch);
    if (s == nullptr) return branch.is_bool() && branch.get_bool() ? 1 : 0;
    if (depth > kMaxRefHops) return 1;
    if (const auto* values = s->if_contains("enum"); values && values->is_array()) {
      const auto& list = values->get_array();
      if (std::find(list.begin(), list.end(), value) == list.end()) return 0;
    }
    if (const auto* constant = s->if_contains("const"); constant && *constant != value) return 0;
    std::string_view kind = value.is_object() ? "object" : "array";
    bool typed = false;
    bool fits = false;
    if (const auto* type = s->if_contains("type")) {
      typed = true;
      if (type->is_string()) fits = type->get_string() == kind;
      if (type->is_array()) {
        for (const auto& t : type->get_array()) fits = fits || (t.is_string() && t.get_string() == kind);
      }
    } else if (s->contains("properties") || s->contains("items")) {
      typed = true;
      fits = s->contains(value.is_object() ? "properties" : "items");
    }
    if (typed && !fits) return 0;
    int score = typed ? 2 : 1;
    const json::value* properties = s->if_contains("properties");
    if (value.is_object() && properties != nullptr && properties->is_object()) {
      for (const auto& member : value.get_object()) {
        if (properties->get_object().contains(member.key())) score += 2;
      }
    }
    for (std::string_view key : {"anyOf", "oneOf", "allOf"}) {
      const auto* branches = s->if_contains(key);
      if (branches == nullptr || !branches->is_array() || branches->get_array().empty()) continue;
      int best = key == "allOf" ? std::numeric_limits<int>::max() : 0;
      for (const auto& sub : branches->get_array()) {
        int fit = Fit(value, sub, depth + 1);
        best = key == "allOf" ? std::min(best, fit) : std::max(best, fit);
      }
      if (best == 0) return 0;
      score = std::max(score, best);
    }
    return score;
  }

  static bool Requires(const json::object& schema, std::string_view name) {
    const json::value* required = schema.if_contains("required");
    if (required == nullptr || !required->is_array()) return false;
    for (const auto& entry : required->get_array()) {
      if (entry.is_string() && entry.get_string() == name) return true;
    }
    return false;
  }

  json::value Object(const json::object& value, const std::vector<const json::object*>& parts, int depth) const {
    json::object out;
    for (const auto& [key, child] : value) {
      std::vector<const json::value*> declared;
      bool required = false;
      for (const json::object* part : parts) {
        required = required || Requires(*part, key);
        const json::value* properties = part->if_contains("properties");
        if (properties != nullptr && properties->is_object()) {
          if (const auto* schema = properties->get_object().if_contains(key)) declared.push_back(schema);
        }
      }
      if (child.is_null() && !required && !declared.empty()) {
        bool forbidden = false;
        for (const auto* schema : declared) forbidden = forbidden || !AllowsNull(root_, *schema);
        if (forbidden) continue;  // optional, not nullable: the strict "absent"
      }
      if (declared.empty()) {
        for (const json::object* part : parts) {
          const json::value* additional = part->if_contains("additionalProperties");
          if (additional != nullptr && additional->is_object()) declared.push_back(additional);
        }
      }
      if (declared.empty()) {
        out[key] = child;
        continue;
      }
      json::value mapped = Value(child, *declared.front(), depth + 1);
      for (std::size_t i = 1; i < declared.size(); ++i) mapped = Value(mapped, *declared[i], depth + 1);
      out[key] = std::move(mapped);
    }
    return out;
  }

  json::value Array(const json::array& value, const std::vector<const json::object*>& parts, int depth) const {
    json::array out = value;
    for (const json::object* part : parts) {
      const json::value* items = part->if_contains("items");
      if (items == nullptr) continue;
      for (std::size_t i = 0; i < out.size(); ++i) {
        const json::value* schema = items;
        if (items->is_array()) {
          schema = i < items->get_array().size() ? &items->get_array()[i] : part->if_contains("additionalItems");
        }
        if (schema != nullptr) out[i] = Value(out[i], *schema, depth + 1);
      }
    }
    return out;
  }

  const json::value& root_;
};

}  // namespace

boost::json::value UnwrapStrictAnswer(boost::json::value answer) {
  json::object* wrapper = answer.if_object();
  if (wrapper == nullptr || wrapper->size() != 1 || !wrapper->contains("value")) return answer;
  json::value inner = std::move((*wrapper)["value"]);
  return inner;
}

boost::json::value MapBackStrictAnswer(const boost::json::value& answer, const boost::json::value& original) {
  return MapBack(original).Value(answer, original, 0);
}

}  // namespace skillrunner::generation
