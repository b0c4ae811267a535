#pragma once

#include <CLI/App.hpp>
#include <functional>

#include "runner/cli/environment.h"

namespace skillrunner::cli {

// `skillrunner view --history FILE [--listen 127.0.0.1:8321] [--allow-remote]
// [--token-file F] [--export DIR]` (design.md §11.3): the web viewer over an
// eval history, opened read-only. Loopback unless --allow-remote, which needs
// a token (--token-file, else SKILLRUNNER_TOKEN). Exit 0 when stopped by
// SIGINT or SIGTERM (or the export is written), 2 for a wrong option, a
// history that does not open, or an address that cannot be bound.
// Sets `chosen` when parsed.
void AddViewCommand(CLI::App& app, const CommonOptions& common, std::function<int()>& chosen);

}  // namespace skillrunner::cli
