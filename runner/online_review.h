#pragma once

// The online review of a rollout (design.md §11.2): a share of each arm's
// answered calls is judged after the answer went out, on a bounded queue per
// skill with its own concurrency and a spend cap, and the verdicts are
// counted as the rollout's `review_pass`. Offering a sample never blocks and
// never fails the call: a full queue, the spend cap or a sample that waited
// too long drops it, counted by reason. Thread-safe.

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runner/invocation_observer.h"
#include "runner/rollout/rollout_book.h"
#include "runner/tree/skill_registry.h"

namespace skillrunner {

// Where online judging runs, so that it never slows a call (design.md §11.2): an io_context of
// its own on a thread at idle priority (SCHED_IDLE, else nice 19), which gets only the CPU no
// call wants; a sample it cannot get to in time expires and is counted. serve starts one and
// stops it with the server: samples still queued are then left unjudged, the judgings under way
// finish. Without one, judging runs on the answered call's executor.
class JudgingThread {
 public:
  JudgingThread();
  ~JudgingThread();  // Join()
  JudgingThread(const JudgingThread&) = delete;
  JudgingThread& operator=(const JudgingThread&) = delete;

  boost::asio::any_io_executor executor() const;
  void Stop();
  // Stop(), then waits for the judgings under way (serve: before the providers they use go; the
  // object itself outlives them, its io_context holding their pooled connections).
  void Join();
  bool stopping() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// One answer the online review judged, as serve records it in the history (design.md §11.3).
struct JudgedSample {
  const Skill& stable;  // the stable version, whose rollout it is
  rollout::Arm arm;
  const boost::json::value& input;
  const boost::json::value& output;
  const boost::json::value& review;  // the judge's verdict
  bool pass;
};

class OnlineReviews : public std::enable_shared_from_this<OnlineReviews> {
 public:
  // Judges on the process's judging thread as JudgeOn left it (serve sets it before it loads a tree).
  explicit OnlineReviews(std::shared_ptr<rollout::RolloutBook> book);

  // The process's judging thread; null: judging runs on the answered call's executor.
  static void JudgeOn(std::shared_ptr<JudgingThread> thread);
  // Where the process's judged samples go besides the counts (serve, with a history); empty: nowhere.
  // Called on the judging thread; it must not block.
  static void RecordTo(std::function<void(const JudgedSample&)> sink);

  // An answered call of `stable`'s rollout, on `arm`: judged with the share the rollout's review
  // samples. `judging` (the runner, kept alive while the sample waits) judges it on `executor`;
  // `registry` keeps the skill alive.
  void Offer(std::shared_ptr<Judging> judging, std::shared_ptr<const SkillRegistry> registry, const Skill& stable,
             rollout::Arm arm, const boost::json::value& input, const boost::json::value& output,
             boost::asio::any_io_executor executor);

  // Samples dropped, by skill and reason (queue_full, spend_cap, expired, judge_error).
  std::map<std::string, std::map<std::string, std::int64_t>> Dropped() const;
  // Samples judged, by skill; and what judging cost (USD, priced judges only).
  std::map<std::string, std::int64_t> Judged() const;
  std::map<std::string, double> JudgeCostUsd() const;

 private:
  struct Sample {
    std::shared_ptr<Judging> judging;
    std::shared_ptr<const SkillRegistry> registry;
    const Skill* stable = nullptr;
    rollout::Arm arm = rollout::Arm::kStable;
    boost::json::value input;
    boost::json::value output;
    std::chrono::steady_clock::time_point queued;
  };
  struct Queue {
    std::deque<Sample> waiting;
    int running = 0;
    std::deque<std::pair<std::chrono::steady_clock::time_point, double>> spent;  // the rolling hour's judge costs
    std::map<std::string, std::int64_t> dropped;
    std::int64_t judged = 0;
    double cost_usd = 0;
  };
  // The next sample to judge, dropping the expired and those over the spend cap; false when none
  // (and when the judging thread is stopping).
  bool Next(const std::string& skill, Sample& out);
  void Judged(const std::string& skill, const Sample& sample, const InvocationOutcome& verdict);
  static boost::asio::awaitable<void> Work(std::shared_ptr<OnlineReviews> self, std::string skill);

  std::shared_ptr<rollout::RolloutBook> book_;
  const std::shared_ptr<JudgingThread> judging_;  // null: on the answered call's executor
  mutable std::mutex mutex_;
  std::map<std::string, Queue, std::less<>> queues_;
};

// design.md §12.1: what a SkillRunner that serves rollouts tells after each call: the outcome
// counted for its arm, and a share of the answers judged online. The composition registers it.
class RolloutObserver final : public InvocationObserver {
 public:
  explicit RolloutObserver(std::shared_ptr<rollout::RolloutBook> book);
  void Seen(const InvocationSeen& seen) override;
  const std::shared_ptr<OnlineReviews>& reviews() const { return reviews_; }

 private:
  std::shared_ptr<rollout::RolloutBook> book_;
  std::shared_ptr<OnlineReviews> reviews_;
};

}  // namespace skillrunner
