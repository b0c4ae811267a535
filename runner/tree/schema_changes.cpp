#include "runner/tree/schema_changes.h"

#include <tuple>

#include "runner/tree/skill_json.h"
#include "services/validation/schema_compat.h"

namespace skillrunner {
namespace json = boost::json;

namespace {

// Every way `after`'s schemas break callers of `before`, one line each:
// "input /x: ..." or "output /y: ..." ("(root)" for the schema itself).
std::vector<std::string> SchemaBreaks(const Skill& before, const Skill& after) {
  std::vector<std::string> out;
  for (const auto& [side, name, old_schema, new_schema] :
       {std::tuple{validation::SchemaSide::kInput, "input", &before.input_schema_json, &after.input_schema_json},
        std::tuple{validation::SchemaSide::kOutput, "output", &before.output_schema_json, &after.output_schema_json}}) {
    for (const auto& b : validation::BreakingChanges(side, *old_schema, *new_schema)) {
      out.push_back(std::string(name) + " " + (b.pointer.empty() ? "(root)" : b.pointer) + ": " + b.message);
    }
  }
  return out;
}

}  // namespace

json::array SchemaChanges(const SkillRegistry& before, const SkillRegistry& after, std::vector<Diagnostic>& errors) {
  json::array changed;
  for (const auto& skill : after.skills()) {
    const Skill* old = before.FindSkill(skill->id);
    if (old == nullptr) continue;
    const std::string hash = SkillSchemaHash(*skill);
    if (hash == SkillSchemaHash(*old)) continue;
    const std::vector<std::string> breaks = SchemaBreaks(*old, *skill);
    changed.push_back(json::object{
        {"skill", skill->id}, {"version", skill->version}, {"schema_hash", hash}, {"breaking", !breaks.empty()}});
    if (breaks.empty() || skill->version > old->version) continue;
    std::string message = "/version: the schemas changed in a way that breaks callers, and version is still " +
                          std::to_string(skill->version) + " (raise it): ";
    for (std::size_t i = 0; i < breaks.size(); ++i) message += (i > 0 ? "; " : "") + breaks[i];
    errors.push_back(
        Diagnostic{skill->file.string(), skill->version_at, message, Diagnostic::Severity::kError, "breaking-change"});
  }
  return changed;
}

}  // namespace skillrunner
