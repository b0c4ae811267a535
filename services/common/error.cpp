#include "services/common/error.h"

namespace skillrunner {

std::string_view ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInputInvalid:
      return "INPUT_INVALID";
    case ErrorCode::kSkillNotFound:
      return "SKILL_NOT_FOUND";
    case ErrorCode::kMaxRetriesExceeded:
      return "MAX_RETRIES_EXCEEDED";
    case ErrorCode::kTruncated:
      return "TRUNCATED";
    case ErrorCode::kRefused:
      return "REFUSED";
    case ErrorCode::kContentFiltered:
      return "CONTENT_FILTERED";
    case ErrorCode::kProviderError:
      return "PROVIDER_ERROR";
    case ErrorCode::kProviderUnavailable:
      return "PROVIDER_UNAVAILABLE";
    case ErrorCode::kTimeout:
      return "TIMEOUT";
    case ErrorCode::kHandlerFailed:
      return "HANDLER_FAILED";
    case ErrorCode::kJudgeError:
      return "JUDGE_ERROR";
    case ErrorCode::kCancelled:
      return "CANCELLED";
    case ErrorCode::kConfigInvalid:
      return "CONFIG_INVALID";
    case ErrorCode::kOverloaded:
      return "OVERLOADED";
    case ErrorCode::kUnauthorized:
      return "UNAUTHORIZED";
    case ErrorCode::kBudgetExceeded:
      return "BUDGET_EXCEEDED";
    case ErrorCode::kInternal:
      return "INTERNAL";
  }
  return "UNKNOWN";
}

int ExitStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kConfigInvalid:
    case ErrorCode::kSkillNotFound:
    case ErrorCode::kInputInvalid:
    case ErrorCode::kUnauthorized:
    case ErrorCode::kInternal:
      return 2;
    case ErrorCode::kProviderError:
    case ErrorCode::kProviderUnavailable:
    case ErrorCode::kHandlerFailed:
    case ErrorCode::kTimeout:
    case ErrorCode::kCancelled:
    case ErrorCode::kOverloaded:
      return 3;
    case ErrorCode::kMaxRetriesExceeded:
    case ErrorCode::kTruncated:
    case ErrorCode::kRefused:
    case ErrorCode::kContentFiltered:
    case ErrorCode::kJudgeError:
    case ErrorCode::kBudgetExceeded:
      return 4;
  }
  return 3;
}

int JsonRpcCodeFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kOverloaded:
      return -32000;
    case ErrorCode::kUnauthorized:
      return -32001;
    case ErrorCode::kInternal:
      return -32603;  // JSON-RPC's own "Internal error"
    default:
      return -32000 - ExitStatusFor(code);
  }
}

int ExitStatusForJsonRpcCode(std::int64_t code) {
  if (code <= -32002 && code >= -32004) return static_cast<int>(-32000 - code);
  if (code == JsonRpcCodeFor(ErrorCode::kOverloaded)) return 3;
  return 2;
}

Error& Error::WithContext(std::string_view context) {
  message = std::string(context) + ": " + message;
  return *this;
}

}  // namespace skillrunner
