#include "services/state/request_limiter.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>

namespace skillrunner::state {

RequestLimiter::RequestLimiter(RateLimit limit, Clock& clock)
    : clock_(clock), limit_(limit), rate_(limit.requests_per_minute) {
  last_creep_ = last_cut_ = anchor_time_ = changed_ = clock_.Now();
  unlimited_.window_start.store(last_creep_);
  UpdateOpenLocked();
}

bool RequestLimiter::GoUnlimited(std::int64_t tokens, Admission& admission) {
  if (!open_.load(std::memory_order_acquire)) return false;
  const Clock::TimePoint now = clock_.Now();
  if (now - unlimited_.window_start.load(std::memory_order_relaxed) >= std::chrono::seconds(1)) return false;
  admission.ticket = Ticket{now, -1, tokens};
  unlimited_.window_sent.fetch_add(1, std::memory_order_relaxed);
  Clock::TimePoint last = unlimited_.last_go.load(std::memory_order_relaxed);
  while (last < now && !unlimited_.last_go.compare_exchange_weak(last, now, std::memory_order_relaxed)) {
  }
  return true;
}

void RequestLimiter::FoldUnlimitedLocked() {
  last_go_ = std::max(last_go_, unlimited_.last_go.load(std::memory_order_relaxed));
}

// How long `places` (requests or tokens) take at `per_minute`.
RequestLimiter::Duration RequestLimiter::Span(double places, double per_minute) {
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(60.0 * places / per_minute));
}

Clock::TimePoint RequestLimiter::SlotLocked(std::int64_t position, Clock::TimePoint now) const {
  if (!rate_) return now;
  return std::max(now, anchor_time_ + Span(static_cast<double>(position - anchor_position_), *rate_));
}

void RequestLimiter::SetRateLocked(std::optional<double> rate, Clock::TimePoint now) {
  std::int64_t first_waiting = tail_;
  Clock::TimePoint start = now;
  if (rate_) {
    // The places whose slot has passed are gone; the rest follow the last of
    // those at the new pace (later for a cut, sooner for a rise: the waiters
    // check again when they wake, and wake at least once a creep).
    double passed = std::chrono::duration<double>(now - anchor_time_).count() * *rate_ / 60.0;
    first_waiting = std::clamp<std::int64_t>(anchor_position_ + static_cast<std::int64_t>(std::floor(passed)) + 1,
                                             anchor_position_, tail_);
    if (rate && first_waiting > anchor_position_) {
      auto last_passed = anchor_time_ + Span(static_cast<double>(first_waiting - 1 - anchor_position_), *rate_);
      start = std::max(now, last_passed + Span(1, *rate));
    }
  }
  // And one interval after the last request that went (the first place would wait for it anyway).
  FoldUnlimitedLocked();
  if (rate && last_go_ != Clock::TimePoint{}) {
    start = std::max(start, last_go_ + Span(1, *rate));
  }
  rate_ = rate;
  UpdateOpenLocked();
  anchor_position_ = first_waiting;
  anchor_time_ = start;
  // What the provider makes of the new rate is a new sample.
  changed_ = now;
  sent_since_change_ = 0;
  sent_since_creep_ = 0;
  refused_since_change_ = 0;
  forgiven_since_change_ = 0;
  waited_since_change_ = 0;
}

void RequestLimiter::CountUnlimitedLocked(Clock::TimePoint now) {
  const double seconds = std::chrono::duration<double>(now - unlimited_.window_start.load()).count();
  if (seconds >= 1) {
    last_window_per_second_ = unlimited_.window_sent.exchange(0) / seconds;
    unlimited_.window_start.store(now);
  }
  unlimited_.window_sent.fetch_add(1);
}

