#pragma once

// The JSON-RPC methods other than skills.invoke and $/cancel (which need the
// connection); their params are read by params.h.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "runner/server/json_rpc.h"
#include "runner/server/params.h"
#include "runner/server/server_state.h"
#include "services/common/error.h"
#include "services/common/invocation.h"

namespace skillrunner::server {

bool IsKnownMethod(std::string_view method);

// -32001 with data {code: UNAUTHORIZED, message}.
boost::json::object UnauthorizedAnswer(const boost::json::value& id, std::string_view why);

// skills.list, skills.describe, skills.reload, health, metrics; -32601 for
// any other method.
boost::json::object HandleSimpleMethod(Server::State& state, const Call& call);

}  // namespace skillrunner::server
