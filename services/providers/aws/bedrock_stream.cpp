#include "services/providers/aws/bedrock_stream.h"

#include <boost/json/parse.hpp>
#include <map>
#include <set>

#include "services/providers/aws/bedrock_answer.h"
#include "services/providers/aws/event_stream.h"
#include "services/providers/http_errors.h"
#include "services/providers/stream_base.h"

namespace skillrunner::providers::aws {
namespace json = boost::json;

namespace {

// A frame damaged on its way, as a 2xx body a proxy cut: transient.
ProviderError Corrupt(std::string message) {
  ProviderError error;
  error.kind = ProviderError::Kind::kProtocol;
  error.http_status = 200;
  error.message = std::move(message);
  error.retryable = true;
  error.reason = "malformed_body";
  return error;
}

class BedrockStream final : public StreamBase {
 public:
  using StreamBase::StreamBase;

  bool Feed(std::string_view bytes) override {
    auto broken = decoder_.Feed(bytes, [this](const EventMessage& message) {
      if (!stop_) Event(message);
    });
    if (broken && !error_) End(Corrupt(*broken));
    return !stop_;
  }

 protected:
  std::expected<ChatResponse, ProviderError> Complete(const http::HttpResponse& response,
                                                      const ChatRequest& request) override {
    if (!stopped_) return std::unexpected(Dropped(response.status));
    json::array content;
    for (auto& [index, block] : blocks_) content.push_back(std::move(block));
    json::object root = metadata_;
    root["output"] = json::object{{"message", json::object{{"role", "assistant"}, {"content", std::move(content)}}}};
    root["stopReason"] = stop_reason_;
    auto answer = ParseBedrockAnswer(root, response, request);
    if (answer) answer->raw_body = "[" + std::to_string(response.body.size()) + " bytes of event stream]";
    return answer;
  }

 private:
  void Event(const EventMessage& message) {
    if (message.Header(":message-type") == "exception") {
      return End(BedrockStreamError(message.Header(":exception-type"), message.payload));
    }
    boost::system::error_code ec;
    json::value data = json::parse(message.payload, ec);
    if (ec || !data.is_object()) return End(StreamError(nullptr, "a stream event is not a JSON object", false));
    const json::object& root = data.as_object();
    const std::string_view type = message.Header(":event-type");
    const std::int64_t index = JsonCount(root, "contentBlockIndex");
    if (type == "contentBlockStart") {
      const json::value* start = root.if_contains("start");
      if (start && start->is_object() && start->as_object().contains("toolUse")) tools_.insert(index);
    } else if (type == "contentBlockDelta" && root.contains("delta") && root.at("delta").is_object()) {
      Delta(index, root.at("delta").as_object());
    } else if (type == "contentBlockStop") {
      BlockStop(index);
    } else if (type == "messageStop") {
      stop_reason_ = JsonString(root, "stopReason");
      stopped_ = true;
    } else if (type == "metadata") {
      metadata_ = root;  // usage, after messageStop
    }
  }

  void Delta(std::int64_t index, const json::object& delta) {
    const bool tool_mode = request_.response_format.kind == ResponseFormat::Kind::kTool;
    if (auto* text = delta.if_contains("text"); text && text->is_string()) {
      texts_[index] += std::string(text->as_string());
      if (!tool_mode) Piece(text->as_string());
    } else if (auto* tool = delta.if_contains("toolUse"); tool && tool->is_object()) {
      const std::string partial = JsonString(tool->as_object(), "input");
      tool_json_[index] += partial;
      tools_.insert(index);
      if (tool_mode) Piece(partial);
    }
  }

  void BlockStop(std::int64_t index) {
    if (tools_.contains(index)) {
      boost::system::error_code ec;
      const std::string& text = tool_json_[index];
      json::value input = json::parse(text.empty() ? "{}" : text, ec);
      if (ec) return End(StreamError(nullptr, "a tool call's input in the stream is not JSON", false));
      blocks_[index] = json::object{{"toolUse", json::object{{"input", std::move(input)}}}};
    } else {
      blocks_[index] = json::object{{"text", texts_[index]}};
    }
  }

  EventStreamDecoder decoder_;
  std::map<std::int64_t, json::value> blocks_;
  std::map<std::int64_t, std::string> texts_;
  std::map<std::int64_t, std::string> tool_json_;
  std::set<std::int64_t> tools_;
  json::object metadata_;
  std::string stop_reason_;
  bool stopped_ = false;  // messageStop came: the answer is whole
};

}  // namespace

std::unique_ptr<ChatStream> MakeBedrockChatStream(const ChatRequest& request) {
  return std::make_unique<BedrockStream>(request);
}

}  // namespace skillrunner::providers::aws
