#include "services/providers/gemini_answer.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cmath>

#include "services/common/json_text.h"
#include "services/providers/http_errors.h"

namespace skillrunner::providers {
namespace json = boost::json;

namespace {

// The model's safety decisions are refusals; RECITATION (an answer withheld for quoting its
// training data) is the provider's filter, as OpenAI's content_filter is.
FinishReason MapFinishReason(std::string_view reason) {
  if (reason == "STOP") return FinishReason::kStop;
  if (reason == "MAX_TOKENS") return FinishReason::kLength;
  for (std::string_view refused : {"SAFETY", "PROHIBITED_CONTENT", "BLOCKLIST", "SPII"}) {
    if (reason == refused) return FinishReason::kRefusal;
  }
  if (reason == "RECITATION") return FinishReason::kContentFilter;
  return FinishReason::kOther;  // LANGUAGE, OTHER, MALFORMED_FUNCTION_CALL, ...
}

// A protobuf Duration as JSON: "30s", "1.5s".
std::optional<std::chrono::milliseconds> ParseDelay(std::string_view text) {
  if (text.size() < 2 || text.back() != 's') return std::nullopt;
  std::string number(text.substr(0, text.size() - 1));
  char* end = nullptr;
  double seconds = std::strtod(number.c_str(), &end);
  if (end == number.c_str() || *end != '\0' || !(seconds >= 0) || seconds > 86400) return std::nullopt;
  return std::chrono::milliseconds(std::llround(seconds * 1000));
}

}  // namespace

std::expected<ChatResponse, ProviderError> ParseGeminiResponse(const http::HttpResponse& response,
                                                               const ChatRequest& request) {
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec);
  if (ec || !body.is_object()) {
    return std::unexpected(ProtocolError(response, "the answer is not a JSON object", "x-goog-request-id"));
  }
  const json::object& root = body.as_object();
  ChatResponse out;
  out.http_status = response.status;
  out.raw_body = response.body;
  out.model = JsonString(root, "modelVersion");
  if (out.model.empty()) out.model = request.model;
  out.request_id = JsonString(root, "responseId");
  const json::array* candidates = nullptr;
  if (auto* c = root.if_contains("candidates"); c && c->is_array() && !c->as_array().empty()) {
    candidates = &c->as_array();
  }
  if (candidates == nullptr) {
    // No candidate: the prompt itself was blocked.
    auto* feedback = root.if_contains("promptFeedback");
    if (!feedback || !feedback->is_object() || JsonString(feedback->as_object(), "blockReason").empty()) {
      return std::unexpected(ProtocolError(response, "the answer has no candidates", "x-goog-request-id"));
    }
    out.finish_reason = FinishReason::kRefusal;
    out.refusal = "the prompt was blocked (" + JsonString(feedback->as_object(), "blockReason") + ")";
  } else if ((*candidates)[0].is_object()) {
    const json::object& candidate = (*candidates)[0].as_object();
    if (auto* content = candidate.if_contains("content"); content && content->is_object()) {
      if (auto* parts = content->as_object().if_contains("parts"); parts && parts->is_array()) {
        for (const auto& part : parts->as_array()) {
          if (part.is_object() && !part.as_object().contains("thought"))
            out.text += JsonString(part.as_object(), "text");
        }
      }
    }
    const std::string reason = JsonString(candidate, "finishReason");
    out.finish_reason = MapFinishReason(reason);
    if (out.finish_reason == FinishReason::kRefusal) out.refusal = "finishReason " + reason;
  }
  if (auto* usage = root.if_contains("usageMetadata"); usage && usage->is_object()) {
    const json::object& u = usage->as_object();
    out.usage = {JsonCount(u, "promptTokenCount"),
                 JsonCount(u, "candidatesTokenCount") + JsonCount(u, "thoughtsTokenCount"), false,
                 JsonCount(u, "cachedContentTokenCount"), 0};
  } else {
    out.usage = EstimatedUsage(request, out.text);
  }
  return out;
}

ProviderError ParseGeminiError(const http::HttpResponse& response) {
  ProviderError error = ErrorFromStatus(response);
  error.request_id = std::string(response.Header("x-goog-request-id").value_or(""));
  boost::system::error_code ec;
  json::value body = json::parse(response.body, ec);
  const json::object* e = nullptr;
  if (!ec && body.is_object()) {
    if (auto* v = body.as_object().if_contains("error"); v && v->is_object()) e = &v->as_object();
  }
  if (e == nullptr) return error;
  error.type = JsonString(*e, "status");  // RESOURCE_EXHAUSTED, UNAVAILABLE, INVALID_ARGUMENT, ...
  error.code = error.type;
  if (std::string message = JsonString(*e, "message"); !message.empty()) error.message = message;
  if (auto* details = e->if_contains("details"); details && details->is_array()) {
    for (const auto& detail : details->as_array()) {
      if (!detail.is_object()) continue;
      if (JsonString(detail.as_object(), "@type") != "type.googleapis.com/google.rpc.RetryInfo") continue;
      if (auto delay = ParseDelay(JsonString(detail.as_object(), "retryDelay"))) error.retry_after = delay;
    }
  }
  return error;
}

}  // namespace skillrunner::providers