void RequestLimiter::CreepLocked(Clock::TimePoint now) {
  if (!rate_) return;
  if (now - std::max(last_creep_, last_cut_) < CreepInterval()) return;
  // A second is evidence only with requests enough sent at this rate (half a
  // second's worth, kMinSample / 2 at most): idle, or with every caller
  // waiting out a Retry-After, nothing was learned and the rate holds.
  // With them and no 429 it ran clean (below 1,200 a minute, fewer than
  // kMinSample / 2 are all a second has: counting only those above it, a
  // rate of 430 rose 5% of the estimate a second, never searching).
  const double enough = std::min(kMinSample / 2.0, *rate_ / 120.0);
  // A 429 held as jitter (CutLocked) does not stop a rise: it held a whole
  // sample's worth of requests (10 x kMinSample) at a rate that ran clean.
  const int refused = refused_since_change_ - forgiven_since_change_;
  if (refused > 0 && sent_since_change_ >= kMinSample) {
    CutLocked(now, true);  // not quiet: a complete sample with a 429
    return;
  }
  if (refused > 0 || sent_since_change_ < enough) {
    MarkCreepLocked(now);  // held: another second
    return;
  }
  // A burst's first 429 starts no probe up before its Retry-After is over: the provider asked to be
  // left alone until then, and a doubled rate would only be refused for it. Later 429s do not hold
  // the pace: their refused requests wait their delay, the others keep the learned pace (held
  // behind every 429's second, a provider refusing the rest of each fixed window kept the search
  // under its limit: 27.7 s for the 20 s eval at 2x over one entry, not 21.4).
  if (probing_ && now < rises_held_until_) return;
  std::optional<double> rate = *rate_;
  const std::optional<double>& ceiling = limit_.requests_per_minute;
  // Whether the pace held anyone back: a request waited at it, or one waits now.
  const bool binding = waited_since_change_ > 0 || (tail_ > 0 && SlotLocked(tail_ - 1, now) > now);
  // Whether the requests since the last creep came at the rate: a pace nobody reached proves nothing
  // of the provider (an idle stretch before it is no part of it: each creep starts the window again).
  const double minutes = std::chrono::duration<double>(now - std::max(last_creep_, changed_)).count() / 60.0;
  const bool queued = tail_ > 0 && SlotLocked(tail_ - 1, now) > now;  // someone waits for a place now
  const bool reached = queued || (minutes > 0 && sent_since_creep_ >= kReachedShare * *rate * minutes);
  if (reached) clean_at_ = std::max(clean_at_, *rate);  // it ran clean
  grace_until_ = {};                                    // and the provider's window after the cut is over
  if (clean_at_ >= refused_at_) lone_refusals_ = 0;     // past the rate refused: that was jitter
  if (!ceiling && !binding && (probing_ ? *rate >= probe_cap_ : *rate >= 2 * accepted_at_cut_)) {
    // A quiet second well past what the provider took (or the burst it
    // refused), and a pace nobody waited for: unlimited again.
    rate.reset();
    probing_ = false;
  } else if (probing_) {
    *rate *= kProbeFactor;
  } else if (SearchingLocked() && !reached) {
    // Between a rate that ran clean and one refused, a rise nobody would use only lets the callers
    // who come back together (a Retry-After over) go past the limit: held. Measured with two
    // replicas: risen from 1,106 to 2,999 a minute at 16 requests a second, 21 of 166 (and 43 of
    // 191) were refused after the third second. A single request that waited does not make a
    // rate reached (that let the rise through).
  } else if (SearchingLocked()) {
    rate = SearchStepLocked(*rate, now);
  } else {
    // Halfway back towards the refused rate, not far past the estimate; near it, small steps.
    const double target = std::min(refused_at_, kTargetOver * accepted_at_cut_);
    *rate += *rate < kNearRefused * target ? (target - *rate) / 2 : kStepShare * accepted_at_cut_;
  }
  MarkCreepLocked(now);
  if (rate && ceiling) rate = std::min(*rate, *ceiling);
  if (rate != rate_) SetRateLocked(rate, now);
}

double RequestLimiter::SearchStepLocked(double rate, Clock::TimePoint now) const {
  // Halfway towards the refused rate until within kSearchStep; settled
  // there, a try just past it once each kSettleSeconds (a limit may rise;
  // kLoneSettleSeconds when one 429 alone refused it: jitter, as likely).
  if (refused_at_ - rate > kSearchStep * refused_at_) {
    return std::min(rate + (refused_at_ - rate) / 2, kSearchGrowth * rate);
  }
  return now - last_cut_ >= SettleTime() ? refused_at_ * (1 + kSearchStep) : rate;
}

Clock::TimePoint::duration RequestLimiter::CreepInterval() const {
  // Probing, or well below a rate refused (a search's wide gap, or just after
  // a cut): half a second. Measured on nginx at 100 a second, a first cut to
  // 66 held a whole second before its first try up.
  const bool wide = rate_ && refused_at_ - *rate_ > (kTargetOver - 1) * refused_at_;
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(probing_ || wide ? kProbeSeconds : 1.0));
}

