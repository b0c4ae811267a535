#include "services/handler/builtin_handlers.h"

#include <array>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <string>
#include <utility>

#include "services/handler/exec_handler.h"

namespace skillrunner::handler {
namespace {

namespace json = boost::json;

constexpr std::string_view kExec = "exec";

Result<json::value> Echo(const json::value& input) { return input; }

struct NamedHandler {
  std::string_view name;
  BuiltinHandler handler;
};

constexpr std::array kBuiltins = {
    NamedHandler{"echo", &Echo},
};

// Runs a built-in as one attempt, the way exec runs one.
Result<json::value> RunBuiltin(BuiltinHandler handler, const json::value& input, InvocationContext& ctx,
                               Attempt& attempt) {
  auto started_at = ctx.clock().Now();
  Result<json::value> result = handler(input);
  const RequestTiming timing = ctx.TimeRequest(started_at, ctx.clock().Now());
  attempt.waited_ms = timing.waited_ms;
  attempt.duration_ms = timing.duration_ms;
  if (result) attempt.raw = json::serialize(*result);
  return result;
}

}  // namespace

BuiltinHandler FindBuiltinHandler(std::string_view name) {
  for (const NamedHandler& builtin : kBuiltins) {
    if (builtin.name == name) return builtin.handler;
  }
  return nullptr;
}

bool IsKnownHandler(std::string_view name) { return name == kExec || FindBuiltinHandler(name) != nullptr; }

HandlerService::HandlerService(ProcessRunner& runner)
    : owned_exec_(std::make_unique<ExecHandler>(runner)), exec_(*owned_exec_) {}

HandlerService::HandlerService(Handler& exec) : exec_(exec) {}

HandlerService::~HandlerService() = default;

boost::asio::awaitable<Result<json::value>> HandlerService::Run(const HandlerSpec& spec, const json::value& input,
                                                                InvocationContext& ctx) {
  Attempt attempt;
  Result<json::value> result;
  if (spec.handler == kExec) {
    result = co_await exec_.Execute(spec, input, ctx, attempt);
  } else if (BuiltinHandler builtin = FindBuiltinHandler(spec.handler)) {
    ctx.metrics().mode = RunMode::kHandler;
    result = RunBuiltin(builtin, input, ctx, attempt);
  } else {
    ctx.metrics().mode = RunMode::kHandler;
    co_return Fail(ErrorCode::kHandlerFailed, "unknown handler '" + spec.handler + "'");
  }
  co_return Conclude(spec, std::move(result), std::move(attempt), ctx);
}

}  // namespace skillrunner::handler
