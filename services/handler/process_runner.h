#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

#include "services/common/error.h"

namespace skillrunner::handler {

inline constexpr std::size_t kDefaultMaxOutputBytes = 16 * 1024 * 1024;
inline constexpr std::size_t kStderrTailBytes = 4 * 1024;

// One child process to run to completion.
struct ProcessRequest {
  // argv[0] with a slash is relative to `working_dir`; without one it is
  // looked up on PATH. Must not be empty.
  std::vector<std::string> argv;
  std::filesystem::path working_dir;
  std::string stdin_data;  // written, then stdin is closed
  std::chrono::milliseconds timeout{60000};
  std::size_t max_output_bytes = kDefaultMaxOutputBytes;  // stdout cap
};

// How the child ended and what it wrote.
struct ProcessOutcome {
  int exit_status = 0;            // valid when signal == 0
  int signal = 0;                 // the signal that ended the child, 0 if none
  bool timed_out = false;         // killed at the deadline
  std::string stdout_data;        // at most max_output_bytes
  std::string stderr_tail;        // the last kStderrTailBytes of stderr
  bool output_truncated = false;  // stdout passed the cap: killed
};

// Runs child processes. The failures are "cannot start" (HANDLER_FAILED) and
// the cancellation of the caller's coroutine (CANCELLED, the child killed and
// reaped); everything else after a start is described by the outcome.
// Implementations are safe to call from many coroutines at once.
class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  virtual boost::asio::awaitable<Result<ProcessOutcome>> Run(ProcessRequest request) = 0;
};

// The real runner: posix_spawn into a new process group, stdin/stdout/stderr
// on Asio pipes, exit observed through a pidfd, all on the calling
// coroutine's executor; no thread ever blocks on the child. At the deadline,
// when stdout passes its cap, or when the child exits, the whole process group
// gets SIGKILL and the child is reaped: no zombie or straggler survives a Run.
//
// Construction sets SIGPIPE to ignored for the process (if it was at its
// default), so that writing to a child that closed its stdin is an EPIPE
// error instead of the death of this process; children start with every
// signal at its default and an empty signal mask.
class AsioProcessRunner : public ProcessRunner {
 public:
  AsioProcessRunner();
  boost::asio::awaitable<Result<ProcessOutcome>> Run(ProcessRequest request) override;
};

}  // namespace skillrunner::handler
