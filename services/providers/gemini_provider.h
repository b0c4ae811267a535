#pragma once

#include <memory>
#include <string>

#include "services/common/env.h"
#include "services/http/http_client.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

struct GeminiOptions {
  std::string name = "gemini";
  std::string base_url = "https://generativelanguage.googleapis.com";
  std::string api_key_env = "GEMINI_API_KEY";
};

// The `gemini` kind (design.md §9.3, docs/development/providers-notes.md §3): POST
// {base_url}/v1beta/models/{model}:generateContent with the key in
// x-goog-api-key; system turns go to systemInstruction, the rest to contents
// (roles user and model); generationConfig carries temperature,
// maxOutputTokens, seed, and for structured output responseMimeType
// application/json (JSON mode) plus responseJsonSchema (native).
// Answers: the text parts of the first candidate; finishReason MAX_TOKENS is
// a truncation, SAFETY, PROHIBITED_CONTENT, BLOCKLIST, SPII, RECITATION and a
// promptFeedback.blockReason the content filter; usageMetadata gives the
// token counts (cachedContentTokenCount included). Errors are the Google RPC
// envelope {"error": {code, message, status, details}}; a RetryInfo detail's
// retryDelay ("1.5s") is the wait before a retry.
class GeminiProvider : public Provider {
 public:
  GeminiProvider(GeminiOptions options, std::shared_ptr<http::HttpClient> client, EnvLookup env);

  boost::asio::awaitable<ChatResult> Chat(const ChatRequest& request) override;

  boost::json::object RequestBody(const ChatRequest& request) const;

 private:
  GeminiOptions options_;
  std::shared_ptr<http::HttpClient> client_;
  EnvLookup env_;
};

}  // namespace skillrunner::providers
