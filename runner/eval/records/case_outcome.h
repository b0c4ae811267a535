#pragma once

// What one finished eval case came to, read off its results.jsonl record.
// Shared by the summary, the JUnit and HTML reports, the history and the
// baseline comparison so that all of them count a case the same way.

#include <boost/json/object.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner::eval {

enum class CaseOutcome {
  kPass,        // output valid; review passed (or none); expected matched (or none)
  kFail,        // output valid, but the review failed, `expected` did not match or a check failed
  kError,       // the invocation failed (no valid output): the record has "error"
  kJudgeError,  // the judge gave no usable verdict: "judge_error" (the eval's
                // judge), or "error" with code JUDGE_ERROR (the skill's own
                // review gate: its output was valid, its judge broke)
  kRefused,     // the model refused (or the provider's filter withheld) the answer:
                // "error" with code REFUSED or CONTENT_FILTERED; counted apart from failures
};

// "pass" | "fail" | "error" | "judge_error" | "refused"
std::string_view CaseOutcomeName(CaseOutcome outcome);

// Reads a record: {"skill", "case", "repeat"?, "result"|"error", "review"?,
// "judge_error"?, "expected_match"?, "check_pass"?}. An invocation error wins over
// everything, except a review-gate judge error (error.code JUDGE_ERROR), which
// is a judge error like the eval judge's; a refusal (error.code REFUSED or
// CONTENT_FILTERED) is its own outcome; then a judge error; then a failed
// review or a mismatch.
CaseOutcome OutcomeOf(const boost::json::object& record);

// The skill a record counts for: its "skill", and "@<version>" when the
// record has "version" (a candidate's case, design.md §11.2): "greet@2".
std::string SkillLabel(const boost::json::object& record);

// The identity of a case in a run: skill label, case id and repeat
// ("skill/case" or "skill/case#k" when the record has "repeat"). Case ids may
// hold "/"; the key is for maps and display, not for parsing back.
std::string CaseKey(const boost::json::object& record);

// The same key from its parts (a version > 0 is a candidate's; a repeat > 0 is written "#k").
std::string CaseKey(std::string_view skill, std::optional<std::int64_t> version, std::string_view case_id,
                    std::int64_t repeat);

// Keeps one record per CaseKey, the last one (a case recorded twice, e.g. by
// two processes that wrote one folder, counts once); the kept records stay in
// the order of their last occurrence. Returns how many records were dropped.
std::size_t DedupeRecords(std::vector<boost::json::object>& records);

}  // namespace skillrunner::eval
