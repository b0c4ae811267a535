#pragma once

// A loopback OpenAI that implements the Files and Batches wire format
// (docs/batch.md) beside /v1/chat/completions: multipart uploads (purpose
// "batch", one JSONL request a line, custom_ids unique), batches that move
// validating -> in_progress -> finalizing -> completed one poll at a time (or
// expire, or fail validation), output and error files by id, the batch list
// newest first. Each request is answered by `answer` (a chat.completion body
// for a request body), online or inside a batch alike. It counts every
// request body submitted in a batch, so tests can assert that none was sent
// twice. Thread-safe.

#include <boost/json/object.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "tests/support/loopback_server.h"

namespace skillrunner::test_support {

class OpenAiBatchServer {
 public:
  // A chat.completion JSON text for a /v1/chat/completions request body.
  using Answer = std::function<std::string(const boost::json::object& body)>;
  explicit OpenAiBatchServer(Answer answer);
  ~OpenAiBatchServer();

  std::string base_url() const;  // http://127.0.0.1:PORT/v1

  // Requests for which this is true are not run: the batch ends "expired",
  // and they are in its error file with code batch_expired. Each request
  // body expires at most once.
  void ExpireOnce(std::function<bool(const boost::json::object& body)> expire);
  // Batch create answers `status` with an error body (404: the endpoint is
  // not there, as on a server without the Batch API).
  void RefuseCreate(int status);
  // Batches go validating -> failed (the file refused, errors.data set).
  void FailValidation();
  // Batches from the n-th created on (1-based) stay in_progress until
  // HoldBatchesFrom(0).
  void HoldBatchesFrom(int n);
  // Batch create answers only after `delay` (the batch exists at once), as
  // when a client dies between create and reading its answer.
  void DelayCreate(std::chrono::milliseconds delay);
  // Polls each batch spends in validating and in_progress before moving on (default 1).
  void SetPollsPerStage(int polls);
  // The next `polls` GETs of a batch answer 429 with `retry-after-ms: DELAY` (the batch does not
  // move on); Throttled() says which were (their target) and when each arrived.
  void ThrottlePolls(int polls, std::chrono::milliseconds delay);
  std::vector<std::pair<std::string, std::chrono::steady_clock::time_point>> Throttled() const;

  std::size_t online_requests() const;
  // Every request body sent online (canonical JSON text) -> times.
  std::map<std::string, int> online_bodies() const;
  std::size_t batches_created() const;
  std::size_t uploads() const;
  // Every request body submitted in a batch (canonical JSON text) -> times.
  std::map<std::string, int> submissions() const;
  // Batch requests counted by submissions(), in all.
  std::size_t submitted() const;
  std::vector<RecordedRequest> requests() const { return server_.requests(); }

  struct State;

 private:
  std::shared_ptr<State> state_;
  LoopbackServer server_;
};

// `value` with every object's members sorted, so that one request body has one text.
std::string CanonicalJson(const boost::json::value& value);

// The parts of a multipart/form-data body: name -> content. Empty when the
// body is not one (no boundary, a part without its name).
std::map<std::string, std::string> ParseMultipart(const std::string& content_type, const std::string& body);

}  // namespace skillrunner::test_support
