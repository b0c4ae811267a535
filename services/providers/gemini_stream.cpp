#include "services/providers/gemini_stream.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <optional>

#include "services/providers/gemini_answer.h"
#include "services/providers/http_errors.h"
#include "services/providers/stream_base.h"

namespace skillrunner::providers {
namespace json = boost::json;

namespace {

class GeminiStream final : public SseStreamBase {
 public:
  using SseStreamBase::SseStreamBase;

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

std::unique_ptr<ChatStream> MakeGeminiChatStream(const ChatRequest& request) {
  return std::make_unique<GeminiStream>(request);
}

}  // namespace skillrunner::providers
