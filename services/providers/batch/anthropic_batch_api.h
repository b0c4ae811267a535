#pragma once

// Anthropic's Message Batches API (docs/batch.md): POST
// /v1/messages/batches {requests: [{custom_id, params}]} with each params the
// online /v1/messages body (strict output config included), polled with GET
// /v1/messages/batches/{id} until processing_status is "ended", results read
// from its results_url (JSONL, one {custom_id, result} a line, any order).
// Anthropic keeps no metadata on a batch, so FindTagged finds nothing: a
// crash between create and the journal's batch record sends that round again
// (docs/batch.md).

#include <memory>

#include "services/providers/anthropic_provider.h"
#include "services/providers/batch/batch_api.h"
#include "services/providers/batch/batch_http.h"

namespace skillrunner::providers {

class AnthropicBatchApi : public BatchApi {
 public:
  // `builder` makes the request bodies (the online ones).
  AnthropicBatchApi(BatchEndpoint endpoint, AnthropicProvider builder)
      : endpoint_(std::move(endpoint)), builder_(std::move(builder)) {}

  std::size_t MaxRequests() const override { return 100'000; }
  // The create body is limited to 256 MB.
  std::size_t MaxBytes() const override { return 250'000'000; }
  std::size_t RequestBytes(const ChatRequest& request) const override;
  boost::asio::awaitable<std::expected<std::string, ProviderError>> Create(const std::vector<BatchItem>& items,
                                                                           const BatchTag& tag) override;
  boost::asio::awaitable<std::expected<BatchStatus, ProviderError>> Poll(const std::string& id) override;
  boost::asio::awaitable<std::expected<std::map<std::string, BatchItemResult>, ProviderError>> Results(
      const BatchStatus& status) override;
  std::expected<ChatResponse, ProviderError> ParseAnswer(const BatchItemResult& result,
                                                         const ChatRequest& request) const override;

  // The create body: {"requests": [{custom_id, params}]}.
  std::string CreateBody(const std::vector<BatchItem>& items) const;

 private:
  BatchEndpoint endpoint_;
  AnthropicProvider builder_;
};

// One line of a results file as a BatchItemResult: succeeded (the Message as
// the answer), errored (a request error final, an api/overloaded error
// resubmitted), canceled or expired (resubmitted).
BatchItemResult AnthropicResultLine(const boost::json::object& line);

}  // namespace skillrunner::providers
