#pragma once

// Eval datasets: JSONL files, one case per line:
//   {"id": "c1", "input": {...}, "expected": {...}?, "tags": ["..."]?,
//    "human": {"<criterion id>": "pass"|"fail", ...}?, "checks": [...]?,
//    "exec_check": {...}?, "reference": ...?,
//    "criteria": [{"id", "description", "required"?}]?}
// `human` holds people's own verdicts, against which the judge is calibrated
// (design.md §9.5); `checks` and `exec_check` are the case's own assertions
// (runner/eval/case_checks.h); `reference` is an expected answer the judge
// sees beside the input.
// Blank lines are skipped. Every problem names the file and line.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runner/eval/case_checks.h"
#include "runner/tree/diagnostic.h"

namespace skillrunner::eval {

// design.md §12.3: a criterion of one case, judged with the skill's rubric for that case only.
struct CaseCriterion {
  std::string id;
  std::string description;
  bool required = false;
};

struct EvalCase {
  std::string id;
  boost::json::value input;
  std::optional<boost::json::value> expected;
  boost::json::array tags;
  boost::json::object human;  // criterion id -> "pass" | "fail"
  std::vector<CaseCheck> checks;
  std::optional<ExecCheck> exec_check;
  std::optional<boost::json::value> reference;
  std::vector<CaseCriterion> criteria;
  int line = 0;  // 1-based line in the dataset file
};

// A dataset as read: the cases that parsed, and every problem of the others, so that the cases'
// own checks (against the skill's schemas) can be reported in the same pass.
struct LoadedDataset {
  std::vector<EvalCase> cases;
  std::vector<Diagnostic> problems;  // one per bad line, one per duplicate id; "no cases" when empty
  bool readable = true;              // false: the file could not be read (no problems listed)
};

// Reads and checks a dataset's lines. Problems: "FILE:LINE:COL: message" (a
// duplicate case id names the line of its first use).
LoadedDataset LoadDataset(const std::filesystem::path& file);

}  // namespace skillrunner::eval
