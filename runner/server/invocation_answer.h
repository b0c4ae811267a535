#pragma once

// One admitted skills.invoke run to its answer: the tenant's slot taken and
// given back, the invocation, and the JSON-RPC answer it came to (made where
// it ran, before it is sent); and the other answers and log fields about
// invocations that a connection sends.

#include <boost/asio/awaitable.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>

#include "runner/server/params.h"
#include "runner/skill_runner.h"
#include "services/common/invocation.h"
#include "services/state/tenant_quota.h"

namespace skillrunner::server {

// What one invocation came to. Passed up boxed (DonePtr): each coroutine
// frame and handler it passes through would otherwise hold room for a whole
// Done while it is in flight.
struct Done {
  std::string line;                          // the serialized answer (single requests)
  boost::json::object answer;                // the answer (batch members)
  std::string outcome;                       // "ok", "review_failed" or the error code
  std::optional<boost::json::value> review;  // a gated invocation's final review
  Metrics metrics;
  double seconds = 0;
};
using DonePtr = std::unique_ptr<Done>;

// Who asked, for the tenant's quota.
struct CallerQuota {
  std::string tenant;  // "": the admin, no quota
  state::TenantQuotas* quotas = nullptr;
};

// Runs `request` on `runner` within the caller's quota; the answer is
// serialized (`serialize`: single requests) or kept as an object (batch
// members). A streamed invocation's held-back partial goes out first. A
// CANCELLED answer says `*cancel_reason` when the server cancelled it (set on
// the invocation's strand before the cancellation; empty: the client's own).
boost::asio::awaitable<DonePtr> RunInvocation(std::shared_ptr<SkillRunner> runner,
                                              std::unique_ptr<InvokeParams> request, boost::json::value id,
                                              bool serialize, CallerQuota caller,
                                              std::shared_ptr<const std::string> cancel_reason);

// -32000 OVERLOADED with `message` and data.retry_after_ms.
boost::json::object Overloaded(const boost::json::value& id, std::string message, std::int64_t retry_after_ms);

// The access log's line of one invocation: who asked for what and what it
// cost; never the input.
boost::json::object AccessLogFields(boost::json::object event, const std::string& skill, const Done& done);

// An invocation a bug stopped: logged with what it said (answered -32603).
void LogInternalError(const std::string& key, const std::string& skill, std::exception_ptr e);

}  // namespace skillrunner::server
