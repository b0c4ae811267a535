#include "services/providers/aws/bedrock_answer.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cctype>

#include "services/providers/http_errors.h"

namespace skillrunner::providers::aws {
namespace json = boost::json;

namespace {

constexpr std::string_view kRequestIdHeader = "x-amzn-requestid";

FinishReason MapStopReason(std::string_view reason) {
  if (reason == "max_tokens" || reason == "model_context_window_exceeded") return FinishReason::kLength;
  if (reason == "guardrail_intervened" || reason == "content_filtered") return FinishReason::kContentFilter;
  if (reason == "end_turn" || reason == "tool_use" || reason == "stop_sequence") return FinishReason::kStop;
  return FinishReason::kOther;
}

void ReadContent(const json::array& content, ChatResponse& out) {
  for (const auto& block : content) {
    if (!block.is_object()) continue;
    const json::object& b = block.as_object();
    if (auto* text = b.if_contains("text"); text && text->is_string()) {
      if (!out.tool_call) out.text += std::string(text->as_string());
    } else if (auto* tool = b.if_contains("toolUse"); tool && tool->is_object() && !out.tool_call) {
      if (auto* input = tool->as_object().if_contains("input")) {
        out.text = json::serialize(*input);
        out.tool_call = true;
      }
    }
  }
}

// Transient, rate-limited and terminal, by the error type (design.md §11.6).
void Classify(ProviderError& error) {
  const std::string& type = error.type;
  error.rate_limited = type == "ThrottlingException";
  if (type == "ThrottlingException" || type == "ModelNotReadyException" || type == "ServiceUnavailableException" ||
      type == "InternalServerException" || type == "ModelTimeoutException" || type == "ModelStreamErrorException") {
    error.retryable = true;
  } else if (!type.empty()) {
    error.retryable = false;
  }
  if (type == "ValidationException") {
    for (std::string_view word : {"outputConfig", "textFormat", "structured output"}) {
      if (error.message.find(word) != std::string::npos) error.param = "response_format";
    }
    for (std::string_view word : {"toolConfig", "toolChoice", "tool use"}) {
      if (error.message.find(word) != std::string::npos) error.param = "tools";
    }
  }
}

std::string MessageOf(const json::value& body) {
  if (!body.is_object()) return {};
  const json::object& o = body.as_object();
  std::string message = JsonString(o, "message");
  return message.empty() ? JsonString(o, "Message") : message;
}

}  // namespace

std::expected<ChatResponse, ProviderError> ParseBedrockAnswer(const json::object& root,
                                                              const http::HttpResponse& response,
                                                              const ChatRequest& request) {
  const json::value* content = root.if_contains("output");
  if (content && content->is_object()) content = content->as_object().if_contains("message");
  if (content && content->is_object()) content = content->as_object().if_contains("content");
  if (!content || !content->is_array()) {
    return std::unexpected(ProtocolError(response, "the answer has no output.message.content", kRequestIdHeader));
  }
  ChatResponse out;
  out.http_status = response.status;
  out.raw_body = response.body;
  ReadContent(content->as_array(), out);
  out.finish_reason = MapStopReason(JsonString(root, "stopReason"));
  out.model = request.model;
  out.request_id = std::string(response.Header(kRequestIdHeader).value_or(""));
  if (auto* usage = root.if_contains("usage"); usage && usage->is_object()) {
    const json::object& u = usage->as_object();
    const std::int64_t read = JsonCount(u, "cacheReadInputTokens");
    const std::int64_t written = JsonCount(u, "cacheWriteInputTokens");
    out.usage = {JsonCount(u, "inputTokens") + read + written, JsonCount(u, "outputTokens"), false, read, written};
  } else {
    out.usage = EstimatedUsage(request, out.text);
  }
  return out;
}

std::expected<ChatResponse, ProviderError> ParseBedrockResponse(const http::HttpResponse& response,
                                                                const ChatRequest& request) {
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec);
  if (ec || !body.is_object()) {
    return std::unexpected(ProtocolError(response, "the answer is not a JSON object", kRequestIdHeader));
  }
  return ParseBedrockAnswer(body.as_object(), response, request);
}

ProviderError ParseBedrockError(const http::HttpResponse& response) {
  ProviderError error = ErrorFromStatus(response);
  error.request_id = std::string(response.Header(kRequestIdHeader).value_or(""));
  std::string type(response.Header("x-amzn-errortype").value_or(""));
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec);
  if (type.empty() && !ec && body.is_object()) type = JsonString(body.as_object(), "__type");
  if (std::size_t colon = type.find(':'); colon != std::string::npos) type.resize(colon);
  if (std::size_t hash = type.rfind('#'); hash != std::string::npos) type.erase(0, hash + 1);
  error.type = type;
  if (!ec) {
    if (std::string message = MessageOf(body); !message.empty()) error.message = message;
  }
  Classify(error);
  return error;
}

ProviderError BedrockStreamError(std::string_view type, std::string_view payload) {
  ProviderError error;
  error.kind = ProviderError::Kind::kHttp;
  error.http_status = 200;
  // The stream names its exceptions as the members of its event union: throttlingException.
  error.type = std::string(type);
  if (!error.type.empty()) error.type[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(error.type[0])));
  boost::system::error_code ec;
  json::value body = json::parse(payload, ec);
  error.message = ec ? std::string(type) : MessageOf(body);
  if (error.message.empty()) error.message = std::string(type);
  error.raw_body = std::string(payload);
  Classify(error);
  if (error.rate_limited.value_or(false)) error.http_status = 429;  // a throttle inside the stream is the limit's
  return error;
}

}  // namespace skillrunner::providers::aws
