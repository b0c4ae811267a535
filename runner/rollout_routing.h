#pragma once

// Which version of a skill answers a call (design.md §11.2), and what the
// call's outcome counts for the skill's rollout.

#include <boost/json/value.hpp>
#include <expected>

#include "runner/rollout/rollout_book.h"
#include "runner/tree/skill.h"
#include "services/common/error.h"
#include "services/common/invocation.h"

namespace skillrunner {

struct Route {
  const Skill* skill = nullptr;  // the version that answers
  Served served;
  bool counted = false;  // assigned by the rollout (not pinned), so its outcome counts
};

// The version `options.version` pins (SKILL_NOT_FOUND when it names neither
// the stable version nor its candidate); else, with a rollout and a `book`,
// the arm the call's key falls in at the candidate's traffic now; else the
// stable version. Without a book (run, eval) calls go to the stable version.
std::expected<Route, Error> RouteCall(const Skill& stable, const boost::json::value& input,
                                      const InvocationOptions& options, rollout::RolloutBook* book);

// Counts a routed call's outcome: `ok`, false for the skill's own failures
// (MAX_RETRIES_EXCEEDED, TRUNCATED, REFUSED, CONTENT_FILTERED, HANDLER_FAILED,
// TIMEOUT, BUDGET_EXCEEDED, PROVIDER_ERROR, JUDGE_ERROR, a failed review gate),
// true for a result, not counted for the caller's errors and the provider's
// unavailability; `review_pass` from an inline gate's verdict.
void CountOutcome(const Skill& stable, const Route& route, const InvocationOutcome& outcome,
                  rollout::RolloutBook& book);

}  // namespace skillrunner
