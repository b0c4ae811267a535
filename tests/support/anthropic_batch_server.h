#pragma once

// A loopback Anthropic that implements the Message Batches wire format
// (docs/batch.md) beside /v1/messages: POST /v1/messages/batches
// {requests: [{custom_id, params}]} (custom_ids unique and matching
// ^[a-zA-Z0-9_-]{1,64}$, params a Messages body with model, max_tokens and
// messages, the anthropic-version header required), batches that stay
// in_progress for a number of polls and then end, their results as JSONL at
// results_url (newest result first: any order), the batch list newest
// first. Each request is answered by `answer` (a Message JSON text for a
// Messages body), online or inside a batch alike; every request body
// submitted in a batch is counted. Thread-safe.

#include <boost/json/object.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/loopback_server.h"

namespace skillrunner::test_support {

class AnthropicBatchServer {
 public:
  using Answer = std::function<std::string(const boost::json::object& params)>;
  explicit AnthropicBatchServer(Answer answer);
  ~AnthropicBatchServer();

  std::string base_url() const;  // http://127.0.0.1:PORT

  // The result type ("expired", "errored" with an overloaded_error, or "" for
  // an answer) a request body gets the first time it is run; each body fails
  // at most once.
  void FailOnce(std::function<std::string(const boost::json::object& params)> fail);
  // Batches from the n-th created on (1-based) stay in_progress until HoldBatchesFrom(0).
  void HoldBatchesFrom(int n);
  // Batch create answers only after `delay` (the batch exists at once).
  void DelayCreate(std::chrono::milliseconds delay);
  // Batch create answers `status` with an error body.
  void RefuseCreate(int status);

  std::size_t online_requests() const;
  std::map<std::string, int> online_bodies() const;  // canonical JSON -> times
  std::size_t batches_created() const;
  std::map<std::string, int> submissions() const;  // canonical JSON -> times
  std::size_t submitted() const;
  std::vector<RecordedRequest> requests() const { return server_.requests(); }

  struct State;

 private:
  std::shared_ptr<State> state_;
  LoopbackServer server_;
};

// A Message JSON text whose one text block is `text` (20 input, 10 output tokens).
std::string AnthropicAnswer(const std::string& text);

}  // namespace skillrunner::test_support
