#pragma once

// What the Anthropic, Gemini and Bedrock streams share (openai_stream has its
// own shape): the text so far, on_text, the error that ended the stream, and
// how each kind of ending becomes the answer or an error; the SSE reading of
// the first two.

#include <boost/json/value.hpp>
#include <expected>
#include <optional>
#include <string>

#include "services/providers/chat_stream.h"
#include "services/providers/sse.h"

namespace skillrunner::providers {

// An `error` event (or an event that is no JSON object) as the error that
// ends the stream; `retryable` for the provider's own errors.
ProviderError StreamError(const boost::json::value* error, std::string fallback, bool retryable);

// A stream that ended (with HTTP `status`) before the answer was complete.
ProviderError Dropped(int status);

// What every stream that assembles its answer shares: the text so far, on_text, the error that
// ended the stream, and how each kind of ending becomes the answer or an error. How the bytes are
// framed (server-sent events, AWS's event stream) is the subclass's Feed.
class StreamBase : public ChatStream {
 public:
  explicit StreamBase(const ChatRequest& request) : request_(request) {}

  // The error that ended the stream, the cut answer of a stream stopped on purpose, else the whole
  // answer (Complete).
  std::expected<ChatResponse, ProviderError> Finish(const http::HttpResponse& response,
                                                    const ChatRequest& request) final {
    if (error_) return std::unexpected(std::move(*error_));
    if (response.stopped) return Cut(response, request);
    return Complete(response, request);
  }

 protected:
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
  std::string text_;
  std::optional<ProviderError> error_;
  bool stop_ = false;
};

// The base of a stream read as server-sent events (Anthropic, Gemini).
class SseStreamBase : public StreamBase {
 public:
  using StreamBase::StreamBase;
  bool Feed(std::string_view bytes) override {
    sse_.Feed(bytes, [this](const SseEvent& event) {
      if (!stop_) Event(event);
    });
    return !stop_;
  }

 protected:
  virtual void Event(const SseEvent& event) = 0;

  SseParser sse_;
};

}  // namespace skillrunner::providers
