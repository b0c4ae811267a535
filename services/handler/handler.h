#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "services/common/error.h"
#include "services/common/invocation.h"

namespace skillrunner::handler {

// A handler skill as the handlers need it, made once at load by the core.
struct HandlerSpec {
  std::string skill_id;
  std::string handler;               // "exec" or a built-in name
  std::vector<std::string> command;  // exec: argv
  std::filesystem::path dir;         // exec: the working directory (the skill folder)
  std::chrono::milliseconds timeout{60000};
  // The skill's output_schema as a check (the core compiles it): every
  // failure by pointer. Checked here so that the attempt is recorded once,
  // with its final kind. Empty: not checked.
  std::function<std::vector<FieldError>(const boost::json::value&)> check_output;
};

// Runs one handler once. Fills `attempt` (raw output, duration); the caller
// decides its kind and records it. Implementations are thread-safe.
class Handler {
 public:
  virtual ~Handler() = default;
  virtual boost::asio::awaitable<Result<boost::json::value>> Execute(const HandlerSpec& spec,
                                                                     const boost::json::value& input,
                                                                     InvocationContext& ctx, Attempt& attempt) = 0;
};

// Ends a handler run: checks the output with spec.check_output
// (HANDLER_FAILED "handler output does not match the output_schema of skill
// \"<id>\" (N errors)" with every error and ctx.details()), then records the
// attempt (kind ok, or handler with the failure as its errors).
Result<boost::json::value> Conclude(const HandlerSpec& spec, Result<boost::json::value> result, Attempt attempt,
                                    InvocationContext& ctx);

}  // namespace skillrunner::handler
