#include "services/providers/limited_provider.h"

#include <cmath>

namespace skillrunner::providers {

LimitedProvider::LimitedProvider(std::shared_ptr<Provider> inner, std::unique_ptr<state::RequestLimiter> limiter,
                                 Clock& clock)
    : inner_(std::move(inner)), limiter_(std::move(limiter)), clock_(clock) {}

boost::asio::awaitable<std::expected<ChatResponse, ProviderError>> LimitedProvider::Chat(const ChatRequest& request) {
  const Clock::TimePoint admitted = clock_.Now();
  auto admission = co_await limiter_->Acquire(admitted + request.timeout);
  const std::int64_t queued_ms = clock_.ElapsedMs(admitted);
  if (admission != state::RequestLimiter::Admission::kGo) {
    ProviderError error;
    error.kind = admission == state::RequestLimiter::Admission::kCancelled ? ProviderError::Kind::kCancelled
                                                                           : ProviderError::Kind::kTimeout;
    std::optional<double> rate = limiter_->rate_per_minute();
    error.message = error.kind == ProviderError::Kind::kCancelled
                        ? "the request was cancelled while it waited for the provider's rate limit"
                        : "the provider's rate limit (" + std::to_string(std::llround(rate.value_or(0))) +
                              " requests a minute) leaves no slot before the deadline";
    co_return std::unexpected(std::move(error));
  }
  auto response = co_await inner_->Chat(request);
  bool rate_limited = !response && (response.error().http_status == 429 || response.error().http_status == 529);
  limiter_->Report(admitted, rate_limited);
  if (response) {
    response->queued_ms = queued_ms;
  } else {
    response.error().queued_ms = queued_ms;
  }
  co_return response;
}

}  // namespace skillrunner::providers
