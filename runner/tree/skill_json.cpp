#include "runner/tree/skill_json.h"

#include "services/common/digest.h"

namespace skillrunner {
namespace json = boost::json;

namespace {

json::object RubricJson(const Rubric& rubric) {
  json::array criteria;
  for (const auto& c : rubric.criteria) {
    criteria.push_back(json::object{{"id", c.id}, {"description", c.description}, {"required", c.required}});
  }
  return json::object{{"id", rubric.id}, {"description", rubric.description}, {"criteria", std::move(criteria)}};
}

}  // namespace

std::string SkillSchemaHash(const Skill& skill) {
  json::object schemas{{"input", skill.input_schema_json}, {"output", skill.output_schema_json}};
  return "sha256:" + Sha256Hex(CanonicalJson(schemas));
}

json::object SkillSummaryJson(const Skill& skill) {
  json::object item{{"id", skill.id},
                    {"version", skill.version},
                    {"template_type", TemplateTypeName(skill.template_type)},
                    {"description", skill.description},
                    {"schema_hash", SkillSchemaHash(skill)}};
  if (!skill.model.empty()) {
    item["model"] = skill.model;
    item["provider"] = skill.provider;
  }
  if (!skill.handler.empty()) item["handler"] = skill.handler;
  if (skill.review) item["review_rubric"] = skill.review->rubric;
  return item;
}

json::object SkillDescriptionJson(const Skill& skill, const SkillRegistry& registry) {
  json::object item = SkillSummaryJson(skill);
  item["input_schema"] = skill.input_schema_json;
  item["output_schema"] = skill.output_schema_json;
  if (skill.template_type != TemplateType::kHandler) item["output_mode"] = OutputModeName(skill.output_mode);
  item["timeout_ms"] = skill.timeout.count();
  const std::string& rubric_id = skill.review ? skill.review->rubric : skill.rubric;
  if (!rubric_id.empty()) {
    if (const Rubric* rubric = registry.FindRubric(rubric_id)) item["rubric"] = RubricJson(*rubric);
  }
  item["descriptor"] = skill.descriptor;
  return item;
}

}  // namespace skillrunner
