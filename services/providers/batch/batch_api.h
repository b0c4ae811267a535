#pragma once

// A provider's batch API (design.md §10.6, docs/batch.md): create a batch of
// chat requests, poll it, read its results. The request bodies are the online
// ones (the provider's own request builder), so native strict schemas travel
// unchanged. Implementations never retry and never wait: BatchingProvider does.

#include <boost/asio/awaitable.hpp>
#include <cstddef>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "services/providers/provider.h"

namespace skillrunner::providers {

// One request of a batch: its custom_id (^[a-zA-Z0-9_-]{1,64}$) and the request.
struct BatchItem {
  std::string custom_id;
  const ChatRequest* request = nullptr;
};

// What a batch is tagged with where the provider keeps metadata (OpenAI), so
// that a restart finds a batch created just before a crash.
struct BatchTag {
  std::string run_id;
  int round = 0;
};

struct BatchStatus {
  std::string id;
  std::string state;   // the provider's word (validating, in_progress, ended, BATCH_STATE_RUNNING, ...)
  bool ended = false;  // results (if any) can be read
  // Ended without results for any request: refused whole (validation failed,
  // cancelled); `refusal` says why.
  bool refused = false;
  std::string refusal;
  int total = 0;
  int completed = 0;
  int failed = 0;
  // Where the results are: OpenAI's output and error file ids, Anthropic's
  // results_url, Gemini's inlined responses (kept as the operation's JSON).
  std::string output_ref;
  std::string error_ref;
  std::string raw;  // the status body as received
};

// One request's outcome. A request with neither a response nor a final
// error (expired, cancelled, a 5xx or 429 inside the batch, missing from the
// results) goes into the next round.
struct BatchItemResult {
  std::optional<std::string> answer;  // the provider's 2xx answer body, for ParseAnswer
  std::string request_id;
  std::optional<ProviderError> error;  // final: the request itself was refused (a 4xx)
  std::string why;                     // resubmitted: why (batch_expired, ...)
};

class BatchApi {
 public:
  virtual ~BatchApi() = default;
  // The provider's most requests in one batch.
  virtual std::size_t MaxRequests() const = 0;
  // Requests of different groups never share a batch (Gemini: one model per
  // batch); each group of a round becomes a round of its own.
  virtual std::string GroupOf(const ChatRequest&) const { return {}; }
  // The most bytes of request bodies one batch may carry (0: no limit of
  // its own), and what one request adds to it: a round over it is split.
  virtual std::size_t MaxBytes() const { return 0; }
  virtual std::size_t RequestBytes(const ChatRequest&) const { return 0; }
  // Creates the batch; its id. A 4xx (404 included) is the batch refused whole.
  virtual boost::asio::awaitable<std::expected<std::string, ProviderError>> Create(const std::vector<BatchItem>& items,
                                                                                   const BatchTag& tag) = 0;
  virtual boost::asio::awaitable<std::expected<BatchStatus, ProviderError>> Poll(const std::string& id) = 0;
  // The results of an ended batch, by custom_id.
  virtual boost::asio::awaitable<std::expected<std::map<std::string, BatchItemResult>, ProviderError>> Results(
      const BatchStatus& status) = 0;
  // An answer of Results as the online call would have read it.
  virtual std::expected<ChatResponse, ProviderError> ParseAnswer(const BatchItemResult& result,
                                                                 const ChatRequest& request) const = 0;
  // The id of a batch tagged `tag`, if the provider keeps tags (else none).
  virtual boost::asio::awaitable<std::expected<std::optional<std::string>, ProviderError>> FindTagged(
      const BatchTag& tag);
};

}  // namespace skillrunner::providers
