#pragma once

// A loopback Gemini that implements the Batch API's inline wire format
// (docs/batch.md) beside :generateContent: POST
// /v1beta/models/{model}:batchGenerateContent {batch: {displayName,
// inputConfig: {requests: {requests: [{request, metadata: {key}}]}}}} (keys
// unique, the body at most 20 MB) answered by an operation named batches/N; GET /v1beta/batches/N
// moves it BATCH_STATE_PENDING -> RUNNING -> SUCCEEDED one poll at a time
// (or EXPIRED), and once done the operation holds
// response.inlinedResponses.inlinedResponses[] {response | error, metadata};
// GET /v1beta/batches lists the operations newest first. Each request is
// answered by `answer` (a GenerateContentResponse JSON text), online or
// inside a batch alike; every request body submitted in a batch is counted,
// with the model it was sent to. Thread-safe.

#include <boost/json/object.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/loopback_server.h"

namespace skillrunner::test_support {

class GeminiBatchServer {
 public:
  using Answer = std::function<std::string(const boost::json::object& request)>;
  explicit GeminiBatchServer(Answer answer);
  ~GeminiBatchServer();

  std::string base_url() const;  // http://127.0.0.1:PORT

  // The google.rpc.Status (code, message) a request gets instead of a
  // response the first time it is run (code 0: an answer); each body fails
  // at most once.
  void FailOnce(std::function<std::pair<int, std::string>(const boost::json::object& request)> fail);
  // The n-th batch created (1-based) ends BATCH_STATE_EXPIRED with no responses.
  void ExpireBatch(int n);
  // Batches from the n-th created on (1-based) stay RUNNING until HoldBatchesFrom(0).
  void HoldBatchesFrom(int n);
  // Batch create answers only after `delay` (the batch exists at once).
  void DelayCreate(std::chrono::milliseconds delay);

  std::size_t online_requests() const;
  std::map<std::string, int> online_bodies() const;  // "model " + canonical JSON -> times
  std::size_t batches_created() const;
  std::map<std::string, int> submissions() const;  // "model " + canonical JSON -> times
  std::size_t submitted() const;
  std::vector<RecordedRequest> requests() const { return server_.requests(); }

  struct State;

 private:
  std::shared_ptr<State> state_;
  LoopbackServer server_;
};

// A GenerateContentResponse JSON text whose one candidate says `text` (20 prompt, 10 candidate tokens).
std::string GeminiAnswer(const std::string& text);

}  // namespace skillrunner::test_support
