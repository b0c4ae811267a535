#pragma once

#include <map>
#include <memory>
#include <string>

#include "services/http/http_client.h"
#include "services/providers/anthropic_provider.h"
#include "services/providers/gemini_provider.h"
#include "services/providers/google/google_credentials.h"
#include "services/providers/provider.h"

namespace skillrunner::providers::google {

struct VertexOptions {
  std::string name = "vertex";
  std::string project;
  std::string location = "us-central1";
  std::string base_url;  // default https://{location}-aiplatform.googleapis.com (global: aiplatform.googleapis.com)
  GoogleSource credentials;
  // Model id -> publisher ("google" | "anthropic"), from the models table; others: anthropic for
  // claude* ids, else google.
  std::map<std::string, std::string, std::less<>> publishers;
};

// The `vertex` kind (design.md §11.5): {base_url}/v1/projects/{project}/locations/{location}/publishers/
// then google/models/{m}:generateContent (:streamGenerateContent?alt=sse) with Gemini's request and
// answer, or anthropic/models/{m}:rawPredict (:streamRawPredict) with Anthropic's Messages body less
// `model`, with anthropic_version vertex-2023-10-16; a bearer access token from the credentials.
class VertexProvider : public Provider {
 public:
  VertexProvider(VertexOptions options, std::shared_ptr<http::HttpClient> client, WallClock now = {});

  boost::asio::awaitable<ChatResult> Chat(const ChatRequest& request) override;

  // "google" or "anthropic".
  std::string_view PublisherOf(std::string_view model) const;
  boost::json::object RequestBody(const ChatRequest& request) const;

 private:
  VertexOptions options_;
  std::shared_ptr<http::HttpClient> client_;
  std::shared_ptr<CredentialCache> token_;
  GeminiProvider gemini_;        // its request body
  AnthropicProvider anthropic_;  // its request body
};

}  // namespace skillrunner::providers::google
