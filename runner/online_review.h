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
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runner/rollout/rollout_book.h"
#include "runner/tree/skill_registry.h"

namespace skillrunner {

class SkillRunner;

class OnlineReviews : public std::enable_shared_from_this<OnlineReviews> {
 public:
  explicit OnlineReviews(std::shared_ptr<rollout::RolloutBook> book) : book_(std::move(book)) {}

  // An answered call of `stable`'s rollout, on `arm`: judged with the share the rollout's review
  // samples. `runner` (kept alive while the sample waits) judges it on `executor`; `registry`
  // keeps the skill alive.
  void Offer(std::shared_ptr<SkillRunner> runner, std::shared_ptr<const SkillRegistry> registry, const Skill& stable,
             rollout::Arm arm, const boost::json::value& input, const boost::json::value& output,
             boost::asio::any_io_executor executor);

  // Samples dropped, by skill and reason (queue_full, spend_cap, expired, judge_error).
  std::map<std::string, std::map<std::string, std::int64_t>> Dropped() const;
  // Samples judged, by skill; and what judging cost (USD, priced judges only).
  std::map<std::string, std::int64_t> Judged() const;
  std::map<std::string, double> JudgeCostUsd() const;

 private:
  struct Sample {
    std::shared_ptr<SkillRunner> runner;
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
  // The next sample to judge, dropping the expired and those over the spend cap; false when none.
  bool Next(const std::string& skill, Sample& out);
  void Judged(const std::string& skill, const Sample& sample, const InvocationOutcome& verdict);
  static boost::asio::awaitable<void> Work(std::shared_ptr<OnlineReviews> self, std::string skill);

  std::shared_ptr<rollout::RolloutBook> book_;
  mutable std::mutex mutex_;
  std::map<std::string, Queue, std::less<>> queues_;
};

}  // namespace skillrunner
