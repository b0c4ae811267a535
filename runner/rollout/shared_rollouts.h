#pragma once

// Rollouts shared by replicas through Redis (design.md §11.2, `state.redis`):
// once a second each replica adds what it counted to each rollout's hash
// (HINCRBY), reads the sums, the decided state and the operators' command
// back, and obeys the state; the replica holding the rollout's lock
// (`SET NX PX 2000`, renewed while it lives) decides on the sums and writes
// the state. Rollout keys never expire. With Redis unreachable a replica
// keeps the last state it knew; with none known it sends every call to the
// stable version.

#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>
#include <vector>

#include "runner/rollout/rollout_book.h"
#include "services/state/shared_state.h"

namespace skillrunner::rollout {

class SharedRollouts {
 public:
  // `replica`: this process's name in the lock (unique among the replicas).
  SharedRollouts(std::shared_ptr<state::SharedState> shared, std::shared_ptr<RolloutBook> book, std::string replica);

  // One exchange for every rollout the book has seen.
  boost::asio::awaitable<void> Exchange();

  // The Redis keys of a rollout: its counts (a hash), its state, its lock, its command.
  static std::string CountsKey(const state::SharedState& shared, const RolloutKey& key);
  static std::string StateKey(const state::SharedState& shared, const RolloutKey& key);
  static std::string LockKey(const state::SharedState& shared, const RolloutKey& key);
  static std::string CommandKey(const state::SharedState& shared, const RolloutKey& key);
  // The four, in the exchange script's order.
  static std::vector<std::string> Keys(const state::SharedState& shared, const RolloutKey& key);

 private:
  std::shared_ptr<state::SharedState> shared_;
  std::shared_ptr<RolloutBook> book_;
  std::string replica_;
};

}  // namespace skillrunner::rollout
