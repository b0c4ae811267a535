#pragma once

// The JSON-RPC methods other than skills.invoke and $/cancel (which need the
// connection), and the reading of their params.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"
#include "services/common/invocation.h"
#include "runner/server/json_rpc.h"
#include "runner/server/server_state.h"

namespace skillrunner::server {

bool IsKnownMethod(std::string_view method);

// params[name] when params is an object, else null.
const boost::json::value* ParamMember(const boost::json::value& params, std::string_view name);
// params[name] when it is a string, else "".
std::string ParamString(const boost::json::value& params, std::string_view name);

struct InvokeParams {
  std::string skill;
  boost::json::value input;
  InvocationOptions options;
};

// skills.invoke params: {skill: string, input: any JSON, options?: {timeout_ms,
// seed, session}}. Errors name the JSON pointer of each bad member. The input
// is moved out of `params`.
std::expected<InvokeParams, std::vector<FieldError>> ReadInvokeParams(boost::json::value& params);

// -32602 "Invalid params: <first pointer>: <message>" with data.errors.
boost::json::object InvalidParamsAnswer(const boost::json::value& id, const std::vector<FieldError>& errors);
// -32001 with data {code: UNAUTHORIZED, message}.
boost::json::object UnauthorizedAnswer(const boost::json::value& id, std::string_view why);

// skills.list, skills.describe, skills.reload, health, metrics; -32601 for
// any other method.
boost::json::object HandleSimpleMethod(Server::State& state, const Call& call);

}  // namespace skillrunner::server
