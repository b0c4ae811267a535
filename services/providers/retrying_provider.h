#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <functional>

#include "runner/error.h"
#include "runner/invocation.h"
#include "runner/skill.h"
#include "services/providers/provider.h"

namespace skillrunner::providers {

// Waits; injected so tests assert the delay asked for instead of sleeping.
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual boost::asio::awaitable<void> Sleep(std::chrono::milliseconds delay) = 0;
};

// Sleeps on a steady_timer of the awaiting coroutine's executor (cancellable).
class AsioSleeper : public Sleeper {
 public:
  boost::asio::awaitable<void> Sleep(std::chrono::milliseconds delay) override;
};

struct RetryingProviderOptions {
  // U[0,1) for the jitter that shortens each backoff by up to 25%.
  std::function<double()> random;
  std::function<std::chrono::steady_clock::time_point()> now;
};

// The transient policy of DESIGN §5.2 around one provider: 408, 409, 429,
// 5xx, connection failures and timeouts are retried with exponential backoff
// (initial_delay × multiplier^k, capped at max_delay, shortened by up to 25%);
// `retry-after-ms` / `retry-after` replace the computed delay up to
// max_server_delay (a longer ask fails at once); `x-should-retry` is obeyed;
// other statuses are never retried. Every failed request is recorded in the
// invocation as an attempt (kind "transient" with the delay waited after it,
// or "provider_error"), and the invocation deadline bounds the whole.
class RetryingProvider {
 public:
  RetryingProvider(Provider& inner, Sleeper& sleeper, RetryingProviderOptions options = {});

  // Errors are front-door codes: PROVIDER_ERROR (permanent), PROVIDER_UNAVAILABLE
  // (budget spent, or the server asked for too long a wait), TIMEOUT,
  // CONFIG_INVALID (e.g. the key is not set), CANCELLED. `details` holds
  // {http_status, provider_type, request_id, retry_after_ms} where known.
  boost::asio::awaitable<Result<ChatResponse>> Chat(ChatRequest request,
                                                    const TransientRetryPolicy& policy,
                                                    InvocationContext& ctx);

  // The backoff before retry number `retry` (0-based) for a random draw u.
  static std::chrono::milliseconds Backoff(const TransientRetryPolicy& policy, int retry, double u);

 private:
  Provider& inner_;
  Sleeper& sleeper_;
  RetryingProviderOptions options_;
};

// The error a front door reports for a provider failure.
Error ToError(const ProviderError& error, ErrorCode code, std::string message);

}  // namespace skillrunner::providers
