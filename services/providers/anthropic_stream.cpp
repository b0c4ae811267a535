#include "services/providers/anthropic_stream.h"

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <map>

#include "services/providers/anthropic_answer.h"
#include "services/providers/http_errors.h"
#include "services/providers/stream_base.h"

namespace skillrunner::providers {
namespace json = boost::json;

namespace {

class AnthropicStream final : public SseStreamBase {
 public:
  using SseStreamBase::SseStreamBase;

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

}  // namespace

std::unique_ptr<ChatStream> MakeAnthropicChatStream(const ChatRequest& request) {
  return std::make_unique<AnthropicStream>(request);
}

}  // namespace skillrunner::providers
