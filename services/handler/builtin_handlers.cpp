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

Result<json::value> Echo(const Skill&, const json::value& input) { return input; }

struct NamedHandler {
  std::string_view name;
  BuiltinHandler handler;
};

constexpr std::array kBuiltins = {
    NamedHandler{"echo", &Echo},
};

// Runs a built-in as one attempt, the way exec records one.
Result<json::value> RunBuiltin(BuiltinHandler handler, const Skill& skill, const json::value& input,
                               InvocationContext& ctx) {
  auto started_at = std::chrono::steady_clock::now();
  Result<json::value> result = handler(skill, input);
  Attempt attempt;
  attempt.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - started_at)
                            .count();
  if (result) {
    attempt.kind = "ok";
    attempt.raw = json::serialize(*result);
  } else {
    attempt.kind = "handler";
    attempt.errors.push_back(FieldError{"", result.error().message});
  }
  ctx.AddAttempt(std::move(attempt));
  return result;
}

}  // namespace

BuiltinHandler FindBuiltinHandler(std::string_view name) {
  for (const NamedHandler& builtin : kBuiltins) {
    if (builtin.name == name) return builtin.handler;
  }
  return nullptr;
}

bool IsKnownHandler(std::string_view name) {
  return name == kExec || FindBuiltinHandler(name) != nullptr;
}

HandlerService::HandlerService(ProcessRunner& runner)
    : owned_exec_(std::make_unique<ExecHandler>(runner)), exec_(*owned_exec_) {}

HandlerService::HandlerService(SkillService& exec) : exec_(exec) {}

HandlerService::~HandlerService() = default;

boost::asio::awaitable<Result<json::value>> HandlerService::Run(const Skill& skill,
                                                                const json::value& input,
                                                                InvocationContext& ctx) {
  if (skill.handler == kExec) co_return co_await exec_.Run(skill, input, ctx);
  ctx.metrics().mode = "handler";
  if (BuiltinHandler builtin = FindBuiltinHandler(skill.handler)) {
    co_return RunBuiltin(builtin, skill, input, ctx);
  }
  co_return Fail(ErrorCode::kHandlerFailed, "unknown handler '" + skill.handler + "'");
}

}  // namespace skillrunner::handler
