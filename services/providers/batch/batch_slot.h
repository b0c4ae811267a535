#pragma once

// What the parts of the batching provider share (batch_rounds,
// batch_recovery, batching_provider): one request waiting on a batch (Slot)
// and one batch of a round (Tracker).

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <expected>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "services/common/batch_quorum.h"
#include "services/providers/batch/batch_api.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

using BatchOutcome = std::expected<ChatResponse, ProviderError>;

// One Chat waiting on a batch: its request, where it went, and the channel
// its answer comes through.
class Slot {
 public:
  // The answer is received on `executor` (the Chat's).
  explicit Slot(boost::asio::any_io_executor executor);
  ~Slot();
  Slot(const Slot&) = delete;
  Slot& operator=(const Slot&) = delete;

  ChatRequest request;
  std::string hash;
  std::string custom_id;
  int round = 0;
  int resubmits = 0;
  // The eval's count of waiting cases (null outside an eval) and this case.
  BatchQuorum* quorum = nullptr;
  const void* case_key = nullptr;

  // The case waits on a batch from now: counted once the request is in a
  // round or a batch, never before (a case counted waiting whose request is
  // not gathered yet would let a round go without it); the caller then
  // Checks. Not once it is answered or its Chat is gone.
  void Hold();
  // It does not wait any more: its answer is on the way (a resubmission
  // Holds again).
  void Release();
  // Its Chat was cancelled: never counted again, even if resubmitted.
  void Abandon();
  // The answer (or the error) for the waiting Chat.
  void Deliver(BatchOutcome outcome);
  // Waits for Deliver; a cancelled wait is a kCancelled error.
  boost::asio::awaitable<BatchOutcome> Answer();

 private:
  struct Channel;
  void ReleaseLocked();

  std::shared_ptr<Channel> channel_;
  // The flags and the quorum's count change together (a Hold racing a
  // Deliver on another strand must not leave the case counted).
  std::mutex wait_mutex_;
  bool held_ = false;
  bool answered_ = false;
  bool abandoned_ = false;
};
using SlotPtr = std::shared_ptr<Slot>;

// One batch (or one round on its way to be one): the slots waiting on it by
// custom_id, and what became of it. Its fields are guarded by the provider's
// lock.
struct Tracker {
  int round = 0;
  std::string batch_id;
  std::map<std::string, SlotPtr> slots;  // waiting, by custom_id
  bool polling = false;
  bool done = false;
  bool refused = false;
  ProviderError refusal;
  std::map<std::string, BatchItemResult> results;
  std::string last_progress;
};
using TrackerPtr = std::shared_ptr<Tracker>;

}  // namespace skillrunner::providers
