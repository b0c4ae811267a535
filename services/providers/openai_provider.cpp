#include "services/providers/openai_provider.h"

#include <boost/asio/use_awaitable.hpp>
#include <boost/json/monotonic_resource.hpp>
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

// The schema's compact text: the last one written on this thread is reused
// (each skill's wire schema is one shared value, sent with every request; the
// cache holds it, so its address never names another schema).
const std::string& SchemaText(const ResponseFormat& format) {
  thread_local std::shared_ptr<const json::value> last;
  thread_local std::string text;
  if (!format.schema) {
    static const std::string null_text = "null";
    return null_text;
  }
  if (last != format.schema) {
    text.clear();
    AppendCompactJson(*format.schema, text);
    last = format.schema;
  }
  return text;
}

void AppendResponseFormat(const ResponseFormat& format, std::string& out) {
  switch (format.kind) {
    case ResponseFormat::Kind::kNone:
      break;
    case ResponseFormat::Kind::kJsonObject:
      out += R"(,"response_format":{"type":"json_object"})";
      break;
    case ResponseFormat::Kind::kJsonSchema:
      out += R"(,"response_format":{"type":"json_schema","json_schema":{"name":)";
      AppendJsonString(format.name, out);
      out += R"(,"schema":)";
      out += SchemaText(format);
      out += format.strict ? R"(,"strict":true}})" : R"(,"strict":false}})";
      break;
    case ResponseFormat::Kind::kTool:
      out += R"(,"tools":[{"type":"function","function":{"name":)";
      AppendJsonString(format.name, out);
      out += R"(,"parameters":)";
      out += SchemaText(format);
      out += format.strict ? R"(,"strict":true}}])" : R"(,"strict":false}}])";
      out += R"(,"tool_choice":{"type":"function","function":{"name":)";
      AppendJsonString(format.name, out);
      out += "}}";
      break;
  }
}

}  // namespace

OpenAiProvider::OpenAiProvider(OpenAiOptions options, std::shared_ptr<http::HttpClient> client, EnvLookup env)
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
      body["response_format"] = json::object{{"type", "json_schema"},
                                             {"json_schema", json::object{{"name", request.response_format.name},
                                                                          {"schema", request.response_format.Schema()},
                                                                          {"strict", request.response_format.strict}}}};
      break;
    case ResponseFormat::Kind::kTool: {
      const std::string& name = request.response_format.name;
      body["tools"] =
          json::array{json::object{{"type", "function"},
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

std::string OpenAiProvider::RequestBodyText(const ChatRequest& request) const {
  const std::string& field = options_.max_tokens_field;
  if (field == "model" || field == "messages" || field == "temperature") return CompactJson(RequestBody(request));
  std::string out;
  out.reserve(256 + request.model.size() +
              (request.response_format.schema ? SchemaText(request.response_format).size() : 0));
  out += R"({"model":)";
  AppendJsonString(request.model, out);
  out += R"(,"messages":[)";
  for (std::size_t i = 0; i < request.messages.size(); ++i) {
    out += i == 0 ? R"({"role":)" : R"(,{"role":)";
    AppendJsonString(request.messages[i].role, out);
    out += R"(,"content":)";
    AppendJsonString(request.messages[i].content, out);
    out.push_back('}');
  }
  out.push_back(']');
  if (request.temperature) {
    out += R"(,"temperature":)";
    AppendCompactJson(json::value(*request.temperature), out);
  }
  out.push_back(',');
  AppendJsonString(field, out);
  out.push_back(':');
  out += std::to_string(request.max_output_tokens);
  AppendResponseFormat(request.response_format, out);
  if (request.on_text) out += R"(,"stream":true,"stream_options":{"include_usage":true})";
  out.push_back('}');
  return out;
}

boost::asio::awaitable<ChatResult> OpenAiProvider::Chat(const ChatRequest& request) {
  const bool bearer = options_.auth_header == "authorization";
  ChatCall call{WithQuery(JoinUrl(options_.base_url, "/chat/completions"), options_.query),
                {},
                options_.auth_header,
                bearer ? "Bearer " : "",
                ParseOpenAiError,
                ParseOpenAiResponse};
  // The id OpenAI's reference documents for a request of the client's own naming ("Debugging
  // requests"): this invocation and request, so that a retry can be paired with the refusal
  // before it in a provider's or proxy's log.
  if (!request.metadata.invocation_id.empty()) {
    call.headers.emplace_back("x-client-request-id",
                              request.metadata.invocation_id + "." + std::to_string(request.metadata.attempt));
  }
  if (request.on_text) call.stream = MakeOpenAiChatStream(request);
  KeySource source{env_, options_.api_key_env, options_.name, options_.base_url};
  co_return co_await PostChat(*client_, source, std::move(call), RequestBodyText(request), request);
}

std::expected<ChatResponse, ProviderError> ParseOpenAiResponse(const http::HttpResponse& response,
                                                               const ChatRequest& request) {
  // The parsed answer lives only in this function: its nodes come from one
  // block (on the stack for a small answer), freed at once.
  unsigned char buffer[4096];
  json::monotonic_resource memory(buffer, sizeof buffer);
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec, &memory);
  if (ec || !body.is_object()) {
    return std::unexpected(ProtocolError(response, "the answer is not a JSON object", "x-request-id"));
  }
  const json::object& root = body.as_object();
  auto* choices = root.if_contains("choices");
  if (!choices || !choices->is_array() || choices->as_array().empty() || !choices->as_array()[0].is_object()) {
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
  if (auto* calls = msg.if_contains("tool_calls");
      out.text.empty() && calls && calls->is_array() && !calls->as_array().empty()) {
    // A forced function call carries its JSON as a string.
    const json::value& call = calls->as_array()[0];
    if (auto* fn = call.is_object() ? call.as_object().if_contains("function") : nullptr; fn && fn->is_object()) {
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
