#include "services/handler/exec_handler.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cerrno>
#include <chrono>
#include <optional>
#include <thread>

#include "tests/services/handler/handler_test_util.h"
#include "tests/support/run_awaitable.h"

namespace skillrunner::handler {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;
using test_support::RunAwaitable;
using test_util::TempDir;

class ExecHandlerTest : public ::testing::Test {
 protected:
  HandlerSpec MakeSkill(std::vector<std::string> command, milliseconds timeout = milliseconds(20000)) {
    HandlerSpec skill;
    skill.skill_id = "exec_skill";
    skill.handler = "exec";
    skill.command = std::move(command);
    skill.dir = dir_.path();
    skill.timeout = timeout;
    return skill;
  }

  InvocationContext MakeContext(milliseconds left = milliseconds(60000)) {
    return InvocationContext("exec_skill", {}, RealClock().Now() + left, RealClock());
  }

  Result<json::value> Run(const HandlerSpec& skill, const json::value& input, InvocationContext& ctx) {
    return RunAwaitable(handler_.Run(skill, input, ctx));
  }

  Result<json::value> Run(const HandlerSpec& skill, const json::value& input) {
    ctx_.emplace(MakeContext());
    return Run(skill, input, *ctx_);
  }

  // A /bin/sh script in the skill folder.
  void Script(const std::string& name, const std::string& body) { dir_.Write(name, "#!/bin/sh\n" + body, true); }

  TempDir dir_;
  AsioProcessRunner runner_;
  ExecHandler handler_{runner_};
  std::optional<InvocationContext> ctx_;
};

TEST_F(ExecHandlerTest, InputGoesInAsJsonAndTheOutputComesBack) {
  // Reads its input from stdin and a file relative to its working directory.
  dir_.Write("greeting.txt", "Hello");
  dir_.Write("greet.py",
             "#!/usr/bin/env python3\n"
             "import json, sys\n"
             "request = json.load(sys.stdin)\n"
             "prefix = open('greeting.txt').read()\n"
             "print(json.dumps({'text': prefix + ', ' + request['name'] + '!',\n"
             "                  'n': request['n'] * 2}))\n",
             true);
  auto result = Run(MakeSkill({"./greet.py"}), json::parse(R"({"name": "Ada", "n": 21})"));
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(*result, json::parse(R"({"text": "Hello, Ada!", "n": 42})"));
}

TEST_F(ExecHandlerTest, RecordsOneOkAttemptWithTheRawOutput) {
  Script("ok.sh", "cat >/dev/null\nsleep 0.2\necho '  {\"a\": [1, 2]}  '\n");
  auto result = Run(MakeSkill({"./ok.sh"}), json::object{});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  ASSERT_EQ(ctx_->attempts().size(), 1u);
  const Attempt& attempt = ctx_->attempts()[0];
  EXPECT_EQ(attempt.n, 1);
  EXPECT_EQ(attempt.kind, AttemptKind::kOk);
  EXPECT_EQ(attempt.raw, "  {\"a\": [1, 2]}  \n");
  EXPECT_TRUE(attempt.errors.empty());
  EXPECT_GE(attempt.duration_ms, 200);  // the script's own time is the attempt's
  EXPECT_EQ(ctx_->metrics().mode, RunMode::kHandler);
  EXPECT_EQ(ctx_->metrics().attempts, 1);
}

TEST_F(ExecHandlerTest, SuccessLeavesExitStatusAndStderrTailForTheRunner) {
  Script("warn.sh", "echo 'deprecated flag' >&2\necho '{\"n\": 1}'\n");
  auto result = Run(MakeSkill({"./warn.sh"}), json::object{});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(json::value(ctx_->details()), json::parse(R"({"exit_status": 0, "stderr_tail": "deprecated flag\n"})"));
}

TEST_F(ExecHandlerTest, NonZeroExitIsHandlerFailedWithTheStderrTail) {
  Script("fail.sh", "echo '{\"partial\": true}'\necho 'no API key configured' >&2\nexit 3\n");
  auto result = Run(MakeSkill({"./fail.sh"}), json::object{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kHandlerFailed);
  EXPECT_EQ(result.error().message, "handler exited with status 3");
  EXPECT_EQ(json::value(result.error().details),
            json::parse(R"({"exit_status": 3, "stderr_tail": "no API key configured\n"})"));
  ASSERT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kHandler);
  EXPECT_EQ(ctx_->attempts()[0].raw, "{\"partial\": true}\n");
  EXPECT_EQ(ctx_->attempts()[0].errors, (std::vector<FieldError>{{"", "handler exited with status 3"}}));
  EXPECT_EQ(ctx_->metrics().mode, RunMode::kHandler);
}

TEST_F(ExecHandlerTest, DeathBySignalNamesTheSignal) {
  Script("crash.sh", "echo dying >&2\nkill -9 $$\n");
  auto result = Run(MakeSkill({"./crash.sh"}), json::object{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "handler killed by signal 9");
  EXPECT_EQ(json::value(result.error().details),
            json::parse(R"({"exit_status": 137, "stderr_tail": "dying\n", "signal": 9})"));
}

TEST_F(ExecHandlerTest, TimeoutKillsTheHandlerAndLeavesNoProcess) {
  Script("hang.sh", "echo $$ > hang.pid\necho 'started' >&2\nsleep 30\n");
  auto started_at = std::chrono::steady_clock::now();
  auto result = Run(MakeSkill({"./hang.sh"}, milliseconds(200)), json::object{});
  auto elapsed = std::chrono::steady_clock::now() - started_at;

  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kHandlerFailed);
  EXPECT_EQ(result.error().message, "handler timed out after 200 ms");
  EXPECT_EQ(json::value(result.error().details),
            json::parse(R"({"exit_status": 137, "stderr_tail": "started\n", "signal": 9,
                            "timeout_ms": 200})"));
  EXPECT_GE(elapsed, milliseconds(200));
  EXPECT_LT(elapsed, std::chrono::seconds(10));
  pid_t pid = test_util::ReadPid(dir_, "hang.pid");
  errno = 0;
  EXPECT_EQ(::kill(pid, 0), -1);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kHandler);
}

