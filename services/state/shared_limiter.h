#pragma once

// A provider's pace shared by every process with the same `state.redis`
// (design.md §9.6): the same learning as RequestLimiter (limiter.h), kept in
// Redis and updated by one Lua script per request, on Redis's clock, so that
// slots are handed out in arrival order across processes and a 429 seen by
// one slows them all. While the state is degraded, this process's share of
// the limit (limit / replicas_hint) applies, learned locally.

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "services/state/limiter.h"
#include "services/state/request_limiter.h"
#include "services/state/shared_state.h"

namespace skillrunner::state {

class SharedLimiter final : public Limiter {
 public:
  // `provider` names the shared bucket. `clock` must outlive the limiter.
  SharedLimiter(std::shared_ptr<SharedState> state, std::string provider, RateLimit limit, Clock& clock);

  boost::asio::awaitable<Admission> Acquire(Clock::TimePoint latest, std::int64_t tokens) override;
  using Limiter::Report;
  void Report(const Ticket& ticket, bool rate_limited, std::int64_t used_tokens,
              std::chrono::milliseconds server_delay) override;
  std::optional<double> rate_per_minute() const override;

 private:
  // ARGV[1..14] of every script (the ceiling and limiter.h's constants).
  std::vector<std::string> Constants() const;
  // Waiters this process woke late still go one interval apart: waits for
  // that (kGo, no ticket yet; kCancelled), or kTooLate at once when it falls
  // after `latest`.
  boost::asio::awaitable<Admission> OneIntervalAfterTheLast(Clock::TimePoint latest);
  std::shared_ptr<SharedState> state_;
  std::string key_;
  RateLimit limit_;
  Clock& clock_;
  RequestLimiter local_;                 // this process's share, while degraded
  std::atomic<double> shared_rate_{-1};  // the last rate Redis reported; < 0: unlimited
  std::atomic<bool> in_grace_{false};    // Redis said a cut's grace was on (limiter.h, kCutGrace)
  std::mutex mutex_;
  Clock::TimePoint last_go_{};  // when this process's last request went
};

// The share of `limit` one of `replicas` processes takes on its own.
RateLimit ShareOf(const RateLimit& limit, int replicas);

}  // namespace skillrunner::state
