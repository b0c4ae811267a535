#include "services/providers/openai_stream.h"

#include <boost/json/parse.hpp>
#include <optional>

#include "services/providers/http_errors.h"
#include "services/providers/sse.h"

namespace skillrunner::providers {
namespace json = boost::json;

namespace {

FinishReason MapFinish(std::string_view reason) {
  if (reason == "stop" || reason == "tool_calls") return FinishReason::kStop;
  if (reason == "length") return FinishReason::kLength;
  if (reason == "content_filter") return FinishReason::kContentFilter;
  return FinishReason::kOther;
}

// The text piece of a delta: `content`, else the first tool call's arguments.
std::string_view DeltaText(const json::object& delta, bool& tool_call) {
  if (const json::value* content = delta.if_contains("content"); content && content->is_string()) {
    return content->as_string();
  }
  const json::value* calls = delta.if_contains("tool_calls");
  if (calls == nullptr || !calls->is_array() || calls->as_array().empty()) return {};
  const json::value& call = calls->as_array()[0];
  const json::value* fn = call.is_object() ? call.as_object().if_contains("function") : nullptr;
  const json::value* arguments = fn && fn->is_object() ? fn->as_object().if_contains("arguments") : nullptr;
  if (arguments == nullptr || !arguments->is_string()) return {};
  tool_call = true;
  return arguments->as_string();
}

class OpenAiChatStream final : public ChatStream {
 public:
  explicit OpenAiChatStream(const ChatRequest& request) : request_(request) {}

  bool Feed(std::string_view bytes) override {
    sse_.Feed(bytes, [this](const SseEvent& event) { Event(event); });
    return !stop_;
  }

  std::expected<ChatResponse, ProviderError> Finish(const http::HttpResponse& response,
                                                    const ChatRequest& request) override {
    if (error_) return std::unexpected(std::move(*error_));
    if (!response.stopped && !done_ && !finish_) {
      ProviderError dropped;
      dropped.kind = ProviderError::Kind::kNetwork;
      dropped.http_status = response.status;
      dropped.message = "the stream ended before the answer was complete";
      dropped.retryable = true;
      return std::unexpected(std::move(dropped));
    }
    answer_.http_status = response.status;
    answer_.raw_body = response.body;
    answer_.stopped_early = response.stopped;
    answer_.request_id = std::string(response.Header("x-request-id").value_or(""));
    if (answer_.request_id.empty()) answer_.request_id = id_;
    if (answer_.model.empty()) answer_.model = request.model;
    answer_.finish_reason = MapFinish(finish_.value_or(""));
    if (!refusal_.empty()) {
      answer_.refusal = refusal_;
      answer_.finish_reason = FinishReason::kRefusal;
    }
    if (!has_usage_) answer_.usage = EstimatedUsage(request, answer_.text);
    return std::move(answer_);
  }

 private:
  void Event(const SseEvent& event) {
    if (stop_ || done_) return;
    if (event.data == "[DONE]") {
      done_ = true;
      return;
    }
    boost::system::error_code ec;
    json::value chunk = json::parse(event.data, ec);
    if (ec || !chunk.is_object()) return Broken("a stream event is not a JSON object");
    const json::object& root = chunk.as_object();
    if (const json::value* error = root.if_contains("error")) return Errored(*error);
    if (answer_.model.empty()) answer_.model = JsonString(root, "model");
    if (id_.empty()) id_ = JsonString(root, "id");
    if (const json::value* usage = root.if_contains("usage"); usage && usage->is_object()) Usage(usage->as_object());
    const json::value* choices = root.if_contains("choices");
    if (choices == nullptr || !choices->is_array() || choices->as_array().empty()) return;
    const json::value& choice = choices->as_array()[0];
    if (!choice.is_object()) return;
    if (const json::value* finish = choice.as_object().if_contains("finish_reason"); finish && finish->is_string()) {
      finish_ = std::string(finish->as_string());
    }
    const json::value* delta = choice.as_object().if_contains("delta");
    if (delta != nullptr && delta->is_object()) Delta(delta->as_object());
  }

  void Delta(const json::object& delta) {
    if (const json::value* refusal = delta.if_contains("refusal"); refusal && refusal->is_string()) {
      refusal_.append(refusal->as_string());
    }
    std::string_view piece = DeltaText(delta, answer_.tool_call);
    if (piece.empty()) return;
    answer_.text.append(piece);
    if (request_.on_text && !request_.on_text(piece)) stop_ = true;
  }

  void Usage(const json::object& usage) {
    has_usage_ = true;
    answer_.usage.input_tokens = JsonCount(usage, "prompt_tokens");
    answer_.usage.output_tokens = JsonCount(usage, "completion_tokens");
    if (const json::value* details = usage.if_contains("prompt_tokens_details"); details && details->is_object()) {
      answer_.usage.cached_input_tokens = JsonCount(details->as_object(), "cached_tokens");
    }
  }

  void Errored(const json::value& error) {
    ProviderError out;
    out.kind = ProviderError::Kind::kHttp;
    out.http_status = 200;
    out.message = "the stream carried an error";
    if (error.is_object()) {
      out.message = JsonString(error.as_object(), "message", out.message);
      out.type = JsonString(error.as_object(), "type");
      out.code = JsonString(error.as_object(), "code");
    }
    out.retryable = true;  // after a 200, the provider's own failure: as a 5xx
    error_ = std::move(out);
    stop_ = true;
  }

  void Broken(std::string message) {
    ProviderError out;
    out.kind = ProviderError::Kind::kProtocol;
    out.http_status = 200;
    out.message = std::move(message);
    error_ = std::move(out);
    stop_ = true;
  }

  const ChatRequest& request_;
  SseParser sse_;
  ChatResponse answer_;
  std::string refusal_;
  std::string id_;
  std::optional<std::string> finish_;
  std::optional<ProviderError> error_;
  bool has_usage_ = false;
  bool done_ = false;
  bool stop_ = false;
};

}  // namespace

std::unique_ptr<ChatStream> MakeOpenAiChatStream(const ChatRequest& request) {
  return std::make_unique<OpenAiChatStream>(request);
}

}  // namespace skillrunner::providers
