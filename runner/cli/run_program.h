#pragma once

// Runs a helper program to its end (git, tar, diff) for the CLI's commands.

#include <string>
#include <vector>

namespace skillrunner::cli {

struct Ran {
  bool started = false;
  int status = -1;  // the exit status; -1 when killed, timed out or cut
  std::string out;
  std::string err;  // stderr's tail, trimmed
};

// Output beyond this is cut (status -1).
inline constexpr std::size_t kMaxProgramOutput = 256u << 20;

// `text` without the line ends and spaces at its end.
std::string Trimmed(std::string text);

// `argv[0]` found on PATH, `stdin_data` on its standard input; two minutes at most.
Ran RunProgram(std::vector<std::string> argv, std::string stdin_data = {});

}  // namespace skillrunner::cli
