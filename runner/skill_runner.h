#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string_view>

#include "runner/invocation_observer.h"
#include "runner/skill_service.h"
#include "runner/tracing.h"
#include "runner/tree/skill_registry.h"
#include "services/common/clock.h"
#include "services/common/invocation.h"
#include "services/handler/process_slots.h"
#include "services/review/reviewer.h"

namespace skillrunner {
namespace rollout {
class RolloutBook;  // runner/rollout/rollout_book.h
}
class OnlineReviews;  // runner/online_review.h

// The core: looks a skill up, checks its input, dispatches on template_type to
// the service registered for it, checks the output, and returns the result of
// design.md §6.1. Thread-safe: Invoke may run concurrently on many threads; the
// registry can be swapped while invocations run (they finish on the old one).
class SkillRunner : public Judging {
 public:
  // `clock` gives every invocation its deadline and durations; it must
  // outlive the runner.
  explicit SkillRunner(std::shared_ptr<const SkillRegistry> registry, Clock& clock = RealClock());

  // Registers the service for a template type (TemplateType::kHandler for
  // handler skills). Call before the first Invoke (InstallServices does).
  void RegisterService(TemplateType type, std::shared_ptr<SkillService> service);
  // The judge behind Judge. Call before the first Judge.
  void SetJudge(std::shared_ptr<review::Reviewer> judge) { judge_ = std::move(judge); }

  // design.md §11.2: the rollouts this runner serves (serve, MCP): calls to a skill with a
  // rollout are assigned an arm before the call. Without (run, eval), calls go to the stable
  // version unless they pin one. Call before the first Invoke.
  void SetRollouts(std::shared_ptr<rollout::RolloutBook> book) { rollouts_ = std::move(book); }
  const std::shared_ptr<rollout::RolloutBook>& rollouts() const { return rollouts_; }
  // design.md §12.1: told of each invocation after it ended (rollout counts, online review), in the
  // order added. Call before the first Invoke.
  void AddObserver(std::shared_ptr<InvocationObserver> observer) { observers_.push_back(std::move(observer)); }
  // The rollouts' online review, for the metrics (null without rollouts); the composition sets it
  // with the observer that feeds it.
  void SetOnlineReviews(std::shared_ptr<OnlineReviews> reviews) { reviews_ = std::move(reviews); }
  const std::shared_ptr<OnlineReviews>& online_reviews() const { return reviews_; }
  // The shared_ptr this runner is owned by: an observer that judges later (a sample waiting for
  // its online review) keeps the runner (and what it runs on) alive. Without one, it cannot.
  void SetSelf(std::weak_ptr<SkillRunner> self) { self_ = std::move(self); }

  // design.md §9.4: where the spans of every invocation go. Call before the first Invoke.
  void SetTracing(TraceSettings tracing) { tracing_ = std::move(tracing); }

  // design.md §12.0: the places exec handlers wait for before they start (their timeout_ms counts
  // from then). A caller's own deadline (InvocationOptions::timeout) bounds the wait: a call
  // that finds no place before it is OVERLOADED with retry_after_ms. Null: no bound (tests).
  // Call before the first Invoke.
  void SetProcessPools(std::shared_ptr<handler::ProcessPools> pools) { pools_ = std::move(pools); }
  const std::shared_ptr<handler::ProcessPools>& process_pools() const { return pools_; }

  std::shared_ptr<const SkillRegistry> registry() const { return registry_.load(); }
  void SwapRegistry(std::shared_ptr<const SkillRegistry> registry) { registry_.store(std::move(registry)); }
  Clock& clock() const { return clock_; }

  boost::asio::awaitable<InvocationOutcome> Invoke(std::string_view skill_id, boost::json::value input,
                                                   InvocationOptions options);
  // With default options. An overload, not a default argument: g++ 12 moves
  // a defaulted class-type argument bitwise inside a calling coroutine, which
  // freed an invalid pointer once the options held a string.
  boost::asio::awaitable<InvocationOutcome> Invoke(std::string_view skill_id, boost::json::value input) {
    return Invoke(skill_id, std::move(input), InvocationOptions{});
  }

  // Judges `subject` (with `context`, when not null) as its own invocation
  // named judge.review_id(): the verdict as the output, the judge's attempts
  // and metrics (eval runs judge outputs this way). The deadline is
  // options.timeout from now (60 s when unset).
  boost::asio::awaitable<InvocationOutcome> Judge(const review::JudgeSpec& judge, const boost::json::value& subject,
                                                  const boost::json::value* context,
                                                  InvocationOptions options) override;

 private:
  // Tells the observers.
  void Tell(std::shared_ptr<const SkillRegistry> registry, const Skill* stable, const Route& route,
            const boost::json::value& input, const InvocationOutcome& outcome,
            const boost::asio::any_io_executor& executor);
  // Judge without the trace.
  boost::asio::awaitable<InvocationOutcome> RunJudge(const review::JudgeSpec& judge, const boost::json::value& subject,
                                                     const boost::json::value* context, InvocationOptions options,
                                                     InvocationTrace& trace);
  // Starts the invocation's trace (and, to capture content, its requests).
  InvocationTrace BeginTrace(std::string skill, InvocationOptions& options, bool& show_request) const;
  // Exports its spans; drops the requests only the trace asked for.
  void EndTrace(InvocationTrace& trace, InvocationOutcome& outcome, bool show_request) const;

  // Runs the service against the invocation's deadline; the raced outcome.
  boost::asio::awaitable<Result<Produced>> RunBeforeDeadline(SkillService& service, const Skill& skill,
                                                             const boost::json::value& input, InvocationContext& ctx,
                                                             std::chrono::milliseconds limit);

  // An exec handler's process place (none for other skills, or without pools): the error when
  // the caller's deadline or cancellation came first. Held, a wait without a caller's deadline
  // starts the invocation's clock again (`start` and ctx's deadline).
  boost::asio::awaitable<std::unique_ptr<Error>> TakeProcessPlace(const Skill& skill, InvocationContext& ctx,
                                                                  std::chrono::milliseconds limit,
                                                                  Clock::TimePoint& start,
                                                                  std::optional<handler::ProcessSlots::Slot>& place);

  std::atomic<std::shared_ptr<const SkillRegistry>> registry_;
  Clock& clock_;
  std::map<TemplateType, std::shared_ptr<SkillService>> services_;
  std::shared_ptr<review::Reviewer> judge_;
  std::shared_ptr<rollout::RolloutBook> rollouts_;
  std::vector<std::shared_ptr<InvocationObserver>> observers_;
  std::shared_ptr<OnlineReviews> reviews_;
  std::weak_ptr<SkillRunner> self_;
  TraceSettings tracing_;
  std::shared_ptr<handler::ProcessPools> pools_;
};

}  // namespace skillrunner
