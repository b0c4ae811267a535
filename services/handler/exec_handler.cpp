#include "services/handler/exec_handler.h"

#include <algorithm>
#include <boost/json/parser.hpp>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <string>
#include <utility>

#include "services/common/utf8.h"

namespace skillrunner::handler {
namespace {

namespace json = boost::json;
using std::chrono::milliseconds;

// Exit status reported when the program could not be started at all: what a
// shell reports for "command not found".
constexpr int kCannotStartStatus = 127;

// The stderr tail may begin inside a multi-byte character: skip its rest.
std::string_view SkipPartialCharacter(std::string_view tail) {
  std::size_t skip = 0;
  while (skip < 3 && skip < tail.size() && (static_cast<unsigned char>(tail[skip]) & 0xC0) == 0x80) {
    ++skip;
  }
  return tail.substr(skip);
}

json::object Details(const ProcessOutcome& outcome) {
  json::object details;
  details["exit_status"] = outcome.exit_status;
  details["stderr_tail"] = SanitizeUtf8(SkipPartialCharacter(outcome.stderr_tail));
  if (outcome.signal != 0) details["signal"] = outcome.signal;
  return details;
}

Error HandlerFailed(std::string message, json::object details) {
  return Error{ErrorCode::kHandlerFailed, std::move(message), {}, std::move(details)};
}

}  // namespace

milliseconds TimeoutWithin(milliseconds timeout, const InvocationContext& ctx) {
  auto left = std::chrono::duration_cast<milliseconds>(ctx.deadline() - ctx.clock().Now());
  return std::max(milliseconds(0), std::min(timeout, left));
}

Result<json::value> InterpretOutcome(const ProcessOutcome& outcome, milliseconds timeout, std::size_t max_output_bytes,
                                     std::string_view who) {
  json::object details = Details(outcome);
  const std::string name(who);
  if (outcome.timed_out) {
    details["timeout_ms"] = timeout.count();
    return std::unexpected(
        HandlerFailed(name + " timed out after " + std::to_string(timeout.count()) + " ms", std::move(details)));
  }
  if (outcome.output_truncated) {
    return std::unexpected(
        HandlerFailed(name + " output exceeds " + std::to_string(max_output_bytes) + " bytes", std::move(details)));
  }
  if (outcome.signal != 0) {
    return std::unexpected(
        HandlerFailed(name + " killed by signal " + std::to_string(outcome.signal), std::move(details)));
  }
  if (outcome.exit_status != 0) {
    return std::unexpected(
        HandlerFailed(name + " exited with status " + std::to_string(outcome.exit_status), std::move(details)));
  }
  auto value = ParseSingleJsonValue(outcome.stdout_data);
  if (!value)
    return std::unexpected(HandlerFailed(name + " output is not JSON: " + value.error().message, std::move(details)));
  return std::move(*value);
}

Error CannotStart(Error error) {
  if (error.code == ErrorCode::kHandlerFailed && error.details.empty()) {
    error.details["exit_status"] = kCannotStartStatus;
    error.details["stderr_tail"] = "";
  }
  return error;
}

Error TimedOutBeforeStart(std::string_view who) {
  return HandlerFailed(std::string(who) + " timed out after 0 ms",
                       json::object{{"exit_status", nullptr}, {"stderr_tail", ""}, {"timeout_ms", 0}});
}

Result<json::value> ParseSingleJsonValue(std::string_view text) {
  json::parse_options options;
  options.max_depth = 256;
  json::parser parser(json::storage_ptr(), options);
  boost::system::error_code ec;
  std::size_t offset = parser.write(text.data(), text.size(), ec);
  if (ec) return Fail(ErrorCode::kHandlerFailed, ec.message() + " at offset " + std::to_string(offset));
  return parser.release();
}

ExecHandler::ExecHandler(ProcessRunner& runner, ExecHandlerOptions options) : runner_(runner), options_(options) {}

boost::asio::awaitable<Result<json::value>> ExecHandler::Run(const HandlerSpec& spec, const json::value& input,
                                                             InvocationContext& ctx) {
  Attempt attempt;
  Result<json::value> result = co_await Execute(spec, input, ctx, attempt);
  co_return Conclude(spec, std::move(result), std::move(attempt), ctx);
}

boost::asio::awaitable<Result<json::value>> ExecHandler::Execute(const HandlerSpec& spec, const json::value& input,
                                                                 InvocationContext& ctx, Attempt& attempt) {
  ctx.metrics().mode = RunMode::kHandler;
  milliseconds timeout = TimeoutWithin(spec.timeout, ctx);
  if (timeout <= milliseconds(0)) co_return std::unexpected(TimedOutBeforeStart("handler"));
  co_return co_await RunCommand(spec, input, timeout, ctx, attempt);
}

boost::asio::awaitable<Result<json::value>> ExecHandler::RunCommand(const HandlerSpec& spec, const json::value& input,
                                                                    milliseconds timeout, InvocationContext& ctx,
                                                                    Attempt& attempt) {
  auto started_at = ctx.clock().Now();
  // A named request: g++ 12 mis-destroys aggregate temporaries that are
  // passed by value into a coroutine inside a co_await expression.
  ProcessRequest request{
      .argv = spec.command,
      .working_dir = spec.dir,
      .stdin_data = json::serialize(input) + "\n",
      .timeout = timeout,
      .max_output_bytes = options_.max_output_bytes,
  };
  Result<ProcessOutcome> outcome = co_await runner_.Run(std::move(request));
  const RequestTiming timing = ctx.TimeRequest(started_at, ctx.clock().Now());
  attempt.waited_ms = timing.waited_ms;
  attempt.duration_ms = timing.duration_ms;
  if (!outcome) co_return std::unexpected(CannotStart(std::move(outcome.error())));
  std::string_view raw = outcome->stdout_data;
  attempt.raw = SanitizeUtf8(raw.substr(0, options_.max_raw_bytes));
  // For the runner, should the output then fail the skill's output_schema.
  ctx.details() = Details(*outcome);
  co_return InterpretOutcome(*outcome, timeout, options_.max_output_bytes, "handler");
}

}  // namespace skillrunner::handler
