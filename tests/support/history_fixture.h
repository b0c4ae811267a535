#pragma once

// A made-up eval history of any size (design.md §11.3's 1,000 runs x 1,000
// cases for bench/view_bench, 20 x 200 for the test that checks every page
// answers): one suite, three skills, cases that drift from run to run (a few
// flip each night), two judged criteria, durations and costs that vary, a git
// ref per run. Deterministic for a seed.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace skillrunner::test_support {

struct HistoryShape {
  std::size_t runs = 20;
  std::size_t cases = 200;  // per run, spread over the skills
  std::uint64_t seed = 1;
  std::string suite = "nightly";
};

// Records the runs into the history at `file` (created); "" when done, else why not.
std::string GenerateHistory(const std::filesystem::path& file, const HistoryShape& shape);

// The run id of run `index` (0-based) of a generated history.
std::string GeneratedRunId(std::size_t index);

}  // namespace skillrunner::test_support
