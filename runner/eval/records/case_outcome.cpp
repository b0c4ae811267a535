#include "runner/eval/records/case_outcome.h"

#include <unordered_map>

#include "runner/eval/records/record_fields.h"

namespace skillrunner::eval {
namespace json = boost::json;

std::string_view CaseOutcomeName(CaseOutcome outcome) {
  switch (outcome) {
    case CaseOutcome::kPass:
      return "pass";
    case CaseOutcome::kFail:
      return "fail";
    case CaseOutcome::kError:
      return "error";
    case CaseOutcome::kJudgeError:
      return "judge_error";
    case CaseOutcome::kRefused:
      return "refused";
  }
  return "error";
}

CaseOutcome OutcomeOf(const json::object& record) {
  if (IsGateJudgeError(record)) return CaseOutcome::kJudgeError;
  if (const std::string_view code = ErrorCodeOf(record); code == "REFUSED" || code == "CONTENT_FILTERED") {
    return CaseOutcome::kRefused;
  }
  if (record.contains("error") || !record.contains("result")) return CaseOutcome::kError;
  if (record.contains("judge_error")) return CaseOutcome::kJudgeError;
  if (const auto* review = record.if_contains("review"); review && review->is_object()) {
    const auto* pass = review->as_object().if_contains("pass");
    if (!pass || !pass->is_bool()) return CaseOutcome::kJudgeError;  // fail closed
    if (!pass->as_bool()) return CaseOutcome::kFail;
  }
  for (const char* gate : {"expected_match", "check_pass"}) {
    if (const auto* held = record.if_contains(gate); held && held->is_bool() && !held->as_bool()) {
      return CaseOutcome::kFail;
    }
  }
  return CaseOutcome::kPass;
}

std::string SkillLabel(const json::object& record) {
  std::string label;
  if (const auto* skill = record.if_contains("skill"); skill && skill->is_string()) label = skill->as_string();
  if (const auto* version = record.if_contains("version"); version && version->is_int64() && version->as_int64() > 0) {
    label += "@" + std::to_string(version->as_int64());
  }
  return label;
}

std::string CaseKey(const json::object& record) {
  std::string key = SkillLabel(record);
  key.push_back('/');
  if (const auto* id = record.if_contains("case"); id && id->is_string()) key.append(id->as_string());
  if (const auto* repeat = record.if_contains("repeat"); repeat && repeat->is_int64()) {
    key.push_back('#');
    key.append(std::to_string(repeat->as_int64()));
  }
  return key;
}

std::string CaseKey(std::string_view skill, std::optional<std::int64_t> version, std::string_view case_id,
                    std::int64_t repeat) {
  std::string key(skill);
  if (version) key += "@" + std::to_string(*version);
  key.push_back('/');
  key.append(case_id);
  if (repeat > 0) key += "#" + std::to_string(repeat);
  return key;
}

std::size_t DedupeRecords(std::vector<json::object>& records) {
  std::unordered_map<std::string, std::size_t> last;  // key -> index of its last record
  for (std::size_t i = 0; i < records.size(); ++i) last[CaseKey(records[i])] = i;
  if (last.size() == records.size()) return 0;
  std::vector<json::object> kept;
  kept.reserve(last.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (last.at(CaseKey(records[i])) == i) kept.push_back(std::move(records[i]));
  }
  std::size_t dropped = records.size() - kept.size();
  records = std::move(kept);
  return dropped;
}

}  // namespace skillrunner::eval