TEST_F(ExecHandlerTest, TheInvocationDeadlineShortensTheTimeout) {
  Script("hang.sh", "sleep 30\n");
  auto ctx = MakeContext(milliseconds(300));
  auto result = Run(MakeSkill({"./hang.sh"}, milliseconds(60000)), json::object{}, ctx);
  ASSERT_FALSE(result.has_value());
  // What was left of the 300 ms when the handler started.
  const std::string& message = result.error().message;
  ASSERT_TRUE(message.starts_with("handler timed out after ")) << message;
  int timeout_ms = std::stoi(message.substr(std::string("handler timed out after ").size()));
  EXPECT_GT(timeout_ms, 0);
  EXPECT_LE(timeout_ms, 300);
  EXPECT_EQ(message, "handler timed out after " + std::to_string(timeout_ms) + " ms");
}

TEST_F(ExecHandlerTest, APassedDeadlineFailsWithoutStartingTheHandler) {
  Script("touch.sh", "touch started\necho '{}'\n");
  auto ctx = MakeContext(milliseconds(-1));
  auto result = Run(MakeSkill({"./touch.sh"}), json::object{}, ctx);
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "handler timed out after 0 ms");
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "started"));
  EXPECT_EQ(ctx.attempts().size(), 1u);
}

TEST_F(ExecHandlerTest, AHandlerThatIgnoresStdinAndFloodsStderrStillAnswers) {
  dir_.Write("noisy.py",
             "#!/usr/bin/env python3\n"
             "import sys\n"
             "for i in range(200000): sys.stderr.write(f'progress {i}\\n')\n"
             "print('{\"ok\": true}')\n",
             true);
  json::object input{{"blob", std::string(4 * 1024 * 1024, 'x')}};
  auto result = Run(MakeSkill({"./noisy.py"}), input);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(*result, json::parse(R"({"ok": true})"));
}

