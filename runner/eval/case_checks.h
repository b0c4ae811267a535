#pragma once

// A case's own assertions (docs/evals.md, "Checks"): `checks`, each a test of
// one value of the output (or of the record's metrics, for cost and latency),
// and `exec_check`, a program that grades the output and prints a score. The
// case's record gets every verdict under "checks" and their conjunction as
// "check_pass"; the run counts it as the `check_pass_rate` measure.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "runner/eval/records/case_record.h"
#include "services/handler/process_runner.h"

namespace skillrunner::eval {

enum class CheckOp { kEquals, kContains, kIcontains, kContainsAny, kContainsAll, kStartsWith, kRegex, kFuzzy, kLte };

struct CaseCheck {
  // A JSON pointer into the output; one that starts "/metrics/" points into
  // the record's metrics instead (cost_usd, duration_ms, the token counts).
  std::string pointer;
  CheckOp op = CheckOp::kEquals;
  boost::json::value value;
  bool negate = false;
  double threshold = 0.8;                   // fuzzy: the least similarity that passes
  std::shared_ptr<const std::regex> regex;  // regex: compiled when the case is read
};

struct ExecCheck {
  // argv[0] with a slash is relative to the dataset's folder.
  std::vector<std::string> argv;
  std::filesystem::path working_dir;
  double pass_threshold = 1.0;  // the least score that passes
  std::chrono::milliseconds timeout{30000};
};

// "equals", "contains", ..., "lte": the names a case writes.
std::string_view CheckOpName(CheckOp op);

// Reads a case's "checks" (an array of {pointer, op, value, negate?,
// threshold?}). Returns the first problem, naming its place as a JSON pointer
// into the case ("/checks/1/op: ..."), or an empty string.
std::string ParseChecks(const boost::json::value& value, std::vector<CaseCheck>& out);

// Reads a case's "exec_check" ({argv, pass_threshold?, timeout_ms?}); the
// same kind of problem as ParseChecks.
std::string ParseExecCheck(const boost::json::value& value, const std::filesystem::path& dataset_dir, ExecCheck& out);

// One check's verdict: {"pointer", "op", "negate"? (when true), "expected"
// (the check's value), "actual"? (the value found; strings over 64 KiB cut,
// KeptValue), "pass", "message"? (why it failed)}.
// `metrics`: the record's result.metrics (null when it has none).
CheckResult RunCheck(const CaseCheck& check, const boost::json::value& output, const boost::json::value& metrics);

// Text similarity as fuzzy measures it: 1 - the insert/delete edit distance
// over the two lengths summed (rapidfuzz's fuzz.ratio / 100), by bytes; 1 for
// two empty strings.
double FuzzyRatio(std::string_view a, std::string_view b);

// What an exec_check reads on stdin: {"sample": {"output_text", "output_json"},
// "item": the case's input}, as an OpenAI Python grader's grade(sample, item)
// takes them. output_text is the output when it is a string, else its JSON.
std::string ExecCheckInput(const boost::json::value& output, const boost::json::value& input);

// The exec_check's verdict from how the program ended: its stdout is one JSON
// value, a number (the score) or an object with "score" (a number) or "pass"
// (a boolean); exit status 0 required. {"op": "exec", "pass", "expected"
// (the pass threshold), "score"? and "actual"? (the score), "message"?}.
CheckResult ExecVerdict(const handler::ProcessOutcome& outcome, const ExecCheck& check);

}  // namespace skillrunner::eval
