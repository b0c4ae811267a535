#include "services/state/request_limiter.h"

#include <algorithm>
#include <cmath>

namespace skillrunner::state {
namespace {

constexpr std::chrono::seconds kWindow{5};   // what "the rate observed lately" covers
constexpr double kMinPerMinute = 6;          // never slower than one request each 10 s
constexpr double kStepShare = 0.05;          // each quiet second adds 5% of the ceiling (or of the cut rate)

}  // namespace

RequestLimiter::RequestLimiter(std::optional<double> ceiling_per_minute, Clock& clock)
    : clock_(clock), ceiling_(ceiling_per_minute), rate_(ceiling_per_minute) {
  last_creep_ = clock_.Now();
}

double RequestLimiter::ObservedPerMinuteLocked(Clock::TimePoint now) {
  while (!recent_.empty() && now - recent_.front() > kWindow) recent_.pop_front();
  if (recent_.empty()) return 0;
  auto span = std::max<Clock::TimePoint::duration>(now - recent_.front(), std::chrono::seconds(1));
  return static_cast<double>(recent_.size()) * 60.0 / std::chrono::duration<double>(span).count();
}

void RequestLimiter::CreepLocked(Clock::TimePoint now) {
  if (!rate_) return;
  auto quiet = std::chrono::duration_cast<std::chrono::seconds>(now - std::max(last_creep_, last_cut_));
  if (quiet.count() < 1) return;
  double base = ceiling_.value_or(std::max(observed_at_cut_, kMinPerMinute));
  *rate_ += kStepShare * base * static_cast<double>(quiet.count());
  last_creep_ = now;
  if (ceiling_) {
    rate_ = std::min(*rate_, *ceiling_);
  } else if (*rate_ >= 2 * observed_at_cut_) {
    rate_.reset();  // well past what the server refused: unlimited again
  }
}

boost::asio::awaitable<RequestLimiter::Admission> RequestLimiter::Acquire(Clock::TimePoint latest) {
  Clock::TimePoint slot;
  {
    std::lock_guard lock(mutex_);
    Clock::TimePoint now = clock_.Now();
    CreepLocked(now);
    while (!recent_.empty() && now - recent_.front() > kWindow) recent_.pop_front();
    slot = std::max(now, next_slot_);
    if (slot > latest) co_return Admission::kTooLate;
    if (rate_) {
      next_slot_ = slot + std::chrono::duration_cast<Clock::TimePoint::duration>(std::chrono::duration<double>(60.0 / *rate_));
    }
    recent_.push_back(slot);
    if (slot <= now) co_return Admission::kGo;
  }
  auto wait = std::chrono::ceil<std::chrono::milliseconds>(slot - clock_.Now());
  if (wait.count() > 0 && !co_await clock_.Sleep(wait)) co_return Admission::kCancelled;
  co_return Admission::kGo;
}

void RequestLimiter::Report(Clock::TimePoint admitted, bool rate_limited) {
  if (!rate_limited) return;
  std::lock_guard lock(mutex_);
  if (admitted < last_cut_) return;
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
