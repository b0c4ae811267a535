#pragma once

// Gemini's Batch API (docs/batch.md): POST
// /v1beta/models/{model}:batchGenerateContent with the requests inline
// ({batch: {displayName, inputConfig: {requests: {requests: [{request,
// metadata: {key}}]}}}}, each request the online generateContent body),
// answered by a long-running operation named batches/...; GET /v1beta/{name}
// until the operation is done (metadata.state BATCH_STATE_SUCCEEDED, FAILED,
// CANCELLED or EXPIRED); the answers in
// response.inlinedResponses.inlinedResponses[], matched by metadata.key. One
// model per batch (it is in the path): GroupOf splits a round by model. The
// display name carries the run id and round, so a batch created just before
// a crash is found in GET /v1beta/batches.

#include <memory>

#include "services/providers/batch/batch_api.h"
#include "services/providers/batch/batch_http.h"
#include "services/providers/gemini_provider.h"

namespace skillrunner::providers {

class GeminiBatchApi : public BatchApi {
 public:
  GeminiBatchApi(BatchEndpoint endpoint, GeminiProvider builder)
      : endpoint_(std::move(endpoint)), builder_(std::move(builder)) {}

  std::size_t MaxRequests() const override { return 10'000; }
  std::string GroupOf(const ChatRequest& request) const override { return request.model; }
  // Inline requests: the whole create body is limited to 20 MB.
  std::size_t MaxBytes() const override { return 19'000'000; }
  std::size_t RequestBytes(const ChatRequest& request) const override;
  boost::asio::awaitable<std::expected<std::string, ProviderError>> Create(const std::vector<BatchItem>& items,
                                                                           const BatchTag& tag) override;
  boost::asio::awaitable<std::expected<BatchStatus, ProviderError>> Poll(const std::string& id) override;
  boost::asio::awaitable<std::expected<std::map<std::string, BatchItemResult>, ProviderError>> Results(
      const BatchStatus& status) override;
  std::expected<ChatResponse, ProviderError> ParseAnswer(const BatchItemResult& result,
                                                         const ChatRequest& request) const override;
  boost::asio::awaitable<std::expected<std::optional<std::string>, ProviderError>> FindTagged(
      const BatchTag& tag) override;

  // The create body of `items` (all of one model).
  std::string CreateBody(const std::vector<BatchItem>& items, const BatchTag& tag) const;

 private:
  BatchEndpoint endpoint_;
  GeminiProvider builder_;
};

// The display name a batch of `tag` is created with.
std::string GeminiDisplayName(const BatchTag& tag);

}  // namespace skillrunner::providers
