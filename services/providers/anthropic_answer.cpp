#include "services/providers/anthropic_answer.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "services/common/json_text.h"
#include "services/providers/http_errors.h"

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
    // design.md §9.4: input_tokens counts every input token processed, the cache's included.
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
