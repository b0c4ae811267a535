#include "services/providers/provider.h"

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
  std::int64_t code_points = 0;
  for (unsigned char c : utf8) {
    // Every byte but a continuation byte (10xxxxxx) starts a code point.
    if ((c & 0xC0U) != 0x80U) ++code_points;
  }
  return (code_points + 3) / 4;
}

}  // namespace skillrunner::providers
