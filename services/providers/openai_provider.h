#pragma once

#include <boost/json/object.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "services/common/env.h"
#include "services/http/http_client.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

struct OpenAiOptions {
  std::string name = "openai";  // the provider's name in the config, for messages
  std::string base_url = "https://api.openai.com/v1";
  std::string api_key_env = "OPENAI_API_KEY";
  // "max_completion_tokens" (OpenAI) or "max_tokens" (Ollama and other
  // compatible servers that ignore the newer name; docs/development/providers-notes.md §4).
  std::string max_tokens_field = "max_completion_tokens";
  // How the key is sent (design.md §9.3): "authorization" (Bearer KEY) or
  // "api-key" (KEY; Azure OpenAI).
  std::string auth_header = "authorization";
  // Query parameters on every request (Azure's api-version).
  std::vector<std::pair<std::string, std::string>> query;
};

// The `openai` kind: POST {base_url}/chat/completions
// (docs/development/providers-notes.md §1). The key is read from the
// environment at request time; a server on loopback may run without one.
class OpenAiProvider : public Provider {
 public:
  OpenAiProvider(OpenAiOptions options, std::shared_ptr<http::HttpClient> client, EnvLookup env);

  boost::asio::awaitable<ChatResult> Chat(const ChatRequest& request) override;

  // The JSON body Chat sends (exposed so tests can check it against the spec).
  boost::json::object RequestBody(const ChatRequest& request) const;
  // The same body as compact JSON text (CompactJson(RequestBody(request)),
  // byte for byte), written without building the object or copying the schema.
  std::string RequestBodyText(const ChatRequest& request) const;

 private:
  OpenAiOptions options_;
  std::shared_ptr<http::HttpClient> client_;
  EnvLookup env_;
};

// Parses a 200 answer of /chat/completions.
std::expected<ChatResponse, ProviderError> ParseOpenAiResponse(const http::HttpResponse& response,
                                                               const ChatRequest& request);
// Parses an error answer ({"error":{message,type,param,code}}).
ProviderError ParseOpenAiError(const http::HttpResponse& response);

}  // namespace skillrunner::providers
