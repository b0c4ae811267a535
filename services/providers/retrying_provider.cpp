#include "services/providers/retrying_provider.h"

#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace skillrunner::providers {
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

boost::asio::awaitable<void> AsioSleeper::Sleep(milliseconds delay) {
  boost::asio::steady_timer timer(co_await boost::asio::this_coro::executor, delay);
  co_await timer.async_wait(boost::asio::use_awaitable);
}

namespace {

double DefaultRandom() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

std::string Describe(const ProviderError& error) {
  std::string out;
  if (error.http_status > 0) out = "HTTP " + std::to_string(error.http_status);
  if (!error.message.empty() && error.message != out) {
    out += (out.empty() ? "" : ": ") + error.message;
  }
  return out;
}

std::int64_t Ms(Clock::duration d) {
  return std::chrono::duration_cast<milliseconds>(d).count();
}

}  // namespace

Error ToError(const ProviderError& error, ErrorCode code, std::string message) {
  Error out{code, std::move(message), {}, {}};
  if (error.http_status > 0) out.details["http_status"] = error.http_status;
  if (!error.type.empty()) out.details["provider_type"] = error.type;
  if (!error.request_id.empty()) out.details["request_id"] = error.request_id;
  if (error.retry_after) out.details["retry_after_ms"] = error.retry_after->count();
  if (!error.param.empty()) out.details["provider_param"] = error.param;
  return out;
}

RetryingProvider::RetryingProvider(Provider& inner, Sleeper& sleeper,
                                   RetryingProviderOptions options)
    : inner_(inner), sleeper_(sleeper), options_(std::move(options)) {
  if (!options_.random) options_.random = DefaultRandom;
  if (!options_.now) options_.now = [] { return Clock::now(); };
}

milliseconds RetryingProvider::Backoff(const TransientRetryPolicy& policy, int retry, double u) {
  double base = static_cast<double>(policy.initial_delay.count()) * std::pow(policy.multiplier, retry);
  base = std::min(base, static_cast<double>(policy.max_delay.count()));
  return milliseconds(static_cast<std::int64_t>(std::llround(base * (1.0 - 0.25 * u))));
}

boost::asio::awaitable<Result<ChatResponse>> RetryingProvider::Chat(
    ChatRequest request, const TransientRetryPolicy& policy, InvocationContext& ctx) {
  const int first_attempt = request.simulation.attempt;
  for (int retry = 0;; ++retry) {
    auto started = options_.now();
    if (started >= ctx.deadline()) {
      co_return std::unexpected(Error{ErrorCode::kTimeout,
                                      "the invocation deadline passed before the provider answered",
                                      {}, {}});
    }
    request.timeout = std::min(request.timeout,
                               std::chrono::duration_cast<milliseconds>(ctx.deadline() - started));
    request.simulation.attempt = first_attempt + retry;
    auto response = co_await inner_.Chat(request);
    if (response) co_return std::move(*response);

    const ProviderError& error = response.error();
    Attempt attempt;
    attempt.kind = "transient";
    attempt.temperature = request.temperature;
    attempt.raw = error.raw_body.empty() ? error.message : error.raw_body;
    attempt.errors.push_back({"", Describe(error)});
    if (error.http_status > 0) attempt.http_status = error.http_status;
    attempt.duration_ms = Ms(options_.now() - started);

    if (error.kind == ProviderError::Kind::kConfig) {
      co_return std::unexpected(ToError(error, ErrorCode::kConfigInvalid, error.message));
    }
    if (error.kind == ProviderError::Kind::kCancelled) {
      co_return std::unexpected(ToError(error, ErrorCode::kCancelled, "cancelled"));
    }
    bool retryable = error.should_retry.value_or(error.retryable);
    if (!retryable) {
      attempt.kind = "provider_error";
      ctx.AddAttempt(std::move(attempt));
      co_return std::unexpected(ToError(error, ErrorCode::kProviderError,
                                        error.kind == ProviderError::Kind::kProtocol
                                            ? "the provider's answer could not be understood: " + error.message
                                            : "the provider refused the request: " + Describe(error)));
    }
    if (retry >= policy.max_retries) {
      ctx.AddAttempt(std::move(attempt));
      co_return std::unexpected(ToError(
          error, ErrorCode::kProviderUnavailable,
          "the provider is still failing after " + std::to_string(retry) + " retr" +
              (retry == 1 ? "y" : "ies") + ": " + Describe(error)));
    }
    milliseconds delay = Backoff(policy, retry, options_.random());
    if (error.retry_after) {
      if (*error.retry_after > policy.max_server_delay) {
        ctx.AddAttempt(std::move(attempt));
        co_return std::unexpected(ToError(
            error, ErrorCode::kProviderUnavailable,
            "the provider asked to retry after " + std::to_string(error.retry_after->count()) +
                " ms, more than max_server_delay_ms (" +
                std::to_string(policy.max_server_delay.count()) + "): " + Describe(error)));
      }
      delay = *error.retry_after;
    }
    if (options_.now() + delay >= ctx.deadline()) {
      ctx.AddAttempt(std::move(attempt));
      co_return std::unexpected(ToError(
          error, ErrorCode::kTimeout,
          "the invocation deadline leaves no time for the " + std::to_string(delay.count()) +
              " ms wait before the next try: " + Describe(error)));
    }
    attempt.delay_ms = delay.count();
    spdlog::info("skill {}: provider request failed ({}); retry {} of {} in {} ms", ctx.skill_id(),
                 Describe(error), retry + 1, policy.max_retries, delay.count());
    ctx.AddAttempt(std::move(attempt));
    ++ctx.metrics().transient_retries;
    co_await sleeper_.Sleep(delay);
  }
}

}  // namespace skillrunner::providers
