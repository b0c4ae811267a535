#include "runner/eval/rate_limiter.h"

#include <boost/asio/redirect_error.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

#include <algorithm>
#include <cmath>

namespace skillrunner::eval {
namespace {

constexpr double kMinFactor = 1.0 / 64;  // six halvings at most
constexpr double kIncreaseStep = 0.01;   // of the limit, per case without a 429
constexpr double kMsPerMinute = 60'000;

}  // namespace

RateLimiter::RateLimiter(RateLimit limit, Clock& clock)
    : clock_(clock), last_refill_(clock.Now()), last_cut_(Clock::TimePoint::min()) {
  requests_.limit = limit.requests_per_minute.value_or(0);
  tokens_.limit = limit.tokens_per_minute.value_or(0);
  requests_.level = CapacityLocked(requests_, 1);
  tokens_.level = CapacityLocked(tokens_, 1);
}

double RateLimiter::CapacityLocked(const Bucket& bucket, double minimum) const {
  return std::max(minimum, RateLocked(bucket) / 60);
}

void RateLimiter::RefillLocked(Clock::TimePoint now) {
  double elapsed_ms = std::chrono::duration<double, std::milli>(now - last_refill_).count();
  last_refill_ = now;
  if (elapsed_ms <= 0) return;
  for (Bucket* bucket : {&requests_, &tokens_}) {
    if (bucket->limit <= 0) continue;
    double cap = CapacityLocked(*bucket, 1);
    bucket->level = std::min(cap, bucket->level + elapsed_ms * RateLocked(*bucket) / kMsPerMinute);
  }
}

boost::asio::awaitable<RateLimiter::Permit> RateLimiter::Acquire() {
  for (;;) {
    std::chrono::milliseconds wait{0};
    {
      std::lock_guard lock(mutex_);
      Clock::TimePoint now = clock_.Now();
      RefillLocked(now);
      bool request_ok = requests_.limit <= 0 || requests_.level >= 1;
      bool tokens_ok = tokens_.limit <= 0 || tokens_.level > 0;
      if (request_ok && tokens_ok) {
        if (requests_.limit > 0) requests_.level -= 1;
        co_return Permit{now};
      }
      double wait_ms = 0;
      if (!request_ok) {
        wait_ms = (1 - requests_.level) * kMsPerMinute / RateLocked(requests_);
      }
      if (!tokens_ok) {
        wait_ms = std::max(wait_ms, -tokens_.level * kMsPerMinute / RateLocked(tokens_));
      }
      wait = std::chrono::milliseconds(static_cast<std::int64_t>(std::ceil(wait_ms)) + (tokens_ok ? 0 : 1));
      waited_ += wait;
    }
    co_await clock_.Sleep(wait);
  }
}

void RateLimiter::Report(const Permit& permit, std::int64_t tokens, bool rate_limited, int requests) {
  std::lock_guard lock(mutex_);
  RefillLocked(clock_.Now());
  if (tokens_.limit > 0) tokens_.level -= static_cast<double>(tokens);
  if (requests_.limit > 0 && requests > 1) requests_.level -= static_cast<double>(requests - 1);
  if (rate_limited) {
    // Cases already in flight when the rate was cut saw the old rate; their
    // 429s say nothing new, so only a case granted after the cut cuts again.
    if (permit.granted_at > last_cut_ || last_cut_ == Clock::TimePoint::min()) {
      factor_ = std::max(kMinFactor, factor_ / 2);
      last_cut_ = clock_.Now();
      requests_.level = std::min(requests_.level, CapacityLocked(requests_, 1));
      tokens_.level = std::min(tokens_.level, CapacityLocked(tokens_, 1));
    }
  } else {
    factor_ = std::min(1.0, factor_ + kIncreaseStep);
  }
}

double RateLimiter::requests_per_minute() const {
  std::lock_guard lock(mutex_);
  return RateLocked(requests_);
}

double RateLimiter::tokens_per_minute() const {
  std::lock_guard lock(mutex_);
  return RateLocked(tokens_);
}

std::chrono::milliseconds RateLimiter::waited() const {
  std::lock_guard lock(mutex_);
  return waited_;
}

RateLimiters::RateLimiters(const std::map<std::string, RateLimit>& limits, Clock& clock) {
  for (const auto& [name, limit] : limits) {
    if (limit.requests_per_minute || limit.tokens_per_minute) {
      limiters_.emplace(name, std::make_unique<RateLimiter>(limit, clock));
    }
  }
}

RateLimiter* RateLimiters::For(std::string_view provider) const {
  auto it = limiters_.find(provider);
  return it == limiters_.end() ? nullptr : it->second.get();
}

}  // namespace skillrunner::eval
