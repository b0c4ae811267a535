#pragma once

// The pace of requests to one provider in this process (design.md §9.6),
// learned by default as limiter.h says: it starts at the configured rate
// (unlimited when none). Callers are given start times in arrival order
// (each one interval after the last), so a wait is a sleep until one's own
// slot. A tokens_per_minute limit paces
// the estimated tokens the same way, corrected by what was really used.
// Thread-safe. While it is unlimited (no rate learned or configured, no
// tokens_per_minute), Acquire and a Report without a 429 take no lock: they
// count the request in atomics of their own cache line.

#include <atomic>
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
  using Limiter::Report;
  void Report(const Ticket& ticket, bool rate_limited, std::int64_t used_tokens,
              std::chrono::milliseconds server_delay) override;
  std::optional<double> rate_per_minute() const override;

 private:
  using Duration = Clock::TimePoint::duration;
  void CreepLocked(Clock::TimePoint now);
  // A creep happened (or was held) at `now`: the next one measures the pace from here.
  void MarkCreepLocked(Clock::TimePoint now);
  void CountUnlimitedLocked(Clock::TimePoint now);  // one more sent while unlimited
  void CutLocked(Clock::TimePoint now, bool sampled);
  // A sampled cut: the provider's limit as estimated and the rate to cut to (before the floors
  // CutLocked applies), or nullopt when the 429s are jitter (the rate holds).
  struct CutTo {
    double estimate = 0;
    double next = 0;
  };
  std::optional<CutTo> SampledCutLocked(double before);
  // Place `position` goes now: counted, and the places behind follow it at the pace.
  void GoLocked(std::int64_t position, Clock::TimePoint now);
  // A few 429s at a rate that ran clean (or one while probing): jitter; the rate holds and the
  // sample goes on (halved past 10 x kMinSample, so that old requests fade).
  void HoldAsJitterLocked(Clock::TimePoint now, double rate);
  // A step up from a rate that ran clean, refused: back to that rate at once. A probe's doubling
  // refused goes halfway back instead (the search's first step, without the half second at the
  // rate below first); refused there too, back to that rate. Only a probe's: halving each step
  // refused, a provider refusing everything for the rest of its window had each halving refused
  // too, and the search settled at a quarter of what ran clean.
  void StepBackLocked(Clock::TimePoint now);
  double RateBeforeCutLocked(Clock::TimePoint now) const;  // per minute: what a cut starts from
  // Changes the rate and re-times the places not yet reached: a cut makes
  // them later, a rise sooner. Their waiters check again when they wake, and
  // wake at least at each chance of a rise (NextCreepLocked).
  void SetRateLocked(std::optional<double> rate, Clock::TimePoint now);
  // When the rate may next rise; nullopt when it cannot (at the ceiling).
  std::optional<Clock::TimePoint> NextCreepLocked(Clock::TimePoint now) const;
  // A second between creeps; kProbeSeconds while probing or well below a rate refused.
  Duration CreepInterval() const;
  // How long a settled search waits before a try past the refused rate.
  Duration SettleTime() const;
  // Between a rate that ran clean and a faster one refused.
  bool SearchingLocked() const;
  // A search's next rate from `rate`, which ran clean.
  double SearchStepLocked(double rate, Clock::TimePoint now) const;
  static Duration Span(double places, double per_minute);
  // When place `position` of the queue may start (now or later).
  Clock::TimePoint SlotLocked(std::int64_t position, Clock::TimePoint now) const;
  Duration TokenTimeLocked(std::int64_t tokens) const;

  // The lock-free path while unlimited: counts this request in the current
  // second's window and admits it; false when limited or the window is over
  // (take the lock).
  bool GoUnlimited(std::int64_t tokens, Admission& admission);
  // The requests the lock-free path let through, folded into the locked state.
  void FoldUnlimitedLocked();
  void UpdateOpenLocked() { open_.store(!rate_ && !limit_.tokens_per_minute, std::memory_order_release); }

  Clock& clock_;
  const RateLimit limit_;
  // Apart from the mutex: written by every request while unlimited.
  struct alignas(64) Unlimited {
    std::atomic<Clock::TimePoint> window_start{};
    std::atomic<int> window_sent{0};
    std::atomic<Clock::TimePoint> last_go{};
  };
  std::atomic<bool> open_{false};  // unlimited: the lock-free path is on
  Unlimited unlimited_;
  alignas(64) mutable std::mutex mutex_;
  std::optional<double> rate_;  // per minute; nullopt: unlimited
  // The queue: callers take places in arrival order; place p starts at
  // anchor_time_ + (p - anchor_position_) / rate. A rate change re-anchors
  // at the first place not yet reached, so waiters already asleep are
  // re-timed (each checks its slot again when it wakes).
  std::int64_t tail_ = 0;  // the next place to hand out
  std::int64_t anchor_position_ = 0;
  Clock::TimePoint anchor_time_{};
  Clock::TimePoint next_token_slot_{};  // as far as tokens_per_minute goes
  // When the last request went: waiters a busy CPU woke late must not go
  // together, so each keeps one interval after the one before it.
  Clock::TimePoint last_go_{};
  Clock::TimePoint last_cut_{};
  Clock::TimePoint last_creep_{};
  // After a cut: 429s of requests sent before this are not the new rate's
  // sample (the provider refusing the rest of its window for what the rate
  // before sent too many); ended early by a request sent since that it took.
  Clock::TimePoint grace_until_{};
  // A burst's first 429 asked the provider to be left alone until then (its Retry-After): no probe
  // up before.
  Clock::TimePoint rises_held_until_{};
  bool probing_ = false;
  double accepted_at_cut_ = 0;  // per minute: the provider's limit as last estimated
  double refused_at_ = 0;       // per minute: the rate the last sampled cut came from
  int lone_refusals_ = 0;       // refused_at_ came from a lone 429, the nth in a row
  double probe_cap_ = 0;        // per minute: probing past this, nobody waiting, is unlimited again
  double clean_at_ = 0;         // per minute: the fastest rate held a quiet second (0: none since it failed)
  // The sample of the current rate: requests sent since it was set, and how
  // many of them were refused.
  Clock::TimePoint changed_{};
  int sent_since_change_ = 0;
  int sent_since_creep_ = 0;  // of those, since the last creep: whether the rate was reached
  int refused_since_change_ = 0;
  int forgiven_since_change_ = 0;  // of those, held as jitter (CutLocked): they do not stop a rise
  int waited_since_change_ = 0;    // times a request went to sleep for its place
  // Unlimited, the pace requests go at, counted a second at a time: what a
  // first 429 is judged by (CutLocked), so that after an idle hour it is the
  // last second's requests, not the hour's.
  // (window_start and window_sent are in unlimited_.)
  double last_window_per_second_ = 0;
};

}  // namespace skillrunner::state
