#include "services/providers/gemini_provider.h"

#include <boost/json/parse.hpp>
#include <boost/url/encode.hpp>
#include <boost/url/rfc/pchars.hpp>
#include <cmath>

#include "services/common/json_text.h"
#include "services/providers/gemini_answer.h"
#include "services/providers/gemini_stream.h"
#include "services/providers/http_errors.h"

namespace skillrunner::providers {
namespace json = boost::json;

GeminiProvider::GeminiProvider(GeminiOptions options, std::shared_ptr<http::HttpClient> client, EnvLookup env)
    : options_(std::move(options)), client_(std::move(client)), env_(std::move(env)) {}

json::object GeminiProvider::RequestBody(const ChatRequest& request) const {
  json::object body;
  std::string system;
  json::array contents;
  for (const auto& m : request.messages) {
    if (m.role == "system") {
      system += (system.empty() ? "" : "\n\n") + m.content;
      continue;
    }
    const char* role = m.role == "assistant" ? "model" : "user";
    contents.push_back(json::object{{"role", role}, {"parts", json::array{json::object{{"text", m.content}}}}});
  }
  if (!system.empty()) {
    body["systemInstruction"] = json::object{{"parts", json::array{json::object{{"text", system}}}}};
  }
  body["contents"] = std::move(contents);
  json::object config;
  if (request.temperature) config["temperature"] = *request.temperature;
  config["maxOutputTokens"] = request.max_output_tokens;
  if (request.metadata.seed) config["seed"] = static_cast<std::int64_t>(*request.metadata.seed & 0x7fffffff);
  const ResponseFormat& format = request.response_format;
  if (format.kind == ResponseFormat::Kind::kJsonObject || format.kind == ResponseFormat::Kind::kJsonSchema) {
    config["responseMimeType"] = "application/json";
  }
  if (format.kind == ResponseFormat::Kind::kJsonSchema) config["responseJsonSchema"] = format.Schema();
  body["generationConfig"] = std::move(config);
  return body;
}

boost::asio::awaitable<ChatResult> GeminiProvider::Chat(const ChatRequest& request) {
  // The model name is one path segment: percent-encode what would break it.
  std::string model = boost::urls::encode(request.model, boost::urls::pchars);
  // design.md §10.7: streamed as server-sent events when the caller streams.
  const std::string method = request.on_text ? ":streamGenerateContent?alt=sse" : ":generateContent";
  ChatCall call{JoinUrl(options_.base_url, "/v1beta/models/" + model + method),
                {},
                "x-goog-api-key",
                "",
                ParseGeminiError,
                ParseGeminiResponse};
  if (request.on_text) call.stream = MakeGeminiChatStream(request);
  KeySource source{env_, options_.api_key_env, options_.name, options_.base_url};
  co_return co_await PostChat(*client_, source, std::move(call), CompactJson(RequestBody(request)), request);
}

}  // namespace skillrunner::providers