RequestLimiter::Duration RequestLimiter::SettleTime() const {
  double seconds = kSettleSeconds;
  // Refused by one 429 alone: a try once 5 x kMinSample requests' worth
  // passed (at most one in a hundred refused for it), kLoneSettleSeconds at
  // least, twice as long after each such try refused in a row.
  if (lone_refusals_ > 0 && rate_) {
    const double requests = 5 * kMinSample * std::pow(2.0, std::min(lone_refusals_ - 1, 8));
    seconds = std::clamp(requests * 60.0 / *rate_, 1.0 * kLoneSettleSeconds, seconds);
  }
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

bool RequestLimiter::SearchingLocked() const { return clean_at_ > 0 && refused_at_ > clean_at_; }

std::optional<Clock::TimePoint> RequestLimiter::NextCreepLocked(Clock::TimePoint now) const {
  if (!rate_ || (limit_.requests_per_minute && *rate_ >= *limit_.requests_per_minute)) return std::nullopt;
  const Clock::TimePoint next = std::max(now, std::max(last_creep_, last_cut_) + CreepInterval());
  return probing_ ? std::max(next, rises_held_until_) : next;
}

double RequestLimiter::RateBeforeCutLocked(Clock::TimePoint now) const {
  if (rate_) return *rate_;
  // Unlimited: the pace sent at this second or the last, kMinSample a second
  // at least (two requests in the first milliseconds of a burst are no pace:
  // counted as 120 a minute, the shared limiter halved that to 60, and the
  // rest of the burst found no slot before its deadline), or twice what it
  // took before it was unlimited again.
  const double window = std::max(1.0, std::chrono::duration<double>(now - unlimited_.window_start.load()).count());
  return std::max({60.0 * unlimited_.window_sent.load() / window, 60.0 * last_window_per_second_, 60.0 * kMinSample,
                   2 * accepted_at_cut_});
}

void RequestLimiter::MarkCreepLocked(Clock::TimePoint now) {
  last_creep_ = now;
  sent_since_creep_ = 0;
}

void RequestLimiter::HoldAsJitterLocked(Clock::TimePoint now, double rate) {
  spdlog::debug("rate limit: {} of {} refused at {:.0f} a minute, which ran clean or is probed: held",
                refused_since_change_, sent_since_change_, rate);
  if (sent_since_change_ > 10 * kMinSample) {
    sent_since_change_ /= 2;
    refused_since_change_ /= 2;
  }
  forgiven_since_change_ = refused_since_change_;
  MarkCreepLocked(now);
}

std::optional<RequestLimiter::CutTo> RequestLimiter::SampledCutLocked(double before) {
  const double refused_share = refused_since_change_ / static_cast<double>(sent_since_change_);
  CutTo to;
  to.estimate = *rate_ * (1 - refused_share);
  to.next = refused_share > 1 - kBackoff ? kBackoff * to.estimate : to.estimate;
  // A provider that spaces requests strictly refuses far more than the
  // excess (up to half of them just above its limit): while it takes more
  // than half, one sample cuts a fifth at most (the next sample cuts again).
  if (refused_share < 0.5) {
    to.next = std::max(to.next, kMaxSampledCut * before);
    to.estimate = std::max(to.estimate, to.next);
  }
  // Refused above a rate that ran clean: no lower than that. Refused at or
  // below it: one 429, or kStrayShare of the sample or fewer, is jitter at
  // the limit (a busy CPU sent two too close; cutting would not stop it),
  // and the rate holds for a second with the sample going on (halved past
  // 10 x kMinSample, so that old requests fade); more, and the provider's
  // limit fell: what ran clean is forgotten.
  // Probing up from a first burst (no estimate yet), one 429 in a whole sample is jitter too: the
  // provider took the rest at this pace. Cut, the probe ended far under the limit (nginx without a
  // burst: a lone 429 at 64 a second, and the pace crept up from 62 a second for 13 s). Not in the
  // shared limiter: there two replicas' first bursts meet one bucket, and holding the probe past a
  // lone 429 let 46-145 of 200-305 requests be refused after the third second
  // (SharedStateTest.A429BurstSlowsBothReplicas..., under load).
  const bool jitter = clean_at_ >= before ? refused_since_change_ <= 1 || refused_share <= kStrayShare
                                          : probing_ && refused_since_change_ <= 1;
  if (jitter) return std::nullopt;
  if (clean_at_ >= before) {
    // More at a rate that ran clean: as likely jitter at the limit (a provider spacing requests
    // strictly refuses a third of those sent at its own rate) as a limit fallen. A step down; a
    // limit fallen further is cut again by the next sample, as what ran clean is forgotten.
    // Measured on nginx at 100 a second: 6 of 20 refused at 6,000 a minute, which had run clean,
    // cut to 4,800, and the search took 5 s back to 5,962.
    if (refused_share < 0.5) {
      to.next = std::max(to.next, (1 - kStepShare) * before);
      to.estimate = std::max(to.estimate, to.next);
    }
    clean_at_ = 0;
  }
  to.estimate = std::max(to.estimate, clean_at_);
  return to;
}

void RequestLimiter::CutLocked(Clock::TimePoint now, bool sampled) {
  const double n = sent_since_change_;
  const double before = RateBeforeCutLocked(now);
  // No sample (a first burst): probe up from the rate it was sent at, not half
  // of it (design.md §9.6): that rate was never a measurement (64 requests in
  // one instant, counted over a second); halving it only slows the probe that
  // follows (measured: 42 admitted in the next second instead of 71). The
  // shared (Redis) limiter still halves: there, several replicas' first
  // bursts meet one bucket, and not halving refused too many (shared_limiter.cpp).
  CutTo to{before, before};
  if (sampled) {
    const std::optional<CutTo> sample = SampledCutLocked(before);
    if (!sample) return HoldAsJitterLocked(now, before);
    to = *sample;
  }
  const double estimate = to.estimate;
  const double next = std::max(to.next, clean_at_);  // refused above what ran clean: no lower than that
  const double floor = before / kMaxCut;
  // A sampled cut of the excess (not a stray 429's, not a first burst's): its provider window follows.
  const bool excess = sampled && refused_since_change_ > (1 - kBackoff) * n;
  accepted_at_cut_ = std::max(kMinPerMinute, estimate);
  refused_at_ = sampled ? before : 0;
  lone_refusals_ = sampled && refused_since_change_ <= 1 ? lone_refusals_ + 1 : 0;
  double rate = std::max({kMinPerMinute, next, floor});
  probing_ = !sampled || next < floor;  // no estimate to trust yet
  if (probing_) probe_cap_ = 2 * std::max(before, clean_at_);
  if (limit_.requests_per_minute) rate = std::min(rate, *limit_.requests_per_minute);
  spdlog::debug("rate limit: a 429 with {} of {} refused at {:.0f} a minute; now {:.0f} a minute{}",
                refused_since_change_, sent_since_change_, before, rate, probing_ ? " (probing)" : "");
  SetRateLocked(rate, now);
  last_cut_ = now;
  MarkCreepLocked(now);
  grace_until_ = excess ? now + kCutGrace : Clock::TimePoint{};
}

Clock::TimePoint::duration RequestLimiter::TokenTimeLocked(std::int64_t tokens) const {
  if (!limit_.tokens_per_minute || *limit_.tokens_per_minute <= 0) return Clock::TimePoint::duration::zero();
  return Span(static_cast<double>(tokens), *limit_.tokens_per_minute);
}

void RequestLimiter::GoLocked(std::int64_t position, Clock::TimePoint now) {
  if (rate_ && position >= anchor_position_) {
    // The places behind follow this one at the pace, each at its own time. Left on a schedule
    // that late wake-ups had passed, every waiter whose slot passed woke at each send, and the
    // one to go was late again (nginx at 100 a second: 10.35 ms apart at a pace of 10.12 ms).
    anchor_position_ = position;
    anchor_time_ = now;
  }
  last_go_ = now;
  ++sent_since_change_;
  ++sent_since_creep_;
  if (!rate_) CountUnlimitedLocked(now);
}

boost::asio::awaitable<Limiter::Admission> RequestLimiter::Acquire(Clock::TimePoint latest, std::int64_t tokens) {
  Admission admission;
  if (GoUnlimited(tokens, admission)) co_return admission;
  std::int64_t position = 0;
  Clock::TimePoint token_slot;
  {
    std::lock_guard lock(mutex_);
    Clock::TimePoint now = clock_.Now();
    CreepLocked(now);
    position = tail_;
    Clock::TimePoint slot = SlotLocked(position, now);
    if (slot == now && rate_) {
      anchor_position_ = position;  // idle meanwhile: the queue starts again from here
      anchor_time_ = now;
    }
    token_slot = std::max(now, next_token_slot_);
    slot = std::max(slot, token_slot);
    if (slot > latest) {
      admission.outcome = Outcome::kTooLate;
      admission.wait = std::chrono::ceil<std::chrono::milliseconds>(slot - now);
      co_return admission;
    }
    ++tail_;
    next_token_slot_ = token_slot + TokenTimeLocked(tokens);
  }
  // Wait for the place: a cut meanwhile makes it later, a rise sooner (checked on waking).
  for (;;) {
    Clock::TimePoint now = clock_.Now();
    Clock::TimePoint slot;
    Clock::TimePoint wake;
    {
      std::lock_guard lock(mutex_);
      CreepLocked(now);
      slot = std::max(SlotLocked(position, now), token_slot);
      if (rate_ && slot <= now) {
        slot = std::max(slot, last_go_ + Span(1, *rate_));
      }
      if (slot <= now) {
        GoLocked(position, now);
        admission.ticket = Ticket{now, -1, tokens};
        co_return admission;
      }
      wake = std::min(slot, NextCreepLocked(now).value_or(slot));
      ++waited_since_change_;  // held back by the pace
    }
    if (slot > latest) {
      admission.outcome = Outcome::kTooLate;
      admission.wait = std::chrono::ceil<std::chrono::milliseconds>(slot - now);
      co_return admission;
    }
    if (!co_await clock_.SleepUntil(wake)) {
      admission.outcome = Outcome::kCancelled;
      co_return admission;
    }
  }
}

void RequestLimiter::Report(const Ticket& ticket, bool rate_limited, std::int64_t used_tokens,
                            std::chrono::milliseconds server_delay) {
  // Unlimited, a request taken teaches nothing (no tokens to correct, no grace after a cut).
  if (!rate_limited && open_.load(std::memory_order_acquire)) return;
  std::lock_guard lock(mutex_);
  if (used_tokens != ticket.tokens) {
    // Charge what was really used: a later slot for more, an earlier one for less.
    Clock::TimePoint::duration correction = TokenTimeLocked(std::abs(used_tokens - ticket.tokens));
    next_token_slot_ += used_tokens > ticket.tokens ? correction : -correction;
  }
  if (!rate_limited) {
    if (ticket.admitted >= last_cut_) grace_until_ = {};  // taken since the cut: the 429s are the rate's again
    return;
  }
  Clock::TimePoint now = clock_.Now();
  if (ticket.admitted < changed_) return;  // sent before the rate last changed: not this rate's sample
  if (ticket.admitted < grace_until_) {
    --sent_since_change_;  // just after a cut: the provider's window, not this rate's sample
    if (sent_since_creep_ > 0) --sent_since_creep_;
    return;
  }
  ++refused_since_change_;
  if (rate_ && sent_since_change_ >= kMinSample) {
    CutLocked(now, true);
  } else if (!rate_) {
    CutLocked(now, false);                   // a burst while unlimited: nothing to sample
    rises_held_until_ = now + server_delay;  // and no probe up before the server's delay is over
  } else if (clean_at_ > 0 && *rate_ > clean_at_) {
    StepBackLocked(now);
  }
}

void RequestLimiter::StepBackLocked(Clock::TimePoint now) {
  const double rate = probing_ ? clean_at_ + (*rate_ - clean_at_) / 2 : clean_at_;
  spdlog::debug("rate limit: a 429 at {:.0f} a minute, above {:.0f} that ran clean; now {:.0f} a minute", *rate_,
                clean_at_, rate);
  refused_at_ = *rate_;
  ++lone_refusals_;
  accepted_at_cut_ = std::max(accepted_at_cut_, clean_at_);
  probing_ = false;  // between the two, a search
  SetRateLocked(rate, now);
  last_cut_ = now;
  MarkCreepLocked(now);
}

std::optional<double> RequestLimiter::rate_per_minute() const {
  std::lock_guard lock(mutex_);
  return rate_;
}

}  // namespace skillrunner::state
