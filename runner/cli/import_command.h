#pragma once

#include <CLI/App.hpp>
#include <functional>

#include "runner/cli/environment.h"

namespace skillrunner::cli {

// `skillrunner import promptfoo CONFIG.yaml` and `skillrunner import
// openai-evals EVAL.json [--data ITEMS.jsonl]`, each with [--out DIR]
// [--force] [--strict] (docs/migrate.md): writes a skillrunner tree and
// DIR/import-report.md. Exit 0 when written; 1 with --strict when anything was
// not carried over (the tree is written all the same); 2 for a file that
// cannot be read or is not of that kind, or an --out folder that is not empty
// without --force. Sets `chosen` when parsed.
void AddImportCommand(CLI::App& app, std::function<int()>& chosen);

}  // namespace skillrunner::cli
