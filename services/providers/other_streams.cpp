#include "services/providers/other_streams.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <map>
#include <optional>

#include "services/providers/anthropic_provider.h"
#include "services/providers/gemini_provider.h"
#include "services/providers/http_errors.h"
#include "services/providers/sse.h"

namespace skillrunner::providers {
namespace json = boost::json;

namespace {

ProviderError StreamError(const json::value* error, std::string fallback, bool retryable) {
  ProviderError out;
  out.kind = retryable ? ProviderError::Kind::kHttp : ProviderError::Kind::kProtocol;
  out.http_status = 200;
  out.message = std::move(fallback);
  if (error != nullptr && error->is_object()) {
    out.message = JsonString(error->as_object(), "message", out.message);
    out.type = JsonString(error->as_object(), "type");
    out.code = JsonString(error->as_object(), "status");
  }
  out.retryable = retryable;
  return out;
}

ProviderError Dropped(int status) {
  ProviderError out;
  out.kind = ProviderError::Kind::kNetwork;
  out.http_status = status;
  out.message = "the stream ended before the answer was complete";
  out.retryable = true;
  return out;
}

// What every stream shares: the SSE reading, the text so far, on_text, the
// error that ended it.
class StreamBase : public ChatStream {
 public:
  explicit StreamBase(const ChatRequest& request) : request_(request) {}
  bool Feed(std::string_view bytes) override {
    sse_.Feed(bytes, [this](const SseEvent& event) {
      if (!stop_) Event(event);
    });
    return !stop_;
  }

  // The error that ended the stream, the cut answer of a stream stopped on
  // purpose, else the whole answer (Complete).
  std::expected<ChatResponse, ProviderError> Finish(const http::HttpResponse& response,
                                                    const ChatRequest& request) final {
    if (error_) return std::unexpected(std::move(*error_));
    if (response.stopped) return Cut(response, request);
    return Complete(response, request);
  }

 protected:
  virtual void Event(const SseEvent& event) = 0;
  virtual std::expected<ChatResponse, ProviderError> Complete(const http::HttpResponse& response,
                                                              const ChatRequest& request) = 0;
  void Piece(std::string_view piece) {
    text_.append(piece);
    if (!piece.empty() && request_.on_text && !request_.on_text(piece)) stop_ = true;
  }
  void End(ProviderError error) {
    error_ = std::move(error);
    stop_ = true;
  }
  // The cut answer of a stream stopped on purpose.
  ChatResponse Cut(const http::HttpResponse& response, const ChatRequest& request) const {
    ChatResponse out;
    out.text = text_;
    out.tool_call = request.response_format.kind == ResponseFormat::Kind::kTool;
    out.http_status = response.status;
    out.raw_body = response.body;
    out.model = request.model;
    out.stopped_early = true;
    out.usage = EstimatedUsage(request, text_);
    return out;
  }

  const ChatRequest& request_;
  SseParser sse_;
  std::string text_;
  std::optional<ProviderError> error_;
  bool stop_ = false;
};

class AnthropicStream final : public StreamBase {
 public:
  using StreamBase::StreamBase;

  std::expected<ChatResponse, ProviderError> Complete(const http::HttpResponse& response,
                                                      const ChatRequest& request) override {
    if (!stopped_) return std::unexpected(Dropped(response.status));
    json::array content;
    for (auto& [index, block] : blocks_) content.push_back(std::move(block));
    message_["content"] = std::move(content);
    http::HttpResponse whole = response;
    whole.body = json::serialize(message_);
    auto answer = ParseAnthropicResponse(whole, request);
    if (answer) answer->raw_body = response.body;
    return answer;
  }

 private:
  void Event(const SseEvent& event) override {
    boost::system::error_code ec;
    json::value data = json::parse(event.data, ec);
    if (ec || !data.is_object()) return End(StreamError(nullptr, "a stream event is not a JSON object", false));
    const json::object& root = data.as_object();
    const std::string type = JsonString(root, "type");
    if (type == "error") return End(StreamError(root.if_contains("error"), "the stream carried an error", true));
    if (type == "message_start" && root.contains("message") && root.at("message").is_object()) {
      message_ = root.at("message").as_object();
    } else if (type == "content_block_start" && root.contains("content_block")) {
      blocks_[JsonCount(root, "index")] = root.at("content_block");
    } else if (type == "content_block_delta" && root.contains("delta") && root.at("delta").is_object()) {
      Delta(JsonCount(root, "index"), root.at("delta").as_object());
    } else if (type == "content_block_stop") {
      BlockStop(JsonCount(root, "index"));
    } else if (type == "message_delta") {
      MessageDelta(root);
    } else if (type == "message_stop") {
      stopped_ = true;
    }
  }

