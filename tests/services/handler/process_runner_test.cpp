#include "services/handler/process_runner.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_future.hpp>
#include <cerrno>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <thread>

#include "tests/services/handler/handler_test_util.h"
#include "tests/support/run_awaitable.h"

namespace skillrunner::handler {
namespace {

using std::chrono::milliseconds;
using test_support::RunAwaitable;
using test_util::TempDir;

class ProcessRunnerTest : public ::testing::Test {
 protected:
  ProcessRequest Request(std::vector<std::string> argv, std::string stdin_data = "") {
    return ProcessRequest{.argv = std::move(argv),
                          .working_dir = dir_.path(),
                          .stdin_data = std::move(stdin_data),
                          .timeout = milliseconds(20000)};
  }

  Result<ProcessOutcome> Run(ProcessRequest request) { return RunAwaitable(runner_.Run(std::move(request))); }

  TempDir dir_;
  AsioProcessRunner runner_;
};

TEST_F(ProcessRunnerTest, ReportsExitStatusStdoutAndStderr) {
  auto outcome = Run(Request({"sh", "-c", "cat; echo oops >&2; exit 3"}, "from stdin"));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
  EXPECT_EQ(outcome->exit_status, 3);
  EXPECT_EQ(outcome->signal, 0);
  EXPECT_FALSE(outcome->timed_out);
  EXPECT_FALSE(outcome->output_truncated);
  EXPECT_EQ(outcome->stdout_data, "from stdin");
  EXPECT_EQ(outcome->stderr_tail, "oops\n");
}

TEST_F(ProcessRunnerTest, RunsInTheWorkingDirectory) {
  dir_.Write("here.txt", "found me");
  auto outcome = Run(Request({"cat", "here.txt"}));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
  EXPECT_EQ(outcome->stdout_data, "found me");
}

TEST_F(ProcessRunnerTest, StderrTailKeepsTheLast4KiB) {
  // 100,000 lines "line N" on stderr; the tail ends with the last one.
  auto outcome =
      Run(Request({"python3", "-c", "import sys\nfor i in range(100000): sys.stderr.write(f'line {i}\\n')"}));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
  EXPECT_EQ(outcome->exit_status, 0);
  EXPECT_EQ(outcome->stderr_tail.size(), kStderrTailBytes);
  EXPECT_TRUE(outcome->stderr_tail.ends_with("line 99998\nline 99999\n"));
}

TEST_F(ProcessRunnerTest, ChildThatNeverReadsStdinAndFloodsStderrDoesNotBlock) {
  // 8 MiB for stdin (far beyond a pipe's buffer) that the child never reads,
  // while it writes 2 MiB to stderr before printing its answer.
  std::string big_input(8 * 1024 * 1024, 'x');
  auto outcome = Run(Request(
      {"python3", "-c", "import sys\nsys.stderr.write('e' * (2 * 1024 * 1024) + 'END')\nprint('{}')"}, big_input));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
  EXPECT_EQ(outcome->exit_status, 0);
  EXPECT_FALSE(outcome->timed_out);
  EXPECT_EQ(outcome->stdout_data, "{}\n");
  EXPECT_TRUE(outcome->stderr_tail.ends_with("eeeEND"));
}

TEST_F(ProcessRunnerTest, TimeoutKillsTheChildAndItsProcessGroup) {
  dir_.Write("slow.sh",
             "#!/bin/sh\n"
             "echo $$ > child.pid\n"
             "sleep 30 &\n"
             "echo $! > grandchild.pid\n"
             "wait\n",
             true);
  auto request = Request({"./slow.sh"});
  request.timeout = milliseconds(200);
  auto started_at = std::chrono::steady_clock::now();
  auto outcome = Run(std::move(request));
  auto elapsed = std::chrono::steady_clock::now() - started_at;

  ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
  EXPECT_TRUE(outcome->timed_out);
  EXPECT_EQ(outcome->signal, SIGKILL);
  EXPECT_LT(elapsed, std::chrono::seconds(10));
  pid_t child = test_util::ReadPid(dir_, "child.pid");
  errno = 0;
  EXPECT_EQ(::kill(child, 0), -1);  // reaped: no zombie left behind
  EXPECT_EQ(errno, ESRCH);
  EXPECT_TRUE(test_util::StopsRunning(test_util::ReadPid(dir_, "grandchild.pid")));
}

TEST_F(ProcessRunnerTest, StragglersDoNotOutliveTheChild) {
  // The child exits at once, leaving a background process that holds stdout
  // open; Run returns without waiting for it, and it is killed.
  dir_.Write("forks.sh",
             "#!/bin/sh\n"
             "sleep 30 &\n"
             "echo $! > straggler.pid\n"
             "echo '{\"done\": true}'\n",
             true);
  auto started_at = std::chrono::steady_clock::now();
  auto outcome = Run(Request({"./forks.sh"}));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
  EXPECT_LT(std::chrono::steady_clock::now() - started_at, std::chrono::seconds(10));
  EXPECT_FALSE(outcome->timed_out);
  EXPECT_EQ(outcome->exit_status, 0);
  EXPECT_EQ(outcome->stdout_data, "{\"done\": true}\n");
  EXPECT_TRUE(test_util::StopsRunning(test_util::ReadPid(dir_, "straggler.pid")));
}

TEST_F(ProcessRunnerTest, StdoutOverTheCapIsTruncatedAndTheChildKilled) {
  auto request = Request({"yes"});
  request.max_output_bytes = 1000;
  auto outcome = Run(std::move(request));
  ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
  EXPECT_TRUE(outcome->output_truncated);
  EXPECT_FALSE(outcome->timed_out);
  EXPECT_EQ(outcome->signal, SIGKILL);
  std::string expected;
  for (int i = 0; i < 500; ++i) expected += "y\n";
  EXPECT_EQ(outcome->stdout_data, expected);
}

TEST_F(ProcessRunnerTest, CancellationKillsAndReapsTheChild) {
  dir_.Write("hang.sh", "#!/bin/sh\necho $$ > child.pid\nsleep 30\n", true);
  boost::asio::io_context io;
  boost::asio::cancellation_signal cancel;
  std::future<Result<ProcessOutcome>> outcome =
      boost::asio::co_spawn(io, runner_.Run(Request({"./hang.sh"})),
                            boost::asio::bind_cancellation_slot(cancel.slot(), boost::asio::use_future));
  // Cancel once the child is up (it has written its pid).
  boost::asio::steady_timer poll(io);
  std::function<void(boost::system::error_code)> check = [&](boost::system::error_code) {
    if (std::filesystem::exists(dir_.path() / "child.pid") && !dir_.Read("child.pid").empty()) {
      cancel.emit(boost::asio::cancellation_type::terminal);
      return;
    }
    poll.expires_after(milliseconds(5));
    poll.async_wait(check);
  };
  check({});
  auto started_at = std::chrono::steady_clock::now();
  io.run();
  EXPECT_LT(std::chrono::steady_clock::now() - started_at, std::chrono::seconds(10));

  auto result = outcome.get();
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kCancelled);
  EXPECT_EQ(result.error().message, "handler cancelled");
  errno = 0;
  EXPECT_EQ(::kill(test_util::ReadPid(dir_, "child.pid"), 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

TEST_F(ProcessRunnerTest, MissingProgramCannotStart) {
  auto outcome = Run(Request({"./no-such-script.sh"}));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::kHandlerFailed);
  EXPECT_EQ(outcome.error().message, "cannot start './no-such-script.sh': No such file or directory");
}

TEST_F(ProcessRunnerTest, ProgramNotOnPathCannotStart) {
  auto outcome = Run(Request({"skillrunner-no-such-program"}));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().message, "cannot start 'skillrunner-no-such-program': No such file or directory");
}

TEST_F(ProcessRunnerTest, NonExecutableFileCannotStart) {
  dir_.Write("plain.sh", "#!/bin/sh\necho hi\n");
  auto outcome = Run(Request({"./plain.sh"}));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().message, "cannot start './plain.sh': Permission denied");
}

TEST_F(ProcessRunnerTest, MissingWorkingDirectoryCannotStart) {
  auto request = Request({"cat"});
  request.working_dir = dir_.path() / "gone";
  auto outcome = Run(std::move(request));
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().message, "cannot start 'cat': no working directory " + (dir_.path() / "gone").string());
}

}  // namespace
}  // namespace skillrunner::handler

