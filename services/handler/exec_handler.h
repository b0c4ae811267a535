#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstddef>
#include <expected>
#include <string>
#include <string_view>

#include "services/common/error.h"
#include "services/handler/handler.h"
#include "services/handler/process_runner.h"

namespace skillrunner::handler {

struct ExecHandlerOptions {
  std::size_t max_output_bytes = kDefaultMaxOutputBytes;  // stdout cap
  std::size_t max_raw_bytes = 64 * 1024;                  // stdout kept in the attempt's raw
};

// `handler: exec`: runs spec.command in spec.dir with the input as one line
// of JSON on stdin, and returns the one JSON value it prints on stdout
// (surrounding whitespace allowed). The timeout is the spec's timeout or
// what is left until the invocation's deadline, whichever is shorter.
//
// Each Run records one attempt (kind "ok", or "handler" with the message as
// its one error; raw = the first max_raw_bytes of stdout) and sets the
// metrics' mode to "handler". ctx.details() gets {exit_status, stderr_tail}
// even on success, for an output_schema failure (Conclude).
// Failures are HANDLER_FAILED, with details {exit_status, stderr_tail (the
// last 4 KiB), signal?, timeout_ms?}:
//   handler exited with status 3
//   handler killed by signal 9                     (exit_status 128 + signal)
//   handler timed out after 200 ms                 (killed: signal 9, timeout_ms)
//   handler output exceeds 16777216 bytes          (killed at the cap)
//   handler output is not JSON: extra data at offset 8
//   cannot start 'scripts/x.py': No such file or directory   (exit_status 127)
// and CANCELLED "handler cancelled" when the caller is cancelled.
// Thread-safe if the runner is; `runner` must outlive this handler.
class ExecHandler : public Handler {
 public:
  explicit ExecHandler(ProcessRunner& runner, ExecHandlerOptions options = {});

  // Execute, then Conclude.
  boost::asio::awaitable<Result<boost::json::value>> Run(const HandlerSpec& spec, const boost::json::value& input,
                                                         InvocationContext& ctx);

  boost::asio::awaitable<Result<boost::json::value>> Execute(const HandlerSpec& spec, const boost::json::value& input,
                                                             InvocationContext& ctx, Attempt& attempt) override;

 private:
  // Runs the command once; fills the attempt's raw output and duration, and
  // ctx.details() with the exit_status and stderr_tail.
  boost::asio::awaitable<Result<boost::json::value>> RunCommand(const HandlerSpec& spec,
                                                                const boost::json::value& input,
                                                                std::chrono::milliseconds timeout,
                                                                InvocationContext& ctx, Attempt& attempt);

  ProcessRunner& runner_;
  ExecHandlerOptions options_;
};

// The time a child may run: `timeout`, or what is left until the
// invocation's deadline when that is shorter (never negative).
std::chrono::milliseconds TimeoutWithin(std::chrono::milliseconds timeout, const InvocationContext& ctx);

// What a finished child means: the one JSON value it printed, or
// HANDLER_FAILED "<who> exited with status 3" (timed out after N ms, killed
// by signal N, output exceeds N bytes, output is not JSON: ...) with details
// {exit_status, stderr_tail, signal?, timeout_ms?}.
Result<boost::json::value> InterpretOutcome(const ProcessOutcome& outcome, std::chrono::milliseconds timeout,
                                            std::size_t max_output_bytes, std::string_view who);

// A child that could not start (ProcessRunner's HANDLER_FAILED), with
// details {exit_status: 127, stderr_tail: ""}.
Error CannotStart(Error error);

// "<who> timed out after 0 ms": the deadline passed before the start.
Error TimedOutBeforeStart(std::string_view who);

// The one JSON value in `text` (surrounding whitespace allowed), or the
// parser's complaint (HANDLER_FAILED): "extra data at offset 8".
Result<boost::json::value> ParseSingleJsonValue(std::string_view text);

}  // namespace skillrunner::handler
