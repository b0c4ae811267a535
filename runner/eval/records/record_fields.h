#pragma once

// Tolerant reads of results.jsonl records and summary.json fields, shared by
// the summary, thresholds, history, reports and the run loop, so that every
// reader agrees on where a field lives (e.g. a case's metrics are under
// "result" when it succeeded and under "error" when it failed). Any field may
// be missing, null or of the wrong type: the readers then give nothing.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace skillrunner::eval {

// nullptr when `object` is null, or the key is missing or of another type.
const boost::json::object* ObjectAt(const boost::json::object* object, std::string_view key);
const boost::json::array* ArrayAt(const boost::json::object* object, std::string_view key);
// Finite numbers only (int64, uint64 or double).
std::optional<double> NumberAt(const boost::json::object* object, std::string_view key);
std::optional<double> AsNumber(const boost::json::value* value);
// Whole numbers (int64, uint64, or a finite double rounded).
std::optional<std::int64_t> IntAt(const boost::json::object* object, std::string_view key);
// "" when missing or not a string.
std::string_view TextAt(const boost::json::object* object, std::string_view key);

// A record's members (design.md §12.3: only runner/eval/records reads a record by its keys; everyone
// else asks these, CaseRecord, or case_outcome.h). Each is nullptr / empty / nullopt when absent.
std::string_view SkillIdOf(const boost::json::object& record);               // "skill"
std::string_view CaseIdOf(const boost::json::object& record);                // "case"
std::int64_t RepeatOf(const boost::json::object& record);                    // "repeat", 0 when absent
const boost::json::object* ResultOf(const boost::json::object& record);      // "result"
const boost::json::object* ErrorOf(const boost::json::object& record);       // "error"
const boost::json::value* OutputOf(const boost::json::object& record);       // "result.output"
const boost::json::object* ReviewOf(const boost::json::object& record);      // "review" (the eval's judge)
const boost::json::object* GateReviewOf(const boost::json::object& record);  // "result.review" (the skill's gate)
const boost::json::object* HumanOf(const boost::json::object& record);       // "human"
const boost::json::value* RejudgesOf(const boost::json::object& record);     // "rejudges"
const boost::json::object* JudgeUsageOf(const boost::json::object& record);  // "judge_usage"
std::optional<bool> ExpectedMatchOf(const boost::json::object& record);      // "expected_match"
std::optional<bool> CheckPassOf(const boost::json::object& record);          // "check_pass"

// The invocation's metrics: "result.metrics", else "error.metrics".
const boost::json::object* MetricsOf(const boost::json::object& record);
// The invocation's attempts: "result.attempts", else "error.attempts".
const boost::json::array* AttemptsOf(const boost::json::object& record);
// "error.code", or "" when the invocation succeeded.
std::string_view ErrorCodeOf(const boost::json::object& record);
// The invocation failed only because the skill's own review gate (its judge)
// gave no usable verdict: "error.code" is JUDGE_ERROR.
bool IsGateJudgeError(const boost::json::object& record);
// The judge's failure: "judge_error" (an eval judge), else "error" when it is
// a review-gate judge error; nullptr otherwise.
const boost::json::object* JudgeErrorOf(const boost::json::object& record);
// design.md §12.3: the ids of the case's own criteria ("case_criteria"), judged for it alone.
std::set<std::string, std::less<>> CaseCriteriaOf(const boost::json::object& record);
// Whether the case's own criteria held: false when one failed, true when all passed, nullopt when it
// has none or one is undecided (indeterminate, or no verdict).
std::optional<bool> CaseCriteriaHeld(const boost::json::object& record);

// Input plus output tokens of the invocation and of the eval's judgings.
std::int64_t RecordTokens(const boost::json::object& record);
// The case's wall time: the record's "duration_ms", else its metrics'.
std::optional<double> CaseDurationMs(const boost::json::object& record);
// What a case cost (its invocation and its judging); nullopt when neither was priced.
std::optional<double> CaseCostUsd(const boost::json::object& record);

}  // namespace skillrunner::eval
