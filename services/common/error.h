#pragma once

#include <boost/json/object.hpp>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner {

// Every failure at a front door is one of these codes (design.md §6.1).
enum class ErrorCode {
  kInputInvalid,
  kSkillNotFound,
  kMaxRetriesExceeded,
  kTruncated,
  kRefused,
  kContentFiltered,
  kProviderError,
  kProviderUnavailable,
  kTimeout,
  kHandlerFailed,
  kJudgeError,
  kCancelled,
  kConfigInvalid,
  kOverloaded,
  kUnauthorized,
  kBudgetExceeded,  // design.md §9.4: the next provider call could overrun max_cost_usd
  kInternal,        // design.md §9.9: a failure no other code fits (a file or database that fails)
};

// "INPUT_INVALID", "SKILL_NOT_FOUND", ...
std::string_view ErrorCodeName(ErrorCode code);

// Exit status of `skillrunner run` for a failure with this code: 2 for "your
// input/skill/config is wrong" (and INTERNAL), 3 for "the provider/handler
// failed", 4 for "the model's answer could not be used" (design.md §6.1).
int ExitStatusFor(ErrorCode code);

// The JSON-RPC error code the socket answers with for this failure: -32000
// OVERLOADED, -32001 UNAUTHORIZED, -32603 INTERNAL (JSON-RPC's "Internal
// error"), else -32000 minus the exit status.
int JsonRpcCodeFor(ErrorCode code);

// The other way, for clients (`skillrunner call`): -32002..-32004 → 2..4,
// -32000 OVERLOADED → 3 (try again later), anything else (protocol errors,
// UNAUTHORIZED, -32603 INTERNAL) → 2.
int ExitStatusForJsonRpcCode(std::int64_t code);

// One failure at one place: an RFC 6901 JSON pointer and what was wrong there.
struct FieldError {
  std::string path;
  std::string message;

  friend bool operator==(const FieldError&, const FieldError&) = default;
};

// The one error value passed between modules. The message gains context as it
// travels up; `errors` lists per-path failures (INPUT_INVALID, validation);
// `details` holds code-specific facts (exit_status, http_status, ...).
struct Error {
  ErrorCode code = ErrorCode::kConfigInvalid;
  std::string message;
  std::vector<FieldError> errors;
  boost::json::object details;

  // Prefixes the message with "context: ".
  Error& WithContext(std::string_view context);
};

template <typename T>
using Result = std::expected<T, Error>;

inline std::unexpected<Error> Fail(ErrorCode code, std::string message) {
  return std::unexpected(Error{code, std::move(message), {}, {}});
}

// Passes a failure up with "context: " in front of its message.
inline std::unexpected<Error> Fail(Error error, std::string_view context) {
  error.WithContext(context);
  return std::unexpected(std::move(error));
}

}  // namespace skillrunner
