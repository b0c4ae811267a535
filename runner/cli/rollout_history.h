#pragma once

// serve's rollouts in the eval history (design.md §11.2, §11.3), when the config names one
// (`history:`): each decision and command, a snapshot of each rollout's counts every
// kSnapshotEvery and when serve stops, and each answer the online review judged; written by
// eval::RolloutLog's thread, so a call never waits on the database.

#include <chrono>
#include <memory>
#include <string>

#include "runner/eval/history/rollout_log.h"
#include "runner/online_review.h"
#include "runner/rollout/rollout_book.h"
#include "runner/tree/skill_registry.h"

namespace skillrunner::cli {

inline constexpr std::chrono::seconds kSnapshotEvery{30};

class RolloutRecorder {
 public:
  // Null when `location` is empty; when the history cannot be opened, says so on stderr and
  // returns null (serve goes on: rollouts do not depend on their record).
  static std::shared_ptr<RolloutRecorder> Start(const std::string& location, std::string replica);

  // A decision or command of the book; `registry` finds its rollout's alpha and tau.
  void Decision(const rollout::RolloutEvent& event, const SkillRegistry& registry);
  // Each rollout of `registry` as `book` counts it now, when kSnapshotEvery has passed since the
  // last (always with `force`).
  void Snapshot(const SkillRegistry& registry, rollout::RolloutBook& book, bool force);
  void Sample(const JudgedSample& sample);

 private:
  RolloutRecorder(std::unique_ptr<eval::RolloutLog> log, std::string replica)
      : log_(std::move(log)), replica_(std::move(replica)) {}
  eval::RolloutPoint Point(const rollout::RolloutKey& key, const rollout::RolloutStatus& status,
                           const rollout::RolloutSpec* spec, std::string kind) const;

  std::unique_ptr<eval::RolloutLog> log_;
  std::string replica_;
  std::chrono::steady_clock::time_point last_snapshot_{};
};

}  // namespace skillrunner::cli
