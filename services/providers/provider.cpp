#include "services/providers/provider.h"

#include "services/common/utf8.h"

namespace skillrunner::providers {

const boost::json::value& ResponseFormat::Schema() const {
  static const boost::json::value kNone;
  return schema ? *schema : kNone;
}

std::string_view FinishReasonName(FinishReason reason) {
  switch (reason) {
    case FinishReason::kStop:
      return "stop";
    case FinishReason::kLength:
      return "length";
    case FinishReason::kRefusal:
      return "refusal";
    case FinishReason::kContentFilter:
      return "content_filter";
    case FinishReason::kOther:
      break;
  }
  return "other";
}

std::int64_t EstimateTokens(std::string_view utf8) { return (CodePoints(utf8) + 3) / 4; }

Usage EstimatedUsage(const ChatRequest& request, std::string_view answer) {
  std::string prompt;
  for (const auto& m : request.messages) prompt += m.content;
  return Usage{EstimateTokens(prompt), EstimateTokens(answer), true, 0, 0};
}

boost::json::object RequestForDisplay(const ChatRequest& request) {
  boost::json::object out;
  boost::json::array messages;
  for (const auto& m : request.messages)
    messages.push_back(boost::json::object{{"role", m.role}, {"content", m.content}});
  out["messages"] = std::move(messages);
  const ResponseFormat& format = request.response_format;
  if (format.kind == ResponseFormat::Kind::kJsonObject) {
    out["response_format"] = boost::json::object{{"type", "json_object"}};
  } else if (format.kind == ResponseFormat::Kind::kJsonSchema) {
    out["response_format"] = boost::json::object{
        {"type", "json_schema"}, {"name", format.name}, {"schema", format.Schema()}, {"strict", format.strict}};
  } else if (format.kind == ResponseFormat::Kind::kTool) {
    out["tool"] =
        boost::json::object{{"name", format.name}, {"parameters", format.Schema()}, {"strict", format.strict}};
  }
  if (request.temperature) out["temperature"] = *request.temperature;
  out["max_output_tokens"] = request.max_output_tokens;
  return out;
}

}  // namespace skillrunner::providers
