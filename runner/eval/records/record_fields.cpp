#include "runner/eval/records/record_fields.h"

#include <cmath>

namespace skillrunner::eval {
namespace json = boost::json;

const json::object* ObjectAt(const json::object* object, std::string_view key) {
  if (object == nullptr) return nullptr;
  const json::value* value = object->if_contains(key);
  return value != nullptr && value->is_object() ? &value->as_object() : nullptr;
}

const json::array* ArrayAt(const json::object* object, std::string_view key) {
  if (object == nullptr) return nullptr;
  const json::value* value = object->if_contains(key);
  return value != nullptr && value->is_array() ? &value->as_array() : nullptr;
}

std::optional<double> AsNumber(const json::value* value) {
  if (value == nullptr) return std::nullopt;
  double number = 0;
  if (value->is_int64()) {
    number = static_cast<double>(value->as_int64());
  } else if (value->is_uint64()) {
    number = static_cast<double>(value->as_uint64());
  } else if (value->is_double()) {
    number = value->as_double();
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(number)) return std::nullopt;
  return number;
}

std::optional<double> NumberAt(const json::object* object, std::string_view key) {
  return object == nullptr ? std::nullopt : AsNumber(object->if_contains(key));
}

std::optional<std::int64_t> IntAt(const json::object* object, std::string_view key) {
  if (object == nullptr) return std::nullopt;
  const json::value* value = object->if_contains(key);
  if (value == nullptr) return std::nullopt;
  if (value->is_int64()) return value->as_int64();
  if (value->is_uint64()) return static_cast<std::int64_t>(value->as_uint64());
  if (value->is_double() && std::isfinite(value->as_double())) {
    return static_cast<std::int64_t>(std::llround(value->as_double()));
  }
  return std::nullopt;
}

std::string_view TextAt(const json::object* object, std::string_view key) {
  if (object == nullptr) return {};
  const json::value* value = object->if_contains(key);
  return value != nullptr && value->is_string() ? std::string_view(value->as_string()) : std::string_view();
}

std::string_view SkillIdOf(const json::object& record) { return TextAt(&record, "skill"); }
std::string_view CaseIdOf(const json::object& record) { return TextAt(&record, "case"); }
std::int64_t RepeatOf(const json::object& record) { return IntAt(&record, "repeat").value_or(0); }
const json::object* ResultOf(const json::object& record) { return ObjectAt(&record, "result"); }
const json::object* ErrorOf(const json::object& record) { return ObjectAt(&record, "error"); }
const json::value* OutputOf(const json::object& record) {
  const json::object* result = ResultOf(record);
  return result ? result->if_contains("output") : nullptr;
}
const json::object* ReviewOf(const json::object& record) { return ObjectAt(&record, "review"); }
const json::object* GateReviewOf(const json::object& record) { return ObjectAt(ResultOf(record), "review"); }
const json::object* HumanOf(const json::object& record) { return ObjectAt(&record, "human"); }
const json::value* RejudgesOf(const json::object& record) { return record.if_contains("rejudges"); }
const json::object* JudgeUsageOf(const json::object& record) { return ObjectAt(&record, "judge_usage"); }

namespace {
std::optional<bool> BoolAt(const json::object& record, std::string_view key) {
  const json::value* value = record.if_contains(key);
  return value && value->is_bool() ? std::optional<bool>(value->as_bool()) : std::nullopt;
}
}  // namespace

std::optional<bool> ExpectedMatchOf(const json::object& record) { return BoolAt(record, "expected_match"); }
std::optional<bool> CheckPassOf(const json::object& record) { return BoolAt(record, "check_pass"); }

const json::object* MetricsOf(const json::object& record) {
  if (const json::object* metrics = ObjectAt(ObjectAt(&record, "result"), "metrics")) return metrics;
  return ObjectAt(ObjectAt(&record, "error"), "metrics");
}

const json::array* AttemptsOf(const json::object& record) {
  if (const json::array* attempts = ArrayAt(ObjectAt(&record, "result"), "attempts")) return attempts;
  return ArrayAt(ObjectAt(&record, "error"), "attempts");
}

std::string_view ErrorCodeOf(const json::object& record) { return TextAt(ObjectAt(&record, "error"), "code"); }

bool IsGateJudgeError(const json::object& record) { return ErrorCodeOf(record) == "JUDGE_ERROR"; }

const json::object* JudgeErrorOf(const json::object& record) {
  if (const json::object* judge = ObjectAt(&record, "judge_error")) return judge;
  return IsGateJudgeError(record) ? ObjectAt(&record, "error") : nullptr;
}

std::set<std::string, std::less<>> CaseCriteriaOf(const json::object& record) {
  std::set<std::string, std::less<>> ids;
  if (const json::array* listed = ArrayAt(&record, "case_criteria")) {
    for (const json::value& id : *listed) {
      if (id.is_string()) ids.emplace(id.as_string());
    }
  }
  return ids;
}

std::optional<bool> CaseCriteriaHeld(const json::object& record) {
  const auto ids = CaseCriteriaOf(record);
  if (ids.empty()) return std::nullopt;
  std::set<std::string, std::less<>> passed;
  if (const json::array* results = ArrayAt(ObjectAt(&record, "review"), "criteria_results")) {
    for (const json::value& r : *results) {
      const json::object* result = r.if_object();
      const std::string_view id = TextAt(result, "criterion_id");
      if (!ids.contains(id)) continue;
      if (TextAt(result, "verdict") == "fail") return false;
      if (TextAt(result, "verdict") == "pass") passed.emplace(id);
    }
  }
  if (passed.size() < ids.size()) return std::nullopt;
  return true;
}

std::int64_t RecordTokens(const json::object& record) {
  std::int64_t tokens = 0;
  for (const json::object* usage : {MetricsOf(record), ObjectAt(&record, "judge_usage")}) {
    tokens += IntAt(usage, "input_tokens").value_or(0) + IntAt(usage, "output_tokens").value_or(0);
  }
  return tokens;
}

std::optional<double> CaseCostUsd(const json::object& record) {
  std::optional<double> cost;
  for (const json::object* usage : {MetricsOf(record), ObjectAt(&record, "judge_usage")}) {
    if (std::optional<double> usd = NumberAt(usage, "cost_usd")) cost = cost.value_or(0) + *usd;
  }
  return cost;
}

std::optional<double> CaseDurationMs(const json::object& record) {
  if (std::optional<double> ms = NumberAt(&record, "duration_ms")) return ms;
  return NumberAt(MetricsOf(record), "duration_ms");
}

}  // namespace skillrunner::eval
