#pragma once

// Pieces shared by `eval` and `eval merge`.

#include <optional>
#include <string>

#include "runner/cli/environment.h"
#include "runner/cli/eval_command.h"
#include "runner/eval/orchestrate.h"

namespace skillrunner::cli {

inline constexpr int kEvalRunError = eval::kRunError;

// The registry and the checked suite; problems are printed to stderr.
std::optional<eval::LoadedSuite> LoadSuiteForEval(const CommonOptions& common, const std::string& suite_file);

}  // namespace skillrunner::cli