  void Delta(std::int64_t index, const json::object& delta) {
    const std::string type = JsonString(delta, "type");
    const bool tool_mode = request_.response_format.kind == ResponseFormat::Kind::kTool;
    json::object* block = blocks_.contains(index) ? blocks_[index].if_object() : nullptr;
    if (type == "text_delta") {
      const std::string text = JsonString(delta, "text");
      if (block != nullptr) (*block)["text"] = JsonString(*block, "text") + text;
      if (!tool_mode) Piece(text);
    } else if (type == "input_json_delta") {
      const std::string partial = JsonString(delta, "partial_json");
      tool_json_[index] += partial;
      if (tool_mode) Piece(partial);
    }
  }

  void BlockStop(std::int64_t index) {
    auto json_text = tool_json_.find(index);
    if (json_text == tool_json_.end() || !blocks_[index].is_object()) return;
    boost::system::error_code ec;
    json::value input = json::parse(json_text->second.empty() ? "{}" : json_text->second, ec);
    if (!ec) blocks_[index].as_object()["input"] = std::move(input);
  }

  void MessageDelta(const json::object& root) {
    if (const json::value* delta = root.if_contains("delta"); delta && delta->is_object()) {
      for (const auto& [key, value] : delta->as_object()) message_[key] = value;
    }
    const json::value* usage = root.if_contains("usage");
    if (usage == nullptr || !usage->is_object()) return;
    json::value& total = message_["usage"];
    if (!total.is_object()) total = json::object();
    for (const auto& [key, value] : usage->as_object()) {
      if (!value.is_null()) total.as_object()[key] = value;
    }
  }

  json::object message_;
  std::map<std::int64_t, json::value> blocks_;
  std::map<std::int64_t, std::string> tool_json_;
  bool stopped_ = false;
};

class GeminiStream final : public StreamBase {
 public:
  using StreamBase::StreamBase;

  std::expected<ChatResponse, ProviderError> Complete(const http::HttpResponse& response,
                                                      const ChatRequest& request) override {
    if (!last_ || !finished_) return std::unexpected(Dropped(response.status));
    ChatResponse out = std::move(*last_);
    out.text = text_;
    out.raw_body = response.body;
    out.finish_reason = finish_;
    out.usage = usage_ ? *usage_ : EstimatedUsage(request, text_);
    return out;
  }

 private:
  void Event(const SseEvent& event) override {
    boost::system::error_code ec;
    json::value data = json::parse(event.data, ec);
    if (!ec && data.is_object() && data.as_object().contains("error")) {
      return End(StreamError(data.as_object().if_contains("error"), "the stream carried an error", true));
    }
    http::HttpResponse part;
    part.status = 200;
    part.body = event.data;
    auto parsed = ParseGeminiResponse(part, request_);
    if (!parsed) return End(std::move(parsed.error()));
    const json::object& root = data.as_object();
    if (root.contains("usageMetadata")) usage_ = parsed->usage;
    const json::value* candidates = root.if_contains("candidates");
    if (candidates != nullptr && candidates->is_array() && !candidates->as_array().empty() &&
        candidates->as_array()[0].is_object() && candidates->as_array()[0].as_object().contains("finishReason")) {
      finish_ = parsed->finish_reason;
      finished_ = true;
    } else if (candidates == nullptr) {
      finish_ = parsed->finish_reason;  // a blocked prompt
      finished_ = true;
    }
    std::string piece = parsed->text;
    last_ = std::move(*parsed);
    Piece(piece);
  }

  std::optional<ChatResponse> last_;
  std::optional<Usage> usage_;
  FinishReason finish_ = FinishReason::kOther;
  bool finished_ = false;
};

}  // namespace

std::unique_ptr<ChatStream> MakeAnthropicChatStream(const ChatRequest& request) {
  return std::make_unique<AnthropicStream>(request);
}

std::unique_ptr<ChatStream> MakeGeminiChatStream(const ChatRequest& request) {
  return std::make_unique<GeminiStream>(request);
}

}  // namespace skillrunner::providers
