#pragma once

#include <CLI/App.hpp>
#include <functional>

#include "runner/cli/environment.h"

namespace skillrunner::cli {

// `skillrunner rollout status [SKILL] [--json]`, `rollout pause|resume|rollback
// SKILL` and `rollout promote SKILL [--force]` (design.md §11.2), over the
// state dir (--state-dir) that serve keeps. A command is left in the store,
// where serve applies it within a second (and a serve started later at
// once); with `state.redis` in the config, the state and the commands are in
// Redis, as serve's replicas share them. Exit 0 when done, 2 for an unknown
// skill, one without a rollout, a rollout whose state refuses the command, or
// a tree that does not load, 3 when Redis does not answer.
// Sets `chosen` when parsed.
void AddRolloutCommands(CLI::App& app, const CommonOptions& common, std::function<int()>& chosen);

}  // namespace skillrunner::cli
