#pragma once

// What serve writes to the history about its rollouts (design.md §11.2, §11.3): each decision and
// operator's command, a snapshot of each rollout's counts now and then (the viewer draws each
// measure's confidence sequence over time from them), and each answer its online review judged.
// Written on a thread of its own (libpq and SQLite block; a call never waits on the history),
// through a bounded queue: what a full queue or a failing database loses is counted and logged,
// never waited for.

#include <boost/json/object.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "services/common/error.h"

namespace skillrunner::eval {

struct RolloutPoint {
  std::string rollout;  // the rollout's name: "SKILL@STABLE..CANDIDATE/DIGEST"
  std::string skill;
  int stable_version = 0;
  int candidate_version = 0;
  std::string at;       // UTC, ISO 8601
  std::string kind;     // decision | command | snapshot
  std::string replica;  // host:pid of the serve that wrote it
  std::string state;    // running | paused | ready | rolled_back | held
  double traffic = 0;
  std::string reason;
  double alpha = 0.05;  // the rollout's decide.alpha (each measure is tested at alpha / m) and tau
  double tau = 0.05;
  boost::json::object status;  // the rollout's counts: {"tallies": [{measure, stable {n, successes}, candidate}]}
};

struct RolloutSample {
  std::string rollout;
  std::string skill;
  std::string arm;  // stable | candidate
  int version = 0;
  std::string at;
  std::string replica;
  std::optional<bool> pass;    // the judge's verdict; nullopt when it gave none
  boost::json::object sample;  // {"input", "output", "review"}
};

class RolloutLog {
 public:
  // Opens the history at `location` (a file or a postgresql:// URL; its schema brought up to
  // date) and starts the writing thread. `capacity`: how many items may wait.
  static Result<std::unique_ptr<RolloutLog>> Open(const std::string& location, std::size_t capacity = 10'000);
  // Writes what is queued, then stops.
  ~RolloutLog();
  RolloutLog(const RolloutLog&) = delete;
  RolloutLog& operator=(const RolloutLog&) = delete;

  // Never blocks: with the queue full the item is dropped and counted.
  void Add(RolloutPoint point);
  void Add(RolloutSample sample);
  std::int64_t dropped() const;
  std::int64_t failed() const;  // items the database refused

 private:
  struct Impl;
  explicit RolloutLog(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillrunner::eval
