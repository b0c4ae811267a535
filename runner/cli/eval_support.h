#pragma once

// Pieces shared by `eval` and `eval merge`.

#include <boost/json/object.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/cli/environment.h"
#include "runner/cli/eval_command.h"
#include "runner/eval/finish_run.h"
#include "runner/eval/suite.h"

namespace skillrunner::cli {

inline constexpr int kEvalRunError = 2;

// The registry and the checked suite; problems are printed to stderr.
struct LoadedSuite {
  std::shared_ptr<const SkillRegistry> registry;
  eval::Suite suite;
};
std::optional<LoadedSuite> LoadSuiteForEval(const CommonOptions& common, const std::string& suite_file);

// Reports, history and exit status for recorded records; prints what the
// user must know to stderr.
int FinishEval(const eval::Suite& suite, eval::SummaryHeader header, std::vector<boost::json::object> records,
               const EvalOptions& options);

}  // namespace skillrunner::cli
