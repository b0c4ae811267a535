#include "services/handler/process_runner.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/readable_pipe.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/writable_pipe.hpp>
#include <boost/asio/write.hpp>
#include <cerrno>
#include <utility>

#include "services/handler/child_process.h"

namespace skillrunner::handler {
namespace {

namespace asio = boost::asio;
using asio::awaitable;
using Executor = asio::any_io_executor;

// Expected failures (EOF, EPIPE, cancellation) come back as error codes.
constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
constexpr std::size_t kReadChunk = 16 * 1024;

// Closes `descriptor` after taking it out of the reactor's epoll set. Asio's close skips that
// (closing the last descriptor of a file removes it from the set), but a child spawning on another
// thread holds copies of our descriptors until it execs, so the registration outlived the close and
// its events went to whichever descriptor reused the reactor's state: a pidfd's wait woke before its
// child exited, and the child was killed as a straggler.
template <class Descriptor>
void CloseDeregistered(Descriptor& descriptor) {
  if (!descriptor.is_open()) return;
  int fd = -1;
  if constexpr (requires(boost::system::error_code & ec) { descriptor.release(ec); }) {
    boost::system::error_code ignored;
    fd = descriptor.release(ignored);
  } else {
    fd = descriptor.release();
  }
  if (fd >= 0) ::close(fd);
}

// One started child for the length of a Run: its pipes and pidfd on the
// caller's executor. It is reaped on every path: by WaitExit, or, should the
// coroutine be destroyed before (an exception), by the destructor after a
// SIGKILL (which makes that wait short).
class Child {
 public:
  Child(const Executor& executor, SpawnedChild spawned)
      : pid_(spawned.pid),
        stdin_(executor, spawned.stdin_write.Release()),
        stdout_(executor, spawned.stdout_read.Release()),
        stderr_(executor, spawned.stderr_read.Release()),
        pidfd_(executor) {
    UniqueFd pidfd = OpenPidFd(pid_);
    if (pidfd.valid()) pidfd_.assign(pidfd.Release());
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  ~Child() {
    CloseDescriptors();
    if (reaped_) return;
    KillGroup();
    while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
    }
  }

  asio::writable_pipe& stdin_pipe() { return stdin_; }
  asio::readable_pipe& stdout_pipe() { return stdout_; }
  asio::readable_pipe& stderr_pipe() { return stderr_; }
  bool reaped() const { return reaped_; }
  int wait_status() const { return wait_status_; }

  // SIGKILL to the child's whole process group. Only while the child is not
  // reaped: until then its pid, and so the group id, cannot be reused.
  void KillGroup() {
    if (!reaped_) ::kill(-pid_, SIGKILL);
  }

  // Completes when the child has exited (or on cancellation, leaving it
  // unreaped). Kills what is left of its process group, then reaps it.
  awaitable<void> WaitExit() {
    if (reaped_) co_return;
    bool exited = false;
    if (pidfd_.is_open()) {
      exited = co_await WaitPidFd();
    } else {
      exited = co_await PollExit();
    }
    if (!exited) co_return;
    KillGroup();  // stragglers (grandchildren) still holding our pipes
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    wait_status_ = status;
    reaped_ = true;
  }

 private:
  // Readiness alone is not trusted: an epoll registration another descriptor left behind could wake
  // this wait (CloseDeregistered), and a live child was then killed as a straggler. Exited is what
  // waitid says without reaping.
  awaitable<bool> WaitPidFd() {
    for (;;) {
      auto [ec] = co_await pidfd_.async_wait(asio::posix::stream_descriptor::wait_read, kNoThrow);
      if (ec) co_return false;
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
        if (errno == EINTR) continue;
        co_return true;  // not ours to wait for any more: reaping finds out
      }
      if (info.si_pid != 0) co_return true;
    }
  }

  void CloseDescriptors() {
    CloseDeregistered(pidfd_);
    CloseDeregistered(stdin_);
    CloseDeregistered(stdout_);
    CloseDeregistered(stderr_);
  }

  // Kernels without pidfd: look without reaping, back off up to 50 ms.
  awaitable<bool> PollExit() {
    asio::steady_timer timer(co_await asio::this_coro::executor);
    auto delay = std::chrono::milliseconds(1);
    for (;;) {
      siginfo_t info{};
      if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
        co_return errno != EINTR;
      }
      if (info.si_pid != 0) co_return true;
      timer.expires_after(delay);
      auto [ec] = co_await timer.async_wait(kNoThrow);
      if (ec) co_return false;
      delay = std::min(delay * 2, std::chrono::milliseconds(50));
    }
  }

  pid_t pid_;
  asio::writable_pipe stdin_;
  asio::readable_pipe stdout_;
  asio::readable_pipe stderr_;
  asio::posix::stream_descriptor pidfd_;
  std::atomic<bool> reaped_ = false;  // the read coroutines may run elsewhere
  int wait_status_ = 0;
};

// Writes all of `data`, then closes stdin. A child that exits without
// reading makes the write fail (EPIPE): that is its business, not an error.
awaitable<void> WriteStdin(asio::writable_pipe& pipe, const std::string& data) {
  if (!data.empty()) {
    co_await asio::async_write(pipe, asio::buffer(data), kNoThrow);
  }
  CloseDeregistered(pipe);
}

