#include "services/providers/limited_provider.h"

#include <algorithm>
#include <cmath>

namespace skillrunner::providers {
namespace {

// What a request will cost against a tokens-per-minute limit before it is
// sent: its prompt and the most it may answer.
std::int64_t EstimatedTokens(const ChatRequest& request) {
  std::int64_t tokens = request.max_output_tokens;
  for (const auto& message : request.messages) tokens += EstimateTokens(message.content);
  return tokens;
}

ProviderError NoSlot(const state::Limiter::Admission& admission, const state::Limiter& limiter) {
  ProviderError error;
  if (admission.outcome == state::Limiter::Outcome::kCancelled) {
    error.kind = ProviderError::Kind::kCancelled;
    error.message = "the request was cancelled while it waited for the provider's rate limit";
    return error;
  }
  error.kind = ProviderError::Kind::kOverloaded;
  error.retry_after = admission.wait;
  std::optional<double> rate = limiter.rate_per_minute();
  error.message = "the provider's rate limit" +
                  (rate ? " (" + std::to_string(std::llround(*rate)) + " requests a minute)" : std::string()) +
                  " leaves no slot before the deadline; the next is free in " + std::to_string(admission.wait.count()) +
                  " ms";
  return error;
}

// A slot this close to the deadline is too late: the answer could not come
// in time, and the caller would wait out its deadline to time out instead of
// hearing at once when to come back. A tenth of the request's time, a second
// at most.
Clock::TimePoint LatestSlot(Clock::TimePoint arrived, std::chrono::milliseconds timeout) {
  const auto margin = std::min<std::chrono::milliseconds>(timeout / 10, std::chrono::seconds(1));
  return arrived + timeout - margin;
}

}  // namespace

LimitedProvider::LimitedProvider(std::shared_ptr<Provider> inner, std::shared_ptr<state::Limiter> limiter, Clock& clock)
    : inner_(std::move(inner)), limiter_(std::move(limiter)), clock_(clock) {}

boost::asio::awaitable<ChatResult> LimitedProvider::Chat(const ChatRequest& request) {
  const Clock::TimePoint arrived = clock_.Now();
  const std::int64_t estimate = EstimatedTokens(request);
  state::Limiter::Admission admission = co_await limiter_->Acquire(LatestSlot(arrived, request.timeout), estimate);
  const std::int64_t queued_ms = clock_.ElapsedMs(arrived);
  if (admission.outcome != state::Limiter::Outcome::kGo) {
    ProviderError refused = NoSlot(admission, *limiter_);
    refused.queued_ms = queued_ms;
    co_return std::unexpected(std::move(refused));
  }
  auto response = co_await inner_->Chat(request);
  bool rate_limited = !response && response.error().IsRateLimited();
  std::int64_t used =
      response ? response->usage.input_tokens + response->usage.output_tokens : (rate_limited ? 0 : estimate);
  const std::chrono::milliseconds server_delay =
      rate_limited ? response.error().retry_after.value_or(std::chrono::milliseconds(0)) : std::chrono::milliseconds(0);
  limiter_->Report(admission.ticket, rate_limited, used, server_delay);
  if (response) {
    response->queued_ms = queued_ms;
  } else {
    response.error().queued_ms = queued_ms;
  }
  co_return response;
}

}  // namespace skillrunner::providers
