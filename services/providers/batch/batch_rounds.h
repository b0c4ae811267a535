#pragma once

// Gathering a batching provider's requests into rounds: a round is due when
// it holds the most one batch may (max_requests, or the API's limit), when
// its send_after timer fires, or when every running case waits (the quorum);
// a due round goes as one batch per group of the API (a model, say), each
// cut into parts of at most the API's bytes.

#include <cstddef>
#include <mutex>
#include <optional>
#include <vector>

#include "services/providers/batch/batch_api.h"
#include "services/providers/batch/batch_slot.h"

namespace skillrunner::providers {

class BatchRounds {
 public:
  // `limit`: the most requests in one round (at least 1).
  explicit BatchRounds(std::size_t limit) : limit_(limit) {}

  struct Added {
    std::vector<SlotPtr> full;       // the round `slot` filled, now due
    std::optional<int> start_timer;  // the first of a round: its generation, for TakeIfStill
  };
  // Adds `slot` to the round being gathered.
  Added Add(SlotPtr slot);
  // The round being gathered, now (empty when none).
  std::vector<SlotPtr> TakeAll();
  // The round being gathered, if it is still round `generation` (its timer
  // fired before anything else sent it).
  std::vector<SlotPtr> TakeIfStill(int generation);

  // `slots` as the batches they go in: per group of `api`, in the order of
  // their first request, each in parts of at most api.MaxBytes() of request
  // bodies (a request bigger than that alone: the provider says what it
  // thinks of it).
  static std::vector<std::vector<SlotPtr>> Parts(std::vector<SlotPtr> slots, const BatchApi& api);

 private:
  const std::size_t limit_;
  std::mutex mutex_;
  std::vector<SlotPtr> pending_;
  int generation_ = 0;
};

}  // namespace skillrunner::providers
