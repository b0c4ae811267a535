#pragma once

// design.md §10.6: a provider that sends its requests through the provider's
// batch API. Each Chat joins the round being gathered; a round is sent when
// it holds max_requests (or the API's limit), when every running case of the
// eval waits on a batch (`quorum`: nothing more can come), or send_after
// after its first request, whichever is first. Each batch is polled every
// poll_interval, backing off to 10x it. A request that a batch left unanswered (expired, a 5xx or 429 inside
// it, missing) joins the next round (counted as resubmitted); a batch
// refused whole (a 4xx on create, a 404 while polling, status failed) sends
// its requests online with `fallback_online`, else fails them with a
// PROVIDER_ERROR naming the batch. Retries of the layers above (validation
// feedback, review regenerations) are new Chats, so they go into the next
// round by themselves.
//
// Every step is written to the BatchJournal before it goes on; a new process
// on the same journal (eval --resume) matches each request by its hash to a
// recorded batch and waits for that batch's answer instead of sending it
// again, and adopts (through FindTagged) a batch created just before a crash.

#include <boost/asio/any_io_executor.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "services/common/batch_quorum.h"
#include "services/common/clock.h"
#include "services/providers/batch/batch_api.h"
#include "services/providers/batch/batch_journal.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

struct BatchSettings {
  std::size_t max_requests = 50'000;
  std::chrono::milliseconds send_after{15'000};
  std::chrono::milliseconds poll_interval{30'000};
  bool fallback_online = false;
  std::set<std::string, std::less<>> opted_out;  // skills answered online (suite `batch: false`)
  std::string run_id;                            // the tag of each batch
  int max_resubmits = 3;                         // per request, then it fails
  // The eval's running cases (every provider of the run shares it); null:
  // rounds are sent on max_requests and send_after only.
  std::shared_ptr<BatchQuorum> quorum;
};

// What happened to the requests of one provider so far (progress, summary).
struct BatchCounts {
  int batches = 0;
  int requests = 0;
  int resubmitted = 0;
  int fallback_online = 0;
};

class BatchingProvider : public Provider {
 public:
  using Say = std::function<void(const std::string&)>;
  // `online` answers opted-out skills and refused batches under fallback;
  // `online`, `journal` and `clock` outlive this.
  BatchingProvider(std::string name, std::string kind, Provider& online, std::shared_ptr<BatchApi> api,
                   BatchJournal& journal, BatchSettings settings, Clock& clock, boost::asio::any_io_executor executor,
                   Say say);
  ~BatchingProvider() override;

  boost::asio::awaitable<ChatResult> Chat(const ChatRequest& request) override;

  BatchCounts counts() const;

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace skillrunner::providers
