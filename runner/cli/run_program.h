#pragma once

// What the CLI's commands share for the world outside: a helper program run
// to its end (git, tar, diff), a file read whole.

#include <filesystem>
#include <optional>
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

// The bytes of `path`, or nullopt when it cannot be read.
std::optional<std::string> ReadFileText(const std::filesystem::path& path);

}  // namespace skillrunner::cli
