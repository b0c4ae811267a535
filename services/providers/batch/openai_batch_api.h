#pragma once

// OpenAI's Batch API (docs/batch.md): the requests as a JSONL file uploaded
// to /files (multipart, purpose "batch"), /batches created over it with the
// run id and round in `metadata`, polled until completed, expired, failed or
// cancelled; results from the output and error files, matched by custom_id.

#include <memory>

#include "services/providers/batch/batch_api.h"
#include "services/providers/batch/batch_http.h"
#include "services/providers/openai_provider.h"

namespace skillrunner::providers {

class OpenAiBatchApi : public BatchApi {
 public:
  // `builder` makes the request bodies (the online ones).
  OpenAiBatchApi(BatchEndpoint endpoint, OpenAiProvider builder)
      : endpoint_(std::move(endpoint)), builder_(std::move(builder)) {}

  std::size_t MaxRequests() const override { return 50'000; }
  boost::asio::awaitable<std::expected<std::string, ProviderError>> Create(const std::vector<BatchItem>& items,
                                                                           const BatchTag& tag) override;
  boost::asio::awaitable<std::expected<BatchStatus, ProviderError>> Poll(const std::string& id) override;
  boost::asio::awaitable<std::expected<std::map<std::string, BatchItemResult>, ProviderError>> Results(
      const BatchStatus& status) override;
  std::expected<ChatResponse, ProviderError> ParseAnswer(const BatchItemResult& result,
                                                         const ChatRequest& request) const override;
  boost::asio::awaitable<std::expected<std::optional<std::string>, ProviderError>> FindTagged(
      const BatchTag& tag) override;

  // The JSONL file of `items` (one {custom_id, method, url, body} a line).
  std::string InputFile(const std::vector<BatchItem>& items) const;

 private:
  boost::asio::awaitable<std::expected<void, ProviderError>> ReadFile(const std::string& file_id,
                                                                      std::map<std::string, BatchItemResult>& out);

  BatchEndpoint endpoint_;
  OpenAiProvider builder_;
};

// The metadata keys a batch is tagged with.
inline constexpr const char* kBatchRunKey = "skillrunner_run";
inline constexpr const char* kBatchRoundKey = "skillrunner_round";

// The multipart/form-data body of an upload: `fields` then one file part.
std::string MultipartBody(const std::string& boundary, const std::vector<std::pair<std::string, std::string>>& fields,
                          const std::string& file_field, const std::string& file_name, const std::string& content);

}  // namespace skillrunner::providers
