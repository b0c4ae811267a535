#include "services/review/verdict_schema.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <set>
#include <string>

namespace skillrunner::review {
namespace json = boost::json;

json::value VerdictSchema(const Rubric& rubric) {
  json::array ids;
  for (const auto& criterion : rubric.criteria) ids.emplace_back(criterion.id);
  json::object item_properties;
  item_properties["criterion_id"] = json::object{{"enum", std::move(ids)}};
  item_properties["reasoning"] = json::object{{"type", "string"}};
  item_properties["verdict"] = json::object{{"enum", json::array{"pass", "fail", "indeterminate"}}};
  item_properties["confidence"] = json::object{{"type", "number"}, {"minimum", 0}, {"maximum", 100}};
  json::object item{{"type", "object"},
                    {"required", json::array{"criterion_id", "reasoning", "verdict", "confidence"}},
                    {"additionalProperties", false},
                    {"properties", std::move(item_properties)}};
  json::object strings{{"type", "array"}, {"items", json::object{{"type", "string"}}}};
  json::object properties;
  properties["criteria_results"] = json::object{{"type", "array"}, {"items", std::move(item)}};
  properties["issues"] = strings;
  properties["suggested_fixes"] = strings;
  properties["pass"] = json::object{{"type", "boolean"}};
  return json::object{{"type", "object"},
                      {"required", json::array{"criteria_results", "issues", "suggested_fixes"}},
                      {"additionalProperties", false},
                      {"properties", std::move(properties)}};
}

std::vector<FieldError> CheckEveryCriterionOnce(const Rubric& rubric, const json::value& answer) {
  std::vector<FieldError> errors;
  const json::object* root = answer.if_object();
  const json::value* results = root ? root->if_contains("criteria_results") : nullptr;
  if (results == nullptr || !results->is_array()) return errors;  // the schema reports it
  std::set<std::string, std::less<>> seen;
  const json::array& items = results->get_array();
  for (std::size_t i = 0; i < items.size(); ++i) {
    const json::object* item = items[i].if_object();
    const json::value* id = item ? item->if_contains("criterion_id") : nullptr;
    if (id == nullptr || !id->is_string()) continue;
    std::string text(id->get_string());
    if (!seen.insert(text).second) {
      errors.push_back({"/criteria_results/" + std::to_string(i), "criterion \"" + text + "\" appears more than once"});
    }
  }
  for (const auto& criterion : rubric.criteria) {
    if (!seen.contains(criterion.id)) {
      errors.push_back({"/criteria_results", "criterion \"" + criterion.id + "\" is missing"});
    }
  }
  return errors;
}

}  // namespace skillrunner::review
