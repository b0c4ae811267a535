#pragma once

// Eval datasets: JSONL files, one case per line:
//   {"id": "c1", "input": {...}, "expected": {...}?, "tags": ["..."]?,
//    "human": {"<criterion id>": "pass"|"fail", ...}?}
// `human` holds people's own verdicts, against which the judge is calibrated
// (design.md §9.5).
// Blank lines are skipped. Every problem names the file and line.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <expected>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "runner/tree/diagnostic.h"

namespace skillrunner::eval {

struct EvalCase {
  std::string id;
  boost::json::value input;
  std::optional<boost::json::value> expected;
  boost::json::array tags;
  boost::json::object human;  // criterion id -> "pass" | "fail"
  int line = 0;               // 1-based line in the dataset file
};

// Reads and checks a dataset. Errors (one per bad line, and one per duplicate
// case id naming the line of its first use): "FILE:LINE:COL: message".
// An unreadable file is one error without a position.
std::expected<std::vector<EvalCase>, std::vector<Diagnostic>> LoadDataset(const std::filesystem::path& file);

}  // namespace skillrunner::eval
