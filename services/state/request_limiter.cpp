#include "services/state/request_limiter.h"

#include <algorithm>
#include <cmath>

namespace skillrunner::state {

RequestLimiter::RequestLimiter(RateLimit limit, Clock& clock)
    : clock_(clock), limit_(limit), rate_(limit.requests_per_minute) {
  last_creep_ = clock_.Now();
}

double RequestLimiter::ObservedPerMinuteLocked(Clock::TimePoint now) {
  while (!recent_.empty() && now - recent_.front() > kObservedWindow) recent_.pop_front();
  if (recent_.empty()) return 0;
  auto span = std::max<Clock::TimePoint::duration>(now - recent_.front(), std::chrono::seconds(1));
  return static_cast<double>(recent_.size()) * 60.0 / std::chrono::duration<double>(span).count();
}

void RequestLimiter::CreepLocked(Clock::TimePoint now) {
  if (!rate_) return;
  auto quiet = std::chrono::duration_cast<std::chrono::seconds>(now - std::max(last_creep_, last_cut_));
  if (quiet.count() < 1) return;
  const std::optional<double>& ceiling = limit_.requests_per_minute;
  double base = ceiling.value_or(std::max(observed_at_cut_, kMinPerMinute));
  *rate_ += kStepShare * base * static_cast<double>(quiet.count());
  last_creep_ = now;
  if (ceiling) {
    rate_ = std::min(*rate_, *ceiling);
  } else if (*rate_ >= 2 * observed_at_cut_) {
    rate_.reset();  // well past what the server refused: unlimited again
  }
}

Clock::TimePoint::duration RequestLimiter::TokenTimeLocked(std::int64_t tokens) const {
  if (!limit_.tokens_per_minute || *limit_.tokens_per_minute <= 0) return Clock::TimePoint::duration::zero();
  return std::chrono::duration_cast<Clock::TimePoint::duration>(
      std::chrono::duration<double>(60.0 * static_cast<double>(tokens) / *limit_.tokens_per_minute));
}

boost::asio::awaitable<Limiter::Admission> RequestLimiter::Acquire(Clock::TimePoint latest, std::int64_t tokens) {
  Admission admission;
  Clock::TimePoint slot;
  {
    std::lock_guard lock(mutex_);
    Clock::TimePoint now = clock_.Now();
    CreepLocked(now);
    while (!recent_.empty() && now - recent_.front() > kObservedWindow) recent_.pop_front();
    slot = std::max({now, next_slot_, next_token_slot_});
    if (slot > latest) {
      admission.outcome = Outcome::kTooLate;
      admission.wait = std::chrono::ceil<std::chrono::milliseconds>(slot - now);
      co_return admission;
    }
    if (rate_) {
      next_slot_ = slot + std::chrono::duration_cast<Clock::TimePoint::duration>(std::chrono::duration<double>(60.0 / *rate_));
    }
    next_token_slot_ = std::max(next_token_slot_, now) + TokenTimeLocked(tokens);
    recent_.push_back(slot);
    admission.ticket = Ticket{slot, -1, tokens};
    if (slot <= now) co_return admission;
  }
  auto wait = std::chrono::ceil<std::chrono::milliseconds>(slot - clock_.Now());
  if (wait.count() > 0 && !co_await clock_.Sleep(wait)) admission.outcome = Outcome::kCancelled;
  co_return admission;
}

void RequestLimiter::Report(const Ticket& ticket, bool rate_limited, std::int64_t used_tokens) {
  std::lock_guard lock(mutex_);
  if (used_tokens != ticket.tokens) {
    // Charge what was really used: a later slot for more, an earlier one for less.
    Clock::TimePoint::duration correction = TokenTimeLocked(std::abs(used_tokens - ticket.tokens));
    next_token_slot_ += used_tokens > ticket.tokens ? correction : -correction;
  }
  if (!rate_limited || ticket.admitted < last_cut_) return;  // the others saw the old rate
  Clock::TimePoint now = clock_.Now();
  double observed = ObservedPerMinuteLocked(now);
  double current = rate_.value_or(observed);
  observed_at_cut_ = std::max(observed, kMinPerMinute);
  rate_ = std::max(kMinPerMinute, std::min(current, observed) / 2);
  last_cut_ = now;
  last_creep_ = now;
  next_slot_ = std::max(next_slot_, now);
}

std::optional<double> RequestLimiter::rate_per_minute() const {
  std::lock_guard lock(mutex_);
  return rate_;
}

}  // namespace skillrunner::state
