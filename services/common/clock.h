#pragma once

// The one source of time (design.md §9.1): deadlines, durations and backoff
// waits all go through a Clock passed in by the composition root, so tests
// can record the waits asked of it instead of sleeping.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>

namespace skillrunner {

class Clock {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;

  virtual ~Clock() = default;
  virtual TimePoint Now() const = 0;
  // The wall clock's reading now: what people and other machines read (run
  // ids, ISO timestamps, expiry dates, Unix seconds in metrics). Not for
  // measuring durations: Now() is.
  virtual std::chrono::system_clock::time_point WallNow() const;
  // Waits `delay` on the calling coroutine's executor. Returns false when the
  // wait was cancelled (the caller went away, a drain ran out of time): a
  // value, never an exception.
  virtual boost::asio::awaitable<bool> Sleep(std::chrono::milliseconds delay) = 0;
  // Waits until `deadline` (to the timer's precision, not rounded up to a
  // whole millisecond: pacing at 100 requests/s loses ~5% to that rounding).
  // By default a Sleep of the whole milliseconds up to it.
  virtual boost::asio::awaitable<bool> SleepUntil(TimePoint deadline);

  // `t` as nanoseconds since the Unix epoch (trace spans), by the wall
  // clock's reading now.
  std::int64_t UnixNanos(TimePoint t) const;

  // Whole milliseconds from `since` to now.
  std::int64_t ElapsedMs(TimePoint since) const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(Now() - since).count();
  }
};

// std::chrono::steady_clock and an Asio steady_timer. Stateless and
// thread-safe.
class SteadyClock final : public Clock {
 public:
  TimePoint Now() const override;
  boost::asio::awaitable<bool> Sleep(std::chrono::milliseconds delay) override;
  boost::asio::awaitable<bool> SleepUntil(TimePoint deadline) override;
};

// The process's real clock, for composition roots (the CLI, tests and
// benchmarks that want real time); everything below them takes a Clock&.
Clock& RealClock();

}  // namespace skillrunner
