#pragma once

// One finished eval case as a type (design.md §12.3): what results.jsonl, the
// history and the viewer's API hold as JSON, read once (FromJson) and written
// once (ToJson); every output (JUnit, report.html, the viewer, stderr) takes
// its failures from FailedGates, so each tells the same story. The record
// format is schemas/eval/case-record.schema.json; older records (no input, no
// check detail) parse, with those fields absent.
//
// The invocation's own answer (`result`: output, attempts, metrics; or
// `error`: code, message, errors, attempts) keeps the shape of skills.invoke's
// result and error data (schemas/skills.invoke.result.schema.json), as JSON.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/eval/records/case_outcome.h"

namespace skillrunner::eval {

// design.md §12.3: what a record keeps of a value it stores (the case's input,
// a check's actual value): every string over kKeptStringBytes cut to that
// many bytes (on a UTF-8 boundary) with "… [cut: N bytes]" after it.
inline constexpr std::size_t kKeptStringBytes = 64 * 1024;
boost::json::value KeptValue(const boost::json::value& value);

// "path: message" for each {path, message} of an `errors` array (an invocation error's, an
// attempt's); "(root)" for the empty path. The one way every output lists them.
std::vector<std::string> ErrorLines(const boost::json::array* errors);

// The gates a case passes or fails, in the order that types a JUnit failure.
enum class Gate { kSchema, kExpected, kCheck, kReview, kRefusal };

// SCHEMA_INVALID, EXPECTED_MISMATCH, CHECK_FAILED, REVIEW_FAILED, REFUSED.
std::string_view GateType(Gate gate);

// One member of `expected` that the output did not match.
struct FieldMismatch {
  std::string path;  // a JSON pointer into the output
  std::string message;
};

// One check's verdict (runner/eval/case_checks.h).
struct CheckResult {
  std::string op;       // "equals", ..., "exec"
  std::string pointer;  // into the output ("/metrics/..." into the metrics); "" for exec
  bool negate = false;
  bool pass = false;
  std::optional<boost::json::value> expected;  // the check's value (exec: its pass threshold)
  std::optional<boost::json::value> actual;    // the value found (exec: the score)
  std::optional<double> score;                 // fuzzy similarity, exec score
  std::string message;                         // why it failed; "" when it passed

  // {"pointer" (not for exec), "op", "negate"? (when true), "pass", "expected"?, "actual"?,
  // "score"?, "message"? (when not empty)}: the one way a check is written.
  boost::json::object ToJson() const;
};

// What the eval's judgings of a case used (its "judge_usage"): tokens, and dollars when priced.
struct JudgeUsage {
  std::int64_t input_tokens = 0;
  std::int64_t cached_input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::optional<double> cost_usd;
  bool batched = false;  // some judging went through a batch: its costs are split
  std::optional<double> batch_cost_usd, online_cost_usd;

  boost::json::object ToJson() const;
};

// One entry of a record's "rejudges": the verdict as it is, or {"judge_error": ...}.
boost::json::value RejudgeJson(std::optional<boost::json::value> review,
                               std::optional<boost::json::object> judge_error);

// A gate the case failed, with what each output says about it.
struct GateFailure {
  Gate gate;
  std::string message;             // one line: why
  std::vector<std::string> lines;  // every detail, one per line
};

struct CaseRecord {
  static constexpr int kRecordSchema = 2;  // the format's own version (1: before typed records)

  std::string skill;
  std::optional<std::int64_t> version;  // a candidate's case: the skill's version
  std::string case_id;
  std::int64_t repeat = 0;  // 0: the suite runs each case once
  int record_schema = kRecordSchema;
  std::optional<boost::json::value> input;  // absent in older records
  boost::json::array tags;
  boost::json::object human;
  std::string rejudged_from;
  std::optional<boost::json::object> result;  // the invocation's answer
  std::optional<boost::json::object> error;   // why the invocation failed
  std::optional<bool> expected_match;
  std::vector<FieldMismatch> expected_mismatches;
  std::vector<CheckResult> checks;
  std::optional<bool> check_pass;
  std::string rubric;
  std::vector<std::string> case_criteria;  // the ids of the case's own criteria, judged for it alone
  std::optional<boost::json::object> review;
  std::optional<boost::json::object> judge_error;
  std::optional<boost::json::array> rejudges;
  std::optional<boost::json::object> judge_usage;
  std::optional<std::int64_t> duration_ms;  // the case's wall time, judging included
  boost::json::object other;                // members this build does not know (a newer format's), kept as they are

  // Tolerant: a member of the wrong type is read as absent.
  static CaseRecord FromJson(const boost::json::object& json);
  boost::json::object ToJson() const;

  CaseOutcome Outcome() const;
  std::string Label() const;                       // "skill" or "skill@version"
  std::string Key() const;                         // "label/case" or "label/case#repeat"
  const boost::json::value* Output() const;        // result.output, or null
  const boost::json::value& MetricsValue() const;  // result.metrics, or a null value
  std::string_view ErrorCode() const;              // error.code, or ""
  // Every gate the case failed, in Gate order, each with its own message.
  std::vector<GateFailure> FailedGates() const;

  // design.md §12.3 `redact:`: masks, with kRedacted, each field a pointer
  // names: "/input/..." in the input, "/output/..." in the output. An output
  // field's traces go too: the attempts' raw answers, and the actual value and
  // message of a check or mismatch at, under or above it (an exact mismatch at
  // the root shows the whole output). Run before the record is
  // written anywhere; what the provider was sent is not touched.
  void Redact(const std::vector<std::string>& pointers);
};

inline constexpr std::string_view kRedacted = "[redacted]";

}  // namespace skillrunner::eval
