#pragma once

// The reading of JSON-RPC params, before any skill runs: pure functions, no
// I/O (tests/fuzz/jsonrpc_fuzz.cpp feeds them every line it makes).

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"
#include "services/common/invocation.h"
#include "services/common/stream_events.h"

namespace skillrunner::server {

// params[name] when params is an object, else null.
const boost::json::value* ParamMember(const boost::json::value& params, std::string_view name);
// params[name] when it is a string, else "".
std::string ParamString(const boost::json::value& params, std::string_view name);

struct InvokeParams {
  std::string skill;
  boost::json::value input;
  InvocationOptions options;
  bool stream = false;  // options.stream: partials and resets as notifications
  // options.partial_interval_ms: at most one partial per interval (0: every one).
  std::chrono::milliseconds partial_interval = kDefaultPartialInterval;
};

// skills.invoke params: {skill: string, input: any JSON, options?: {timeout_ms,
// seed, session, show_request, max_cost_usd, traceparent, stream, partial_interval_ms}}. Errors name the
// JSON pointer of each bad member. The input is moved out of `params`.
std::expected<InvokeParams, std::vector<FieldError>> ReadInvokeParams(boost::json::value& params);

// -32602 "Invalid params: <first pointer>: <message>" with data.errors.
boost::json::object InvalidParamsAnswer(const boost::json::value& id, const std::vector<FieldError>& errors);

}  // namespace skillrunner::server