// Reads stdout to EOF. Past `cap` bytes it keeps the first `cap`, marks the
// output truncated and kills the child (which would otherwise block writing).
awaitable<void> ReadStdout(Child& child, std::size_t cap, ProcessOutcome& out) {
  std::array<char, kReadChunk> buffer;
  for (;;) {
    auto [ec, n] = co_await child.stdout_pipe().async_read_some(asio::buffer(buffer), kNoThrow);
    if (out.stdout_data.size() + n > cap) {
      out.stdout_data.append(buffer.data(), cap - out.stdout_data.size());
      out.output_truncated = true;
      child.KillGroup();
      co_return;
    }
    out.stdout_data.append(buffer.data(), n);
    if (ec) co_return;
  }
}

// Reads stderr to EOF, keeping only its last kStderrTailBytes.
awaitable<void> ReadStderrTail(asio::readable_pipe& pipe, std::string& tail) {
  std::array<char, kReadChunk> buffer;
  for (;;) {
    auto [ec, n] = co_await pipe.async_read_some(asio::buffer(buffer), kNoThrow);
    tail.append(buffer.data(), n);
    if (tail.size() > 2 * kStderrTailBytes) {
      tail.erase(0, tail.size() - kStderrTailBytes);
    }
    if (ec) break;
  }
  if (tail.size() > kStderrTailBytes) {
    tail.erase(0, tail.size() - kStderrTailBytes);
  }
}

// All of the child's I/O at once, so that no pipe can fill up while we wait
// on another; done when every pipe is at EOF and the child is reaped.
awaitable<void> Exchange(Child& child, const ProcessRequest& request, ProcessOutcome& outcome) {
  using namespace asio::experimental::awaitable_operators;
  co_await (WriteStdin(child.stdin_pipe(), request.stdin_data) &&
            ReadStdout(child, request.max_output_bytes, outcome) &&
            ReadStderrTail(child.stderr_pipe(), outcome.stderr_tail) && child.WaitExit());
}

// Returns on expiry or cancellation alike.
awaitable<void> Sleep(asio::steady_timer& timer) { co_await timer.async_wait(kNoThrow); }

void FillExitStatus(int wait_status, ProcessOutcome& outcome) {
  if (WIFSIGNALED(wait_status)) {
    outcome.signal = WTERMSIG(wait_status);
    outcome.exit_status = 128 + outcome.signal;
  } else {
    outcome.exit_status = WEXITSTATUS(wait_status);
  }
}

Error CannotStart(const std::string& name, const std::string& why) {
  return Error{ErrorCode::kHandlerFailed, "cannot start '" + name + "': " + why, {}, {}};
}

Result<SpawnedChild> Start(const ProcessRequest& request) {
  if (request.argv.empty()) {
    return std::unexpected(CannotStart("", "empty command"));
  }
  const std::string& name = request.argv.front();
  std::error_code ec;
  if (!request.working_dir.empty() && !std::filesystem::is_directory(request.working_dir, ec)) {
    return std::unexpected(CannotStart(name, "no working directory " + request.working_dir.string()));
  }
  auto program = ResolveProgram(name, request.working_dir);
  if (!program) return std::unexpected(CannotStart(name, ErrnoMessage(program.error())));
  auto spawned = SpawnChild(*program, request.argv, request.working_dir);
  if (!spawned) return std::unexpected(CannotStart(name, ErrnoMessage(spawned.error())));
  return std::move(*spawned);
}

// Runs the started child to its end: exit, deadline, or cancellation of the
// caller (CANCELLED). Requires throw_if_cancelled(false), so that even a
// cancelled caller waits for the reaping of the killed child.
awaitable<Result<ProcessOutcome>> Supervise(Child& child, const ProcessRequest& request) {
  using namespace asio::experimental::awaitable_operators;
  ProcessOutcome outcome;
  asio::steady_timer timer(co_await asio::this_coro::executor, request.timeout);
  auto finished = co_await (Exchange(child, request, outcome) || Sleep(timer));
  asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
  bool cancelled = state.cancelled() != asio::cancellation_type::none;
  if (cancelled || finished.index() == 1 || !child.reaped()) {
    child.KillGroup();
    co_await child.WaitExit();
  }
  if (cancelled) co_return Fail(ErrorCode::kCancelled, "handler cancelled");
  outcome.timed_out = finished.index() == 1;
  FillExitStatus(child.wait_status(), outcome);
  co_return outcome;
}

}  // namespace

AsioProcessRunner::AsioProcessRunner() {
  struct sigaction current {};
  if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    ::signal(SIGPIPE, SIG_IGN);
  }
}

awaitable<Result<ProcessOutcome>> AsioProcessRunner::Run(ProcessRequest request) {
  auto spawned = Start(request);
  if (!spawned) co_return std::unexpected(std::move(spawned.error()));

  Child child(co_await asio::this_coro::executor, std::move(*spawned));
  bool throw_if_cancelled = co_await asio::this_coro::throw_if_cancelled();
  co_await asio::this_coro::throw_if_cancelled(false);
  Result<ProcessOutcome> outcome = co_await Supervise(child, request);
  co_await asio::this_coro::throw_if_cancelled(throw_if_cancelled);
  co_return outcome;
}

}  // namespace skillrunner::handler
