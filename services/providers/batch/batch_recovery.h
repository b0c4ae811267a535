#pragma once

// A batching provider resuming after a crash (eval --resume): the rounds an
// earlier process recorded in the journal become trackers whose requests
// later Chats claim by hash instead of sending them again; a round whose
// batch id was not recorded (a crash between create and the record) is
// looked up by its tag.

#include <boost/asio/awaitable.hpp>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "services/common/clock.h"
#include "services/providers/batch/batch_api.h"
#include "services/providers/batch/batch_journal.h"
#include "services/providers/batch/batch_slot.h"

namespace skillrunner::providers {

class BatchRecovery {
 public:
  using Say = std::function<void(const std::string&)>;
  // `mutex` is the provider's: it guards the trackers' fields too.
  BatchRecovery(std::string provider, std::mutex& mutex) : provider_(std::move(provider)), mutex_(mutex) {}

  // Once per process, before the first request; a second caller waits for
  // the first to finish.
  boost::asio::awaitable<void> Recover(BatchApi& api, BatchJournal& journal, const std::string& run_id, Clock& clock,
                                       const Say& say);

  // A recorded batch that holds a request with `slot`'s hash: the slot takes
  // its round and custom_id and waits on that batch (unless it is done).
  struct Claimed {
    TrackerPtr tracker;
    bool start_polling = false;  // the first claim of a batch not yet polled
    bool done = false;           // answered (or refused) already: deliver now
  };
  std::optional<Claimed> Claim(const SlotPtr& slot);

 private:
  const std::string provider_;
  std::mutex& mutex_;
  std::map<int, TrackerPtr> trackers_;                            // recorded, by round
  std::multimap<std::string, std::pair<int, std::string>> live_;  // hash -> recorded (round, custom_id)
  bool recovered_ = false;
  bool recovering_ = false;
};

}  // namespace skillrunner::providers
