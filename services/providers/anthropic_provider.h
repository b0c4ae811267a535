#pragma once

#include <memory>
#include <string>

#include "services/http/http_client.h"
#include "services/providers/openai_provider.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

struct AnthropicOptions {
  std::string name = "anthropic";
  std::string base_url = "https://api.anthropic.com";
  std::string api_key_env = "ANTHROPIC_API_KEY";
  std::string anthropic_version = "2023-06-01";
};

// The `anthropic` kind: POST {base_url}/v1/messages (docs/development/providers-notes.md §2):
// top-level `system`, `max_tokens` always set, native structured output via
// `output_config.format`; text and tool_use answers both understood.
class AnthropicProvider : public Provider {
 public:
  AnthropicProvider(AnthropicOptions options, std::shared_ptr<http::HttpClient> client, EnvLookup env);

  boost::asio::awaitable<ChatResult> Chat(const ChatRequest& request) override;

  boost::json::object RequestBody(const ChatRequest& request) const;

 private:
  AnthropicOptions options_;
  std::shared_ptr<http::HttpClient> client_;
  EnvLookup env_;
};

}  // namespace skillrunner::providers
