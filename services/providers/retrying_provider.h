#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>
#include <variant>

#include "services/common/error.h"
#include "services/common/invocation.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

// design.md §5.2 `retry.transient`.
struct TransientRetryPolicy {
  int max_retries = 3;             // 5xx, 408, 409, connection failures, timeouts
  int max_rate_limit_retries = 8;  // 429 and 529, a budget of their own (design.md §9.6)
  std::chrono::milliseconds initial_delay{2000};
  double multiplier = 2.0;
  std::chrono::milliseconds max_delay{8000};
  std::chrono::milliseconds max_server_delay{60000};
};

struct RetryingProviderOptions {
  // U[0,1) for the jitter that shortens each backoff by up to 25%.
  std::function<double()> random;
  // U[0,1) for the spread added to every wait a server gave and every
  // rate-limit wait, so that the callers a 429 sent away do not all come
  // back in the same instant.
  std::function<double()> spread;
};

// The transient policy of design.md §5.2 and §9.6 around one provider: 408, 409,
// 5xx, connection failures and timeouts are retried up to max_retries, 429
// and 529 up to max_rate_limit_retries (a 429 that says the quota is spent
// fails at once), with exponential backoff (initial_delay × multiplier^k,
// capped at max_delay, shortened by up to 25%; a rate limit's plus a spread
// of 0-1000 ms). A server-given delay (`retry-after-ms`, `retry-after`,
// Gemini's RetryInfo) replaces the computed one and is a floor: the retry
// waits all of it plus a spread of up to a quarter of it, a second at most,
// never less, and a delay over max_server_delay fails at once (whatever
// max_delay says); `x-should-retry` is obeyed;
// other statuses are never retried. Every failed request is recorded in the
// invocation as an attempt (kind "transient" with the delay waited after it,
// "provider_error", or "downgrade" for a 400 that names response_format on a
// structured request), and the invocation deadline bounds the whole. Waits go
// through the invocation's Clock; a cancelled wait ends the call CANCELLED.
class RetryingProvider {
 public:
  explicit RetryingProvider(Provider& inner, RetryingProviderOptions options = {});

  // Errors are front-door codes: PROVIDER_ERROR (permanent), PROVIDER_UNAVAILABLE
  // (budget spent, or the server asked for too long a wait), TIMEOUT,
  // CONFIG_INVALID (e.g. the key is not set), CANCELLED. `details` holds
  // {http_status, provider_type, request_id, retry_after_ms} where known, and
  // `unsupported_response_format: true` when the model cannot take the
  // request's response format (the caller falls back to the validation loop).
  // The caller's `request` is sent as it is (no copy), and must outlive the
  // call: its metadata.attempt (and traceparent) are set from the invocation
  // for every request, and its timeout is capped at the deadline. The answer
  // comes back boxed (see ChatResult); it unboxes into a Result<ChatResponse>.
  boost::asio::awaitable<BoxedExpected<ChatResponse, Error>> Chat(ChatRequest& request,
                                                                  const TransientRetryPolicy& policy,
                                                                  InvocationContext& ctx);

  // The backoff before retry number `retry` (0-based) for a random draw u.
  static std::chrono::milliseconds Backoff(const TransientRetryPolicy& policy, int retry, double u);

 private:
  // How many retries of each budget were spent.
  struct Spent {
    int retries = 0;
    int rate_limit_retries = 0;
  };
  // After a failed request: the wait before the next, or the error to end with.
  std::variant<std::chrono::milliseconds, Error> AfterFailure(const ProviderError& error, const ChatRequest& request,
                                                              const TransientRetryPolicy& policy, Spent& spent,
                                                              const AttemptSpan& span, InvocationContext& ctx);

  Provider& inner_;
  RetryingProviderOptions options_;
};

// The error a front door reports for a provider failure.
Error ToError(const ProviderError& error, ErrorCode code, std::string message);

// True for an error RetryingProvider marked as a response format the model
// cannot take.
bool IsUnsupportedResponseFormat(const Error& error);

}  // namespace skillrunner::providers
