#pragma once

// The pace of requests to one provider (DESIGN 9.6), learned by default:
// it starts at the configured rate (unlimited when none); a 429 sets it to
// half the rate observed over the last seconds; each quiet second adds back a
// step (AIMD), never above the ceiling; an unconfigured limiter that climbs
// back past twice what was last observed is unlimited again. Callers are
// given start times in arrival order (each one interval after the last), so
// a wait is a sleep until one's own slot. Thread-safe.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <deque>
#include <mutex>
#include <optional>

#include "services/common/clock.h"

namespace skillrunner::state {

class RequestLimiter {
 public:
  // `ceiling_per_minute`: the configured rate (a start and a ceiling), or
  // nullopt for none. `clock` must outlive the limiter.
  RequestLimiter(std::optional<double> ceiling_per_minute, Clock& clock);

  enum class Admission { kGo, kCancelled, kTooLate };
  // Waits for this request's slot. kTooLate (without waiting) when the slot
  // is later than `latest`; kCancelled when the wait was cancelled.
  boost::asio::awaitable<Admission> Acquire(Clock::TimePoint latest);
  // What came of a request admitted at `admitted`: whether it was refused
  // with a rate limit. Only a request admitted after the last cut cuts again
  // (the others saw the old rate).
  void Report(Clock::TimePoint admitted, bool rate_limited);

  // Requests per minute allowed now; nullopt while unlimited.
  std::optional<double> rate_per_minute() const;

 private:
  void CreepLocked(Clock::TimePoint now);
  double ObservedPerMinuteLocked(Clock::TimePoint now);

  Clock& clock_;
  const std::optional<double> ceiling_;
  mutable std::mutex mutex_;
  std::optional<double> rate_;         // per minute; nullopt: unlimited
  Clock::TimePoint next_slot_{};       // the earliest start of the next request
  Clock::TimePoint last_cut_{};
  Clock::TimePoint last_creep_{};
  double observed_at_cut_ = 0;
  std::deque<Clock::TimePoint> recent_;  // admissions of the last kWindow
};

}  // namespace skillrunner::state
