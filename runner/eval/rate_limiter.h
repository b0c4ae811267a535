#pragma once

// Per-provider rate limits for eval runs: token buckets for requests and
// tokens per minute that make a case wait rather than fail, with AIMD on top:
// a case that met HTTP 429 halves the allowed rate (once per burst of 429s:
// only cases granted after the last cut can cut again), and each case that
// did not adds 1% of the configured limit back, up to the limit.
//
// Tokens, and requests beyond the first, are charged after the fact (a case's
// real usage is known only when it finishes): the buckets may go into debt,
// and no case starts while one is in debt. Buckets hold one second's worth of the current rate (at
// least one request), so a burst never exceeds about a second of budget.
//
// Thread-safe: Acquire and Report may run concurrently on any threads.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runner/eval/suite.h"
#include "services/common/clock.h"

namespace skillrunner::eval {

class RateLimiter {
 public:
  struct Permit {
    Clock::TimePoint granted_at;
  };

  // `clock` must outlive the limiter. Unset limits are not enforced.
  RateLimiter(RateLimit limit, Clock& clock);

  // Waits until a request may start, then takes it from the bucket.
  boost::asio::awaitable<Permit> Acquire();
  // What the case came to: its tokens, whether any attempt met a 429, and how
  // many requests it really made (its attempts: retries, transient retries
  // and a review gate's judge requests included). Acquire took one request;
  // the other requests - 1 are debited now (the bucket may go into debt), so
  // that requests_per_minute holds over time, not just cases per minute.
  void Report(const Permit& permit, std::int64_t tokens, bool rate_limited, int requests = 1);

  // The rates in force now (per minute; 0 when that limit is unset).
  double requests_per_minute() const;
  double tokens_per_minute() const;
  // Total time cases were asked to wait, for the run's log.
  std::chrono::milliseconds waited() const;

 private:
  struct Bucket {
    double limit = 0;  // per minute; 0 = unlimited
    double level = 0;
  };
  void RefillLocked(Clock::TimePoint now);
  double RateLocked(const Bucket& bucket) const { return bucket.limit * factor_; }
  double CapacityLocked(const Bucket& bucket, double minimum) const;

  Clock& clock_;
  mutable std::mutex mutex_;
  Bucket requests_;
  Bucket tokens_;
  double factor_ = 1.0;  // AIMD multiplier on both limits, in [kMinFactor, 1]
  Clock::TimePoint last_refill_;
  Clock::TimePoint last_cut_;
  std::chrono::milliseconds waited_{0};
};

// The limiters of a run, one per provider name that has limits.
class RateLimiters {
 public:
  RateLimiters(const std::map<std::string, RateLimit>& limits, Clock& clock);
  // Null when `provider` has no limits.
  RateLimiter* For(std::string_view provider) const;

 private:
  std::map<std::string, std::unique_ptr<RateLimiter>, std::less<>> limiters_;
};

}  // namespace skillrunner::eval
