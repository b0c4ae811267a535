#pragma once

// What SkillRunner tells about each invocation it ran, to the observers the
// composition registers (design.md §12.1): rollout counting and online review
// (runner/online_review.h's RolloutObserver) learn of a call this way, so the
// runner knows no observer and none of them includes the runner. `Judging` is
// what an observer may ask of the runner in return.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <memory>

#include "runner/rollout_routing.h"
#include "runner/skill_service.h"
#include "runner/tree/skill_registry.h"
#include "services/review/reviewer.h"

namespace skillrunner {

// Judges `subject` (with `context`, when not null) as its own invocation (SkillRunner::Judge).
class Judging {
 public:
  virtual ~Judging() = default;
  virtual boost::asio::awaitable<InvocationOutcome> Judge(const review::JudgeSpec& judge,
                                                          const boost::json::value& subject,
                                                          const boost::json::value* context,
                                                          InvocationOptions options) = 0;
};

// One invocation, after it ended (its answer made, not yet sent). The references live for the
// call to Seen only; `registry` keeps `stable` alive beyond it.
struct InvocationSeen {
  std::shared_ptr<const SkillRegistry> registry;
  const Skill* stable = nullptr;  // the version asked for; null for an unknown skill
  const Route& route;             // the version that answered, and whether its outcome counts
  const boost::json::value& input;
  const InvocationOutcome& outcome;
  boost::asio::any_io_executor executor;  // the invocation's
  std::shared_ptr<Judging> judging;       // the runner, kept alive by whoever holds it; may be null
};

class InvocationObserver {
 public:
  virtual ~InvocationObserver() = default;
  // Called on the invocation's executor; must not block.
  virtual void Seen(const InvocationSeen& seen) = 0;
};

}  // namespace skillrunner
