#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <memory>
#include <string_view>

#include "services/handler/handler.h"
#include "services/handler/process_runner.h"

namespace skillrunner::handler {

// A handler that runs in-process: the output for one input, or why not.
using BuiltinHandler = Result<boost::json::value> (*)(const boost::json::value& input);

// The built-in handler called `name`, or nullptr. Built-ins so far:
//   echo   returns the input unchanged (smoke tests of the front doors).
BuiltinHandler FindBuiltinHandler(std::string_view name);

// True for "exec" and every built-in: what a descriptor's `handler:` may say.
bool IsKnownHandler(std::string_view name);

// Handler skills: dispatches on spec.handler to the exec handler or a
// built-in, then Concludes (output_schema check, one attempt recorded). An
// unknown name is HANDLER_FAILED "unknown handler 'x'" (the registry rejects
// those at load; this is the backstop). Built-ins record one attempt (kind
// "ok" or "handler", raw = the output as JSON) and set the metrics' mode to
// "handler", as exec does.
class HandlerService {
 public:
  // `handler: exec` runs through an ExecHandler over `runner` (default
  // options); `runner` must outlive this service.
  explicit HandlerService(ProcessRunner& runner);
  // `exec` handles `handler: exec` (an ExecHandler with other options, or a
  // fake); it must outlive this service.
  explicit HandlerService(Handler& exec);
  ~HandlerService();

  boost::asio::awaitable<Result<boost::json::value>> Run(const HandlerSpec& spec, const boost::json::value& input,
                                                         InvocationContext& ctx);

 private:
  std::unique_ptr<Handler> owned_exec_;
  Handler& exec_;
};

}  // namespace skillrunner::handler
