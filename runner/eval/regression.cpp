#include "runner/eval/regression.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

#include "runner/eval/report_markup.h"

namespace skillrunner::eval {
namespace json = boost::json;
using report::NumberAt;
using report::ObjectAt;

namespace {

// current - baseline, rounded to 1e-9 so that 0.9 - 0.8 reads 0.1 and not
// 0.09999999999999998; null when either side is not a number.
json::value Delta(const json::object* current, const json::object* baseline, std::string_view key) {
  std::optional<double> now = NumberAt(current, key);
  std::optional<double> before = NumberAt(baseline, key);
  if (!now || !before) return nullptr;
  return std::round((*now - *before) * 1e9) / 1e9;
}

json::object SkillDeltas(const json::object& current, const json::object* baseline) {
  json::object deltas;
  deltas["schema_compliance_delta"] = Delta(&current, baseline, "schema_compliance");
  deltas["rubric_pass_rate_delta"] = Delta(&current, baseline, "rubric_pass_rate");
  json::object criteria;
  if (const json::object* current_criteria = ObjectAt(&current, "criteria")) {
    const json::object* baseline_criteria = ObjectAt(baseline, "criteria");
    for (const auto& [id, criterion] : *current_criteria) {
      if (!criterion.is_object()) continue;
      json::object entry;
      entry["pass_rate_delta"] =
          Delta(&criterion.as_object(), ObjectAt(baseline_criteria, id), "pass_rate");
      criteria[id] = std::move(entry);
    }
  }
  deltas["criteria"] = std::move(criteria);
  return deltas;
}

struct Flip {
  std::string skill;
  std::string case_id;
  std::optional<std::int64_t> repeat;
  CaseOutcome to;
};

std::vector<Flip> Flips(const std::vector<json::object>& records, const BaselineRun& baseline) {
  std::vector<Flip> flips;
  for (const json::object& record : records) {
    auto before = baseline.outcomes.find(CaseKey(record));
    if (before == baseline.outcomes.end() || before->second != CaseOutcome::kPass) continue;
    CaseOutcome now = OutcomeOf(record);
    // A judge error says nothing about the output, so it is no flip.
    if (now != CaseOutcome::kFail && now != CaseOutcome::kError) continue;
    Flip flip{std::string(report::TextAt(&record, "skill")),
              std::string(report::TextAt(&record, "case")), std::nullopt, now};
    if (const json::value* repeat = record.if_contains("repeat"); repeat && repeat->is_int64()) {
      flip.repeat = repeat->as_int64();
    }
    flips.push_back(std::move(flip));
  }
  std::sort(flips.begin(), flips.end(), [](const Flip& a, const Flip& b) {
    return std::tie(a.skill, a.case_id, a.repeat) < std::tie(b.skill, b.case_id, b.repeat);
  });
  return flips;
}

}  // namespace

json::object CompareWithBaseline(const json::object& summary,
                                 const std::vector<json::object>& records,
                                 const BaselineRun& baseline) {
  json::object comparison;
  comparison["run_id"] = baseline.run_id;
  comparison["started_at"] = baseline.started_at;

  json::object skills;
  if (const json::object* current_skills = ObjectAt(&summary, "skills")) {
    const json::object* baseline_skills = ObjectAt(&baseline.summary, "skills");
    for (const auto& [id, skill] : *current_skills) {
      if (!skill.is_object()) continue;
      skills[id] = SkillDeltas(skill.as_object(), ObjectAt(baseline_skills, id));
    }
  }
  comparison["skills"] = std::move(skills);

  json::array flipped;
  for (Flip& flip : Flips(records, baseline)) {
    json::object entry{{"skill", flip.skill}, {"case", flip.case_id}};
    if (flip.repeat) entry["repeat"] = *flip.repeat;
    entry["from"] = CaseOutcomeName(CaseOutcome::kPass);
    entry["to"] = CaseOutcomeName(flip.to);
    flipped.push_back(std::move(entry));
  }
  comparison["flipped"] = std::move(flipped);
  return comparison;
}

}  // namespace skillrunner::eval
