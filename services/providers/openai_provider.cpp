#include "services/providers/openai_provider.h"

#include <boost/asio/use_awaitable.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "services/common/json_text.h"
#include "services/providers/http_errors.h"
#include "services/providers/openai_stream.h"

namespace skillrunner::providers {
namespace json = boost::json;

namespace {


FinishReason MapFinishReason(std::string_view reason) {
  if (reason == "stop") return FinishReason::kStop;
  if (reason == "length") return FinishReason::kLength;
  if (reason == "content_filter") return FinishReason::kContentFilter;
  return FinishReason::kOther;
}

}  // namespace

OpenAiProvider::OpenAiProvider(OpenAiOptions options, std::shared_ptr<http::HttpClient> client,
                               EnvLookup env)
    : options_(std::move(options)), client_(std::move(client)), env_(std::move(env)) {}

json::object OpenAiProvider::RequestBody(const ChatRequest& request) const {
  json::object body;
  body["model"] = request.model;
  json::array messages;
  for (const auto& m : request.messages) {
    messages.push_back(json::object{{"role", m.role}, {"content", m.content}});
  }
  body["messages"] = std::move(messages);
  if (request.temperature) body["temperature"] = *request.temperature;
  body[options_.max_tokens_field] = request.max_output_tokens;
  switch (request.response_format.kind) {
    case ResponseFormat::Kind::kNone:
      break;
    case ResponseFormat::Kind::kJsonObject:
      body["response_format"] = json::object{{"type", "json_object"}};
      break;
    case ResponseFormat::Kind::kJsonSchema:
      body["response_format"] = json::object{
          {"type", "json_schema"},
          {"json_schema", json::object{{"name", request.response_format.name},
                                       {"schema", request.response_format.Schema()},
                                       {"strict", request.response_format.strict}}}};
      break;
    case ResponseFormat::Kind::kTool: {
      const std::string& name = request.response_format.name;
      body["tools"] = json::array{json::object{
          {"type", "function"},
          {"function", json::object{{"name", name},
                                    {"parameters", request.response_format.Schema()},
                                    {"strict", request.response_format.strict}}}}};
      body["tool_choice"] = json::object{{"type", "function"}, {"function", json::object{{"name", name}}}};
      break;
    }
  }
  if (request.on_text) {
    body["stream"] = true;
    body["stream_options"] = json::object{{"include_usage", true}};
  }
  return body;
}

boost::asio::awaitable<ChatResult> OpenAiProvider::Chat(
    const ChatRequest& request) {
  const bool bearer = options_.auth_header == "authorization";
  ChatCall call{WithQuery(JoinUrl(options_.base_url, "/chat/completions"), options_.query), {},
                options_.auth_header, bearer ? "Bearer " : "", ParseOpenAiError, ParseOpenAiResponse};
  if (request.on_text) call.stream = MakeOpenAiChatStream(request);
  KeySource source{env_, options_.api_key_env, options_.name, options_.base_url};
  co_return co_await PostChat(*client_, source, std::move(call), CompactJson(RequestBody(request)), request);
}

std::expected<ChatResponse, ProviderError> ParseOpenAiResponse(const http::HttpResponse& response,
                                                              const ChatRequest& request) {
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec);
  if (ec || !body.is_object()) {
    return std::unexpected(ProtocolError(response, "the answer is not a JSON object", "x-request-id"));
  }
  const json::object& root = body.as_object();
  auto* choices = root.if_contains("choices");
  if (!choices || !choices->is_array() || choices->as_array().empty() ||
      !choices->as_array()[0].is_object()) {
    return std::unexpected(ProtocolError(response, "the answer has no choices", "x-request-id"));
  }
  const json::object& choice = choices->as_array()[0].as_object();
  auto* message = choice.if_contains("message");
  if (!message || !message->is_object()) {
    return std::unexpected(ProtocolError(response, "the answer's first choice has no message", "x-request-id"));
  }
  const json::object& msg = message->as_object();
  ChatResponse out;
  out.http_status = response.status;
  out.raw_body = response.body;
  out.text = JsonString(msg, "content");
  if (auto* calls = msg.if_contains("tool_calls"); out.text.empty() && calls && calls->is_array() &&
                                                  !calls->as_array().empty()) {
    // A forced function call carries its JSON as a string.
    const json::value& call = calls->as_array()[0];
    if (auto* fn = call.is_object() ? call.as_object().if_contains("function") : nullptr;
        fn && fn->is_object()) {
      out.text = JsonString(fn->as_object(), "arguments");
      out.tool_call = true;
    }
  }
  if (auto* refusal = msg.if_contains("refusal"); refusal && refusal->is_string()) {
    out.refusal = std::string(refusal->as_string());
  }
  out.finish_reason = MapFinishReason(JsonString(choice, "finish_reason"));
  if (out.refusal) out.finish_reason = FinishReason::kRefusal;
  out.model = JsonString(root, "model", request.model);
  out.request_id = std::string(response.Header("x-request-id").value_or(""));
  if (out.request_id.empty()) out.request_id = JsonString(root, "id");
  auto* usage = root.if_contains("usage");
  if (usage && usage->is_object() && usage->as_object().contains("prompt_tokens")) {
    auto count = [&](std::string_view key) { return JsonCount(usage->as_object(), key); };
    out.usage = {count("prompt_tokens"), count("completion_tokens"), false, 0, 0};
    if (auto* details = usage->as_object().if_contains("prompt_tokens_details"); details && details->is_object()) {
      out.usage.cached_input_tokens = JsonCount(details->as_object(), "cached_tokens");
    }
  } else {
    out.usage = EstimatedUsage(request, out.text);
  }
  return out;
}

ProviderError ParseOpenAiError(const http::HttpResponse& response) {
  ProviderError error = ErrorFromStatus(response);
  if (auto id = response.Header("x-request-id")) error.request_id = std::string(*id);
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec);
  const json::object* inner = nullptr;
  if (!ec && body.is_object()) {
    if (auto* e = body.as_object().if_contains("error")) {
      if (e->is_object()) {
        inner = &e->as_object();
      } else if (e->is_string()) {  // Ollama's native {"error": "..."}
        error.message = std::string(e->as_string());
      }
    }
  }
  if (inner) {
    error.message = JsonString(*inner, "message", error.message);
    error.type = JsonString(*inner, "type");
    error.code = JsonString(*inner, "code");
    error.param = JsonString(*inner, "param");
  }
  return error;
}

}  // namespace skillrunner::providers
