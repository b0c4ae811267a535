#pragma once

#include <CLI/App.hpp>
#include <functional>

#include "runner/cli/environment.h"

namespace skillrunner::cli {

// `skillrunner codegen python|typescript --out DIR`: writes
// DIR/skillrunner_skills.py or DIR/skills.ts for the tree's skills. Exit 2
// when the tree does not load cleanly, or two skills would get one name.
// Sets `chosen` when parsed.
void AddCodegenCommand(CLI::App& app, const CommonOptions& common, std::function<int()>& chosen);

}  // namespace skillrunner::cli
