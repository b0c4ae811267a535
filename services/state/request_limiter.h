#pragma once

// The pace of requests to one provider (DESIGN 9.6), learned by default:
// it starts at the configured rate (unlimited when none); a 429 sets it to
// half the rate observed over the last seconds; each quiet second adds back a
// step (AIMD), never above the ceiling; an unconfigured limiter that climbs
// back past twice what was last observed is unlimited again. Callers are
// given start times in arrival order (each one interval after the last), so
// a wait is a sleep until one's own slot. A tokens_per_minute limit paces
// the estimated tokens the same way, corrected by what was really used.
// Thread-safe.

#include <chrono>
#include <deque>
#include <mutex>
#include <optional>

#include "services/state/limiter.h"

namespace skillrunner::state {

class RequestLimiter final : public Limiter {
 public:
  // `limit`: the configured rates (a start and a ceiling); unset requests
  // are learned, unset tokens are not paced. `clock` must outlive the limiter.
  RequestLimiter(RateLimit limit, Clock& clock);

  boost::asio::awaitable<Admission> Acquire(Clock::TimePoint latest, std::int64_t tokens) override;
  void Report(const Ticket& ticket, bool rate_limited, std::int64_t used_tokens) override;
  std::optional<double> rate_per_minute() const override;

 private:
  void CreepLocked(Clock::TimePoint now);
  double ObservedPerMinuteLocked(Clock::TimePoint now);
  Clock::TimePoint::duration TokenTimeLocked(std::int64_t tokens) const;

  Clock& clock_;
  const RateLimit limit_;
  mutable std::mutex mutex_;
  std::optional<double> rate_;         // per minute; nullopt: unlimited
  Clock::TimePoint next_slot_{};       // the earliest start of the next request
  Clock::TimePoint next_token_slot_{};  // ... as far as tokens_per_minute goes
  Clock::TimePoint last_cut_{};
  Clock::TimePoint last_creep_{};
  double observed_at_cut_ = 0;
  std::deque<Clock::TimePoint> recent_;  // admissions of the last kObservedWindow
};

}  // namespace skillrunner::state