TEST_F(ExecHandlerTest, OutputThatIsNotJsonNamesTheParserError) {
  Script("prose.sh", "echo 'Here is your answer: 42'\n");
  auto result = Run(MakeSkill({"./prose.sh"}), json::object{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kHandlerFailed);
  EXPECT_EQ(result.error().message, "handler output is not JSON: syntax error at offset 0");
  EXPECT_EQ(json::value(result.error().details), json::parse(R"({"exit_status": 0, "stderr_tail": ""})"));
  EXPECT_EQ(ctx_->attempts()[0].raw, "Here is your answer: 42\n");
}

TEST_F(ExecHandlerTest, TwoJsonValuesAreExtraData) {
  Script("two.sh", "printf '{\"a\":1} {\"b\":2}'\n");
  auto result = Run(MakeSkill({"./two.sh"}), json::object{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "handler output is not JSON: extra data at offset 8");
}

TEST_F(ExecHandlerTest, TrailingGarbageIsExtraData) {
  Script("garbage.sh", "printf '[1, 2]\\nDone.\\n'\n");
  auto result = Run(MakeSkill({"./garbage.sh"}), json::object{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "handler output is not JSON: extra data at offset 7");
}

TEST_F(ExecHandlerTest, EmptyOutputIsIncompleteJson) {
  Script("silent.sh", "exit 0\n");
  auto result = Run(MakeSkill({"./silent.sh"}), json::object{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "handler output is not JSON: incomplete JSON at offset 0");
}

TEST_F(ExecHandlerTest, TruncatedJsonIsIncomplete) {
  Script("cut.sh", "printf '{\"a\": [1, 2'\n");
  auto result = Run(MakeSkill({"./cut.sh"}), json::object{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "handler output is not JSON: incomplete JSON at offset 11");
}

TEST_F(ExecHandlerTest, MissingProgramCannotStart) {
  auto result = Run(MakeSkill({"scripts/missing.py"}), json::object{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kHandlerFailed);
  EXPECT_EQ(result.error().message, "cannot start 'scripts/missing.py': No such file or directory");
  EXPECT_EQ(json::value(result.error().details), json::parse(R"({"exit_status": 127, "stderr_tail": ""})"));
  ASSERT_EQ(ctx_->attempts().size(), 1u);
  EXPECT_EQ(ctx_->attempts()[0].kind, AttemptKind::kHandler);
}

TEST_F(ExecHandlerTest, RelativeProgramIsFoundInTheSkillFolder) {
  // The test process runs elsewhere; the path is relative to the skill folder.
  ASSERT_NE(std::filesystem::current_path(), dir_.path());
  Script("scripts/answer.sh", "echo '{\"from\": \"skill folder\"}'\n");
  auto result = Run(MakeSkill({"scripts/answer.sh"}), json::object{});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(*result, json::parse(R"({"from": "skill folder"})"));
}

TEST_F(ExecHandlerTest, ProgramWithoutASlashIsLookedUpOnPath) {
  json::value input = json::parse(R"({"text": "héllo", "list": [1, 2.5, null, true]})");
  auto result = Run(MakeSkill({"cat"}), input);
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(*result, input);
}

TEST_F(ExecHandlerTest, ArgumentsArePassedAsGiven) {
  auto result = Run(MakeSkill({"sh", "-c", "printf '{\"args\": \"%s %s\"}' \"$0\" \"$1\"", "first arg", "second"}),
                    json::object{});
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_EQ(*result, json::parse(R"({"args": "first arg second"})"));
}

TEST_F(ExecHandlerTest, OutputOverTheCapFails) {
  ExecHandler capped(runner_, ExecHandlerOptions{.max_output_bytes = 1000, .max_raw_bytes = 100});
  auto ctx = MakeContext();
  auto result = RunAwaitable(capped.Run(MakeSkill({"yes"}), json::object{}, ctx));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().code, ErrorCode::kHandlerFailed);
  EXPECT_EQ(result.error().message, "handler output exceeds 1000 bytes");
  EXPECT_EQ(ctx.attempts()[0].raw.size(), 100u);
}

TEST_F(ExecHandlerTest, DefaultOutputCapIs16MiB) {
  auto result = Run(MakeSkill({"yes"}), json::object{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "handler output exceeds 16777216 bytes");
  EXPECT_EQ(ctx_->attempts()[0].raw.size(), 64u * 1024);
}

TEST_F(ExecHandlerTest, InvalidUtf8InStderrIsReplaced) {
  Script("bytes.sh", "printf 'bad \\377 byte' >&2\nexit 1\n");
  auto result = Run(MakeSkill({"./bytes.sh"}), json::object{});
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().details.at("stderr_tail"), "bad \xEF\xBF\xBD byte");
}

// Many invocations at once on one io_context (one thread): each gets its
// own answer.
boost::asio::awaitable<void> InvokeOne(ExecHandler& handler, const HandlerSpec& skill, int i,
                                       std::vector<Result<json::value>>& results) {
  InvocationContext ctx("exec_skill", {}, RealClock().Now() + std::chrono::seconds(60), RealClock());
  json::value input = {{"i", i}};  // g++ 12: no braced temporaries in a co_await
  results[i] = co_await handler.Run(skill, input, ctx);
}

TEST_F(ExecHandlerTest, ManyConcurrentInvocationsAllAnswerCorrectly) {
  Script("slow_echo.sh", "sleep 0.2\ncat\n");
  HandlerSpec cat = MakeSkill({"cat"});
  HandlerSpec slow = MakeSkill({"./slow_echo.sh"});
  constexpr int kCount = 40;
  std::vector<Result<json::value>> results(kCount);
  boost::asio::io_context io;
  for (int i = 0; i < kCount; ++i) {
    boost::asio::co_spawn(io, InvokeOne(handler_, i % 2 ? slow : cat, i, results), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
  }
  auto started_at = std::chrono::steady_clock::now();
  io.run();
  // 20 sleeps of 200 ms ran side by side, not one after another.
  EXPECT_LT(std::chrono::steady_clock::now() - started_at, std::chrono::seconds(3));
  for (int i = 0; i < kCount; ++i) {
    ASSERT_TRUE(results[i].has_value()) << i << ": " << results[i].error().message;
    EXPECT_EQ(*results[i], (json::object{{"i", i}})) << i;
  }
}

TEST_F(ExecHandlerTest, ConcurrentInvocationsOnSeveralThreadsAllAnswerCorrectly) {
  Script("slow_echo.sh", "sleep 0.1\ncat\n");
  HandlerSpec slow = MakeSkill({"./slow_echo.sh"});
  constexpr int kCount = 40;
  std::vector<Result<json::value>> results(kCount);
  boost::asio::io_context io;
  for (int i = 0; i < kCount; ++i) {
    boost::asio::co_spawn(io, InvokeOne(handler_, slow, i, results), [](std::exception_ptr e) {
      if (e) std::rethrow_exception(e);
    });
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([&io] { io.run(); });
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kCount; ++i) {
    ASSERT_TRUE(results[i].has_value()) << i << ": " << results[i].error().message;
    EXPECT_EQ(*results[i], (json::object{{"i", i}})) << i;
  }
}

TEST(ParseSingleJsonValueTest, AcceptsSurroundingWhitespace) {
  auto value = ParseSingleJsonValue("\n  {\"a\": 1}\r\n\t ");
  ASSERT_TRUE(value.has_value()) << value.error().message;
  EXPECT_EQ(*value, json::parse(R"({"a": 1})"));
}

TEST(ParseSingleJsonValueTest, NamesTheErrorAndItsOffset) {
  EXPECT_EQ(ParseSingleJsonValue("{\"a\" 1}").error().code, ErrorCode::kHandlerFailed);
  EXPECT_EQ(ParseSingleJsonValue("{\"a\" 1}").error().message, "syntax error at offset 5");
  EXPECT_EQ(ParseSingleJsonValue("1 2").error().message, "extra data at offset 2");
  EXPECT_EQ(ParseSingleJsonValue("   ").error().message, "incomplete JSON at offset 3");
}

}  // namespace
}  // namespace skillrunner::handler