namespace skillrunner::handler {
namespace {

// What the lanes of the test below share.
struct Tally {
  std::mutex mutex;
  int started = 0;
  int killed = 0;
  int failed = 0;
};

// Runs children one after the other until `runs` have started across every lane.
boost::asio::awaitable<void> Lane(AsioProcessRunner& runner, Tally& tally, int runs) {
  for (;;) {
    {
      std::lock_guard lock(tally.mutex);
      if (tally.started == runs) co_return;
      ++tally.started;
    }
    ProcessRequest request;
    request.argv = {"/bin/sh", "-c", "exit 0"};
    request.stdin_data = "{}";
    auto outcome = co_await runner.Run(std::move(request));
    std::lock_guard lock(tally.mutex);
    if (!outcome) {
      ++tally.failed;
    } else if (outcome->signal != 0) {
      ++tally.killed;
    }
  }
}

// Children spawned, waited for and closed on two threads of one io_context at once, as an eval runs
// its exec handlers: none may be killed before it exits. A pidfd closed on one thread while a child
// spawning on the other still held a copy left its epoll registration behind, and its readiness
// later woke the wait of a newer child's pidfd, which was then killed as a "straggler" (signal 9).
TEST(ProcessRunnerThreadsTest, ChildrenRunOnTwoThreadsAtOnceAllExitOnTheirOwn) {
  AsioProcessRunner runner;
  boost::asio::io_context io;
  constexpr int kRuns = 1000, kInFlight = 16;
  Tally tally;
  for (int i = 0; i < kInFlight; ++i) boost::asio::co_spawn(io, Lane(runner, tally, kRuns), boost::asio::detached);
  std::thread second([&io] { io.run(); });
  io.run();
  second.join();
  EXPECT_EQ(tally.started, kRuns);
  EXPECT_EQ(tally.failed, 0);
  EXPECT_EQ(tally.killed, 0) << tally.killed << " of " << kRuns << " children killed before they exited";
}

}  // namespace
}  // namespace skillrunner::handler
