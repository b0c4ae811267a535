#include "services/providers/anthropic_provider.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "services/common/json_text.h"
#include "services/providers/anthropic_answer.h"
#include "services/providers/anthropic_stream.h"
#include "services/providers/http_errors.h"

namespace skillrunner::providers {
namespace json = boost::json;

AnthropicProvider::AnthropicProvider(AnthropicOptions options, std::shared_ptr<http::HttpClient> client, EnvLookup env)
    : options_(std::move(options)), client_(std::move(client)), env_(std::move(env)) {}

json::object AnthropicProvider::RequestBody(const ChatRequest& request) const {
  json::object body;
  body["model"] = request.model;
  body["max_tokens"] = request.max_output_tokens;
  std::string system;
  std::size_t stable = 0;  // of `system`: the prefix marked for the prompt cache
  json::array messages;
  for (const auto& m : request.messages) {
    if (m.role == "system") {
      if (system.empty()) stable = std::min(m.stable_prefix, m.content.size());
      system += (system.empty() ? "" : "\n\n") + m.content;
      continue;
    }
    // The API merges consecutive turns of one role; do it here so the body
    // says exactly what the model sees.
    if (!messages.empty() && messages.back().as_object().at("role").as_string() == m.role) {
      json::string& content = messages.back().as_object()["content"].as_string();
      content.append("\n\n");
      content.append(m.content);
      continue;
    }
    messages.push_back(json::object{{"role", m.role}, {"content", m.content}});
  }
  if (stable > 0) {
    // design.md §9.4: the part that stays the same across calls, marked for the
    // prompt cache; what varies (session mistakes) in a block after it.
    json::array blocks{json::object{
        {"type", "text"}, {"text", system.substr(0, stable)}, {"cache_control", json::object{{"type", "ephemeral"}}}}};
    std::string rest = system.substr(stable);
    if (rest.starts_with("\n\n")) rest.erase(0, 2);
    if (!rest.empty()) blocks.push_back(json::object{{"type", "text"}, {"text", std::move(rest)}});
    body["system"] = std::move(blocks);
  } else if (!system.empty()) {
    body["system"] = system;
  }
  body["messages"] = std::move(messages);
  // Anthropic's temperature runs from 0 to 1.
  if (request.temperature) body["temperature"] = std::clamp(*request.temperature, 0.0, 1.0);
  if (request.response_format.kind == ResponseFormat::Kind::kJsonSchema) {
    body["output_config"] =
        json::object{{"format", json::object{{"type", "json_schema"}, {"schema", request.response_format.Schema()}}}};
  }
  if (request.response_format.kind == ResponseFormat::Kind::kTool) {
    const std::string& name = request.response_format.name;
    body["tools"] = json::array{json::object{{"name", name},
                                             {"input_schema", request.response_format.Schema()},
                                             {"strict", request.response_format.strict}}};
    body["tool_choice"] = json::object{{"type", "tool"}, {"name", name}};
  }
  if (request.on_text) body["stream"] = true;
  return body;
}

boost::asio::awaitable<ChatResult> AnthropicProvider::Chat(const ChatRequest& request) {
  ChatCall call{JoinUrl(options_.base_url, "/v1/messages"),
                {{"anthropic-version", options_.anthropic_version}},
                "x-api-key",
                "",
                ParseAnthropicError,
                ParseAnthropicResponse};
  if (request.on_text) call.stream = MakeAnthropicChatStream(request);
  KeySource source{env_, options_.api_key_env, options_.name, options_.base_url};
  co_return co_await PostChat(*client_, source, std::move(call), CompactJson(RequestBody(request)), request);
}

}  // namespace skillrunner::providers
