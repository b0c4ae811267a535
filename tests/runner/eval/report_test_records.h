#pragma once

// Record and summary builders shared by the history, regression and report
// tests, and a way to run a python3 checker over a written file.

#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "tests/support/temp_tree.h"

namespace skillrunner::testing {

inline boost::json::object ParseObject(std::string_view text) {
  return boost::json::parse(text).as_object();
}

// A successful invocation of `skill` on `case_id` whose review passed.
inline boost::json::object PassRecord(std::string_view skill, std::string_view case_id,
                                      std::optional<int> repeat = std::nullopt) {
  boost::json::object record = ParseObject(R"({
    "result": {"skill": "s", "output": {"name": "Ada"},
               "attempts": [{"n": 1, "kind": "ok", "temperature": 0, "errors": [], "raw": "{\"name\":\"Ada\"}",
                             "input_tokens": 100, "output_tokens": 20, "duration_ms": 250}],
               "metrics": {"mode": "native_strict", "attempts": 1, "validation_retries": 0,
                           "transient_retries": 0, "input_tokens": 100, "output_tokens": 20,
                           "tokens_estimated": false, "duration_ms": 250}},
    "review": {"pass": true, "issues": [], "suggested_fixes": [], "indeterminate": [],
               "criteria_results": [
                 {"criterion_id": "faithful", "verdict": "pass", "reasoning": "ok", "confidence": 90},
                 {"criterion_id": "complete", "verdict": "pass", "reasoning": "ok", "confidence": 80}]},
    "duration_ms": 300})");
  record["skill"] = skill;
  record["case"] = case_id;
  if (repeat) record["repeat"] = *repeat;
  return record;
}

// Valid output, but the review failed on "faithful".
inline boost::json::object FailRecord(std::string_view skill, std::string_view case_id,
                                      std::optional<int> repeat = std::nullopt) {
  boost::json::object record = PassRecord(skill, case_id, repeat);
  record["review"] = ParseObject(R"({"pass": false, "issues": ["phone number invented"],
    "suggested_fixes": ["drop the phone"], "indeterminate": [],
    "criteria_results": [
      {"criterion_id": "faithful", "verdict": "fail", "reasoning": "the phone is not in the text", "confidence": 95},
      {"criterion_id": "complete", "verdict": "indeterminate", "reasoning": "unclear", "confidence": 30}]})");
  return record;
}

// The invocation failed: no valid output after the retries.
inline boost::json::object ErrorRecord(std::string_view skill, std::string_view case_id,
                                       std::optional<int> repeat = std::nullopt) {
  boost::json::object record = ParseObject(R"({
    "error": {"code": "MAX_RETRIES_EXCEEDED", "message": "output invalid after 2 attempts",
              "errors": [{"path": "/email", "message": "does not match format email"}],
              "attempts": [
                {"n": 1, "kind": "validation", "temperature": 0.2,
                 "errors": [{"path": "/email", "message": "does not match format email"}],
                 "raw": "{\"email\":\"nope\"}", "input_tokens": 100, "output_tokens": 9, "duration_ms": 120},
                {"n": 2, "kind": "validation", "temperature": 0,
                 "errors": [{"path": "/email", "message": "does not match format email"}],
                 "raw": "{\"email\":\"still nope\"}", "input_tokens": 140, "output_tokens": 9, "duration_ms": 130}],
              "metrics": {"mode": "validation_loop", "attempts": 2, "validation_retries": 1,
                          "transient_retries": 0, "input_tokens": 240, "output_tokens": 18,
                          "tokens_estimated": false, "duration_ms": 250}},
    "duration_ms": 260})");
  record["skill"] = skill;
  record["case"] = case_id;
  if (repeat) record["repeat"] = *repeat;
  return record;
}

// Valid output, but the judge's answer was unusable.
inline boost::json::object JudgeErrorRecord(std::string_view skill, std::string_view case_id,
                                            std::optional<int> repeat = std::nullopt) {
  boost::json::object record = PassRecord(skill, case_id, repeat);
  record.erase("review");
  record["judge_error"] = ParseObject(R"({"code": "PROVIDER_UNAVAILABLE",
    "message": "judge model answered 503 three times", "attempts": [], "metrics": {}})");
  return record;
}

// Runs `python3 -c SCRIPT FILE` and returns what it printed (stdout and
// stderr), so a test can assert on a real parser's view of a written file.
inline std::string RunPython(const TempTree& tree, std::string_view script,
                             const std::filesystem::path& file) {
  std::filesystem::path script_file = tree.Write("check.py", script);
  std::string command = "python3 '" + script_file.string() + "' '" + file.string() + "' 2>&1";
  std::string output;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    char buffer[4096];
    std::size_t n = 0;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) output.append(buffer, n);
    pclose(pipe);
  }
  return output;
}

}  // namespace skillrunner::testing
