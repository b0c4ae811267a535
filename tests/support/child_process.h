#pragma once

// Starting the real `skillrunner` (or any program) from tests and benchmarks
// as a separate process: a clean environment, output to files, signals, and
// a bounded wait.

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace skillrunner::test_support {

// A loopback TCP port that was free a moment ago (0 when none was found).
std::uint16_t FreeLoopbackPort();

// A connected TCP socket to 127.0.0.1:port, or -1.
int ConnectToLoopback(std::uint16_t port);

// This process's environment without OPENAI_*, ANTHROPIC_* and SKILLRUNNER_*
// (design.md §8), plus `extra` ("NAME=value").
std::vector<std::string> CleanEnvironment(const std::vector<std::string>& extra = {});

// Starts `program` with `args` in `dir` (empty: the current folder); stdout
// and stderr go to the given files (empty: /dev/null). Returns the pid, or -1.
pid_t SpawnProcess(const std::string& program, const std::vector<std::string>& args,
                   const std::vector<std::string>& env, const std::filesystem::path& dir = {},
                   const std::filesystem::path& stdout_file = {}, const std::filesystem::path& stderr_file = {});

// A started process that is killed (SIGKILL) and reaped when the object dies
// while it still runs.
class ChildProcess {
 public:
  ChildProcess(const std::string& program, const std::vector<std::string>& args, const std::vector<std::string>& env,
               const std::filesystem::path& dir = {}, const std::filesystem::path& stdout_file = {},
               const std::filesystem::path& stderr_file = {})
      : pid_(SpawnProcess(program, args, env, dir, stdout_file, stderr_file)) {}
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  void Signal(int signal) const;
  // The exit status (128 + N after signal N), or -1 when it has not ended within `timeout`.
  int Wait(std::chrono::milliseconds timeout);

 private:
  pid_t pid_;
  bool reaped_ = false;
};

}  // namespace skillrunner::test_support
