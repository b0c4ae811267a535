#pragma once

namespace skillrunner::cli {

// The `skillrunner` command line (design.md §6, §8). Returns the exit status.
int RunCli(int argc, char** argv);

}  // namespace skillrunner::cli
