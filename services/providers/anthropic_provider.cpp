#include "services/providers/anthropic_provider.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "services/common/json_text.h"
#include "services/providers/http_errors.h"
#include "services/providers/other_streams.h"

namespace skillrunner::providers {
namespace json = boost::json;

namespace {

FinishReason MapStopReason(std::string_view reason) {
  if (reason == "end_turn" || reason == "stop_sequence" || reason == "tool_use") {
    return FinishReason::kStop;
  }
  if (reason == "max_tokens" || reason == "model_context_window_exceeded") {
    return FinishReason::kLength;
  }
  if (reason == "refusal") return FinishReason::kRefusal;
  return FinishReason::kOther;
}

}  // namespace

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
    // DESIGN 9.4: the part that stays the same across calls, marked for the
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

std::expected<ChatResponse, ProviderError> ParseAnthropicResponse(const http::HttpResponse& response,
                                                                  const ChatRequest& request) {
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec);
  if (ec || !body.is_object()) {
    return std::unexpected(ProtocolError(response, "the answer is not a JSON object", "request-id"));
  }
  const json::object& root = body.as_object();
  auto* content = root.if_contains("content");
  if (!content || !content->is_array()) {
    return std::unexpected(ProtocolError(response, "the answer has no content array", "request-id"));
  }
  ChatResponse out;
  out.http_status = response.status;
  out.raw_body = response.body;
  for (const auto& block : content->as_array()) {
    if (!block.is_object()) continue;
    const json::object& b = block.as_object();
    std::string type = JsonString(b, "type");
    if (type == "text") {
      out.text += JsonString(b, "text");
    } else if (type == "tool_use" && out.text.empty()) {
      if (auto* input = b.if_contains("input")) {
        out.text = json::serialize(*input);
        out.tool_call = true;
      }
    }
  }
  out.finish_reason = MapStopReason(JsonString(root, "stop_reason"));
  if (out.finish_reason == FinishReason::kRefusal) {
    std::string explanation;
    if (auto* details = root.if_contains("stop_details"); details && details->is_object()) {
      explanation = JsonString(details->as_object(), "explanation");
    }
    out.refusal = explanation.empty() ? out.text : explanation;
    if (out.refusal->empty()) out.refusal = "refused";
  }
  out.model = JsonString(root, "model");
  if (out.model.empty()) out.model = request.model;
  out.request_id = std::string(response.Header("request-id").value_or(""));
  if (out.request_id.empty()) out.request_id = JsonString(root, "id");
  if (auto* usage = root.if_contains("usage"); usage && usage->is_object()) {
    // DESIGN 9.4: input_tokens counts every input token processed, the cache's included.
    const json::object& u = usage->as_object();
    const std::int64_t read = JsonCount(u, "cache_read_input_tokens");
    const std::int64_t written = JsonCount(u, "cache_creation_input_tokens");
    out.usage = {JsonCount(u, "input_tokens") + read + written, JsonCount(u, "output_tokens"), false, read, written};
  } else {
    out.usage = EstimatedUsage(request, out.text);
  }
  return out;
}

ProviderError ParseAnthropicError(const http::HttpResponse& response) {
  ProviderError error = ErrorFromStatus(response);
  error.request_id = std::string(response.Header("request-id").value_or(""));
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec);
  if (!ec && body.is_object()) {
    const json::object& root = body.as_object();
    if (auto* e = root.if_contains("error"); e && e->is_object()) {
      error.type = JsonString(e->as_object(), "type");
      std::string message = JsonString(e->as_object(), "message");
      if (!message.empty()) error.message = message;
    }
    if (error.request_id.empty()) error.request_id = JsonString(root, "request_id");
  }
  return error;
}

}  // namespace skillrunner::providers
