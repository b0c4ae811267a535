#pragma once

// Pieces shared by `eval` and `eval merge`.

#include <optional>
#include <string>

#include "runner/cli/environment.h"
#include "runner/eval/orchestrate.h"

namespace skillrunner::cli {

inline constexpr int kEvalRunError = eval::kRunError;

// The registry and the checked suite; problems are printed to stderr, each
// once (`tree_warnings` false: the tree's errors only, as `eval merge` runs
// nothing and its shards showed the warnings). Acknowledged warnings never.
std::optional<eval::LoadedSuite> LoadSuiteForEval(const CommonOptions& common, const std::string& suite_file,
                                                  bool tree_warnings = true);

}  // namespace skillrunner::cli
