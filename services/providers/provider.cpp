#include "services/providers/provider.h"

#include "services/common/utf8.h"

namespace skillrunner::providers {

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

std::int64_t EstimateTokens(std::string_view utf8) {
  return (CodePoints(utf8) + 3) / 4;
}

Usage EstimatedUsage(const ChatRequest& request, std::string_view answer) {
  std::string prompt;
  for (const auto& m : request.messages) prompt += m.content;
  return Usage{EstimateTokens(prompt), EstimateTokens(answer), true};
}

}  // namespace skillrunner::providers
