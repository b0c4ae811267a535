#pragma once

// What a provider's pace looks like to its callers (design.md §9.6): a slot to
// wait for before each request, and a report of what came of it. Two
// implementations: RequestLimiter (this process) and SharedLimiter (every
// process with the same `state.redis`, falling back to this process's share
// while Redis is unreachable).

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <optional>

#include "services/common/clock.h"

namespace skillrunner::state {

// A provider's configured limits (`rate_limits:` in skillrunner.yaml or an
// eval suite): a ceiling and a starting rate. Unset: learned from 429s
// (requests) or not enforced (tokens).
struct RateLimit {
  std::optional<double> requests_per_minute;
  std::optional<double> tokens_per_minute;

  friend bool operator==(const RateLimit&, const RateLimit&) = default;
};

// How the pace is learned (both implementations; design.md §9.6,
// docs/rate-limits.md):
// - Unconfigured, a provider is unlimited until its first 429. That 429 (a
//   burst: nothing to sample) takes the rate requests were sent at (counted
//   a second at a time: this second's or the last one's, kMinSample a
//   second at least), halved by the shared limiter but not below that
//   floor, and probes: each kProbeSeconds with requests taken doubles it.
// - 429s are counted against the requests sent at the current rate (since
//   it last changed). Once kMinSample went out, a 429 cuts: the provider's
//   limit is estimated as the rate times the share it accepted; more than
//   1 - kBackoff refused, the rate becomes kBackoff of that estimate; fewer
//   (stray 429s near the limit), the estimate itself; while it takes more
//   than half, one sample cuts a fifth at most (kMaxSampledCut: a provider
//   that spaces requests strictly refuses up to half of them just above its
//   limit). A cut never goes below a quarter of the rate before it (kMaxCut;
//   held there, it probes).
// - A rate ran clean after a second (probing: kProbeSeconds) of at least
//   kMinSample / 2 requests (or half a second's worth at the rate, when
//   fewer), no 429, and the rate reached (the requests sent since it was set
//   came to kReachedShare of it: a pace nobody reached is not counted as
//   clean, and a search holds). No cut goes below the fastest rate
//   that ran clean since (it was refused above that), and a 429 one step
//   above it goes straight back to it, without waiting for a sample (a
//   probe's doubling refused: halfway back, the search's first step).
//   Refused at or below it: one 429, or kStrayShare of the sample or
//   fewer, is jitter, and the rate holds with the sample going on (it does
//   not stop the next rise: held, it would have stopped 10 x kMinSample
//   requests' worth, measured as a 5 s stall at 73 of nginx's 100 a
//   second); more, the limit fell or it is jitter at the limit: kStepShare
//   down at most while the provider took more than half, and that rate is
//   forgotten (the next sample cuts as above). Probing (no estimate yet),
//   one 429 in a sample is jitter too (RequestLimiter only).
// - After a cut, a provider goes on refusing for the rest of its window what
//   the rate before sent too many: 429s of requests sent within kCutGrace of
//   the cut are not the new rate's sample (neither sent nor refused), until
//   a request sent since the cut is taken or kCutGrace passes, whichever is
//   first. Counted, a limit configured at 4x the real one was cut twice,
//   6000 -> 1500 -> 375 a minute, and settled far under the real limit.
// - Only requests teach: a second without enough of them (idle, or every
//   caller waiting out a Retry-After) holds the rate, as does a 429 in a
//   sample not yet complete.
// - Each second that ran clean then rises (each half second, well below a
//   rate refused: more than 1 - 1 / kTargetOver under it): with a rate
//   that ran clean below the one refused, halfway between the two (a
//   search; kSearchGrowth times the rate at most, as a first burst's
//   refused rate is far past the limit), until within kSearchStep; settled there, a try just past the refused rate each
//   kSettleSeconds (a limit may rise); when that rate was refused by a lone
//   429 (jitter, as likely as not), once 5 x kMinSample requests' worth
//   passed instead (kLoneSettleSeconds at least), twice that after each
//   such try refused in a row, until a rate past it runs clean. Without one, halfway towards the
//   refused rate but no further than kTargetOver times the estimate,
//   then kStepShare of the estimate each second.
// - Unconfigured, past twice the estimate (probing: twice the refused burst)
//   with nobody held back by the pace, it is unlimited again. Never above
//   the ceiling, never below kMinPerMinute.
// - A rise re-times the waiters already asleep too: they wake at each chance
//   of a rise and go in their order.
inline constexpr double kMinPerMinute = 6;  // never slower than one request each 10 s
inline constexpr double kBackoff = 0.9;
inline constexpr double kStepShare = 0.05;
inline constexpr double kProbeFactor = 2;
inline constexpr double kMaxCut = 4;
inline constexpr int kMinSample = 20;
inline constexpr double kNearRefused = 0.95;
inline constexpr double kTargetOver = 1.1;
inline constexpr double kMaxSampledCut = 0.8;
inline constexpr double kSearchStep = 0.01;
inline constexpr double kSearchGrowth = 1.5;
// A rate was reached when the requests sent at it since the last creep came to this share of it or
// more, or a request waits for its place now (a busy CPU that wakes waiters late sends below a pace
// it saturates).
inline constexpr double kReachedShare = 0.9;
inline constexpr double kStrayShare = 0.01;
inline constexpr double kProbeSeconds = 0.5;
inline constexpr int kSettleSeconds = 30;
inline constexpr int kLoneSettleSeconds = 2;
inline constexpr std::chrono::milliseconds kCutGrace{1000};  // a provider's Retry-After, most often

class Limiter {
 public:
  enum class Outcome { kGo, kCancelled, kTooLate };
  // What a request was given. `ticket` goes back with its report.
  struct Ticket {
    Clock::TimePoint admitted{};           // this process's clock
    std::int64_t shared_admitted_ms = -1;  // the shared clock's, when shared
    std::int64_t tokens = 0;               // the estimate charged
  };
  struct Admission {
    Outcome outcome = Outcome::kGo;
    Ticket ticket;
    std::chrono::milliseconds wait{0};  // kTooLate: how long until a slot would be free
  };

  virtual ~Limiter() = default;
  // Waits for this request's slot: one request and `tokens` (an estimate of
  // its input and output). kTooLate, without waiting, when the slot is later
  // than `latest`; kCancelled when the wait was cancelled.
  virtual boost::asio::awaitable<Admission> Acquire(Clock::TimePoint latest, std::int64_t tokens) = 0;
  // What came of an admitted request: whether it was refused with a rate
  // limit, and the tokens it really used (the estimate is corrected). A
  // refusal's `server_delay` (its Retry-After; 0: none given) is a floor for
  // the pace too: a burst's first 429 starts no probe up before it is over
  // (design.md §12.0). The refused request waits it out (RetryingProvider);
  // the others keep the learned pace.
  virtual void Report(const Ticket& ticket, bool rate_limited, std::int64_t used_tokens,
                      std::chrono::milliseconds server_delay) = 0;
  void Report(const Ticket& ticket, bool rate_limited, std::int64_t used_tokens) {
    Report(ticket, rate_limited, used_tokens, std::chrono::milliseconds(0));
  }
  // Requests per minute allowed now; nullopt while unlimited.
  virtual std::optional<double> rate_per_minute() const = 0;
};

}  // namespace skillrunner::state
