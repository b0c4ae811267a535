// The learned pace of one provider (design.md §9.6), on a fake clock.
#include "services/state/request_limiter.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <cmath>
#include <cstdio>
#include <deque>
#include <functional>
#include <optional>
#include <random>

#include "services/providers/limited_provider.h"
#include "tests/support/fake_clock.h"
#include "tests/support/run_awaitable.h"
#include "tests/support/virtual_clock.h"

namespace skillrunner::state {
namespace {
using std::chrono::milliseconds;
using test_support::FakeClock;
using test_support::RunAwaitable;
using Outcome = Limiter::Outcome;

constexpr Clock::TimePoint kFarFuture = Clock::TimePoint::max();

Outcome Take(Limiter& limiter, Clock::TimePoint latest = kFarFuture, std::int64_t tokens = 0) {
  return RunAwaitable(limiter.Acquire(latest, tokens)).outcome;
}

TEST(RequestLimiterTest, UnconfiguredIsUnlimitedUntilA429) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(Take(limiter), Outcome::kGo);
  EXPECT_TRUE(clock.sleeps.empty());
  EXPECT_FALSE(limiter.rate_per_minute().has_value());
}

TEST(RequestLimiterTest, AConfiguredRatePacesCallersInArrivalOrder) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{120, std::nullopt}, clock);  // one every 500 ms
  for (int i = 0; i < 4; ++i) ASSERT_EQ(Take(limiter), Outcome::kGo);
  EXPECT_EQ(clock.DelaysMs(), (std::vector<std::int64_t>{500, 500, 500}));
}

// An unconfigured limiter's first burst refused (`burst` sent at once, the first refused: the
// burst's pace, probed up from), then `sample` at that pace of which the provider refuses
// `refused`, the last of them last: the cut of a sampled 429.
// `burst` sent at once, and 10 ms later the first of them refused. Returns their tickets.
std::vector<Limiter::Ticket> FirstBurstRefused(RequestLimiter& limiter, FakeClock& clock, int burst) {
  std::vector<Limiter::Ticket> sent;
  for (int i = 0; i < burst; ++i) sent.push_back(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket);
  clock.Advance(milliseconds(10));
  limiter.Report(sent[0], true, 0);
  return sent;
}

void BurstThenSample(RequestLimiter& limiter, FakeClock& clock, int burst, int sample, int refused) {
  const std::vector<Limiter::Ticket> sent = FirstBurstRefused(limiter, clock, burst);
  limiter.Report(sent[1], true, 0);  // sent before the rate changed: not its sample
  Limiter::Ticket last;
  for (int i = 0; i < sample; ++i) {
    last = RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket;
    if (i < refused - 1) limiter.Report(last, true, 0);  // fewer than 20 sent at this rate: counted, no cut yet
  }
  limiter.Report(last, true, 0);
}

// 50 at once, then 6 of 25 refused at 3,000 a minute: cut to 2,400.
void LearnFromABurst(RequestLimiter& limiter, FakeClock& clock) { BurstThenSample(limiter, clock, 50, 25, 6); }

// One request, refused.
void SendRefused(RequestLimiter& limiter) {
  limiter.Report(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket, true, 0);
}

// Takes requests as fast as the limiter lets them go until its rate changes or `most` went.
int SendUntilTheRateChanges(RequestLimiter& limiter, int most = 10'000) {
  const std::optional<double> rate = limiter.rate_per_minute();
  int sent = 0;
  while (limiter.rate_per_minute() == rate && sent < most) {
    EXPECT_EQ(Take(limiter), Outcome::kGo);
    ++sent;
  }
  return sent;
}

// LearnFromABurst, then 2,400 ran clean and the rise halfway to 3,000 was refused: back to 2,400,
// a search between the two.
void SearchFrom2400(RequestLimiter& limiter, FakeClock& clock) {
  LearnFromABurst(limiter, clock);
  SendUntilTheRateChanges(limiter);
  SendRefused(limiter);
  ASSERT_EQ(limiter.rate_per_minute(), 2400);
}

// A 429's Retry-After is a floor for the pace too (design.md §12.0): a first burst refused with
// `Retry-After: 2` probes up from its pace only once those 2 s are over; without one, after the
// probe's half second.
TEST(RequestLimiterTest, NoProbeUpComesBeforeAFirst429sRetryAfterIsOver) {
  for (const milliseconds server_delay : {milliseconds(2000), milliseconds(0)}) {
    FakeClock clock;
    RequestLimiter limiter(RateLimit{}, clock);
    std::vector<Limiter::Ticket> burst;
    for (int i = 0; i < 50; ++i) burst.push_back(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket);
    clock.Advance(milliseconds(10));
    limiter.Report(burst[0], true, 0, server_delay);
    const Clock::TimePoint refused = clock.Now();
    ASSERT_EQ(limiter.rate_per_minute(), 3000);  // the burst's pace, probed up from
    SendUntilTheRateChanges(limiter);
    EXPECT_EQ(limiter.rate_per_minute(), 6000);
    const auto rose_after = std::chrono::duration_cast<milliseconds>(clock.Now() - refused);
    if (server_delay.count() > 0) {
      EXPECT_GE(rose_after, server_delay);
      EXPECT_LE(rose_after, server_delay + milliseconds(40));  // at the first request after it
    } else {
      EXPECT_LE(rose_after, milliseconds(540));
    }
  }
}

TEST(RequestLimiterTest, AFirstBurstSetsItsOwnPaceThenTheShareTheProviderTookSetsTheRate) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  std::vector<Limiter::Ticket> burst;
  for (int i = 0; i < 50; ++i) burst.push_back(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket);
  EXPECT_TRUE(clock.sleeps.empty());  // unlimited until the first 429
  clock.Advance(milliseconds(10));
  limiter.Report(burst[0], true, 0);
  // 50 sent in (under) a second and nothing to sample: 3,000 a minute, probed up from.
  EXPECT_EQ(limiter.rate_per_minute(), 3000);
  limiter.Report(burst[1], true, 0);  // sent before the rate changed: not its sample
  EXPECT_EQ(limiter.rate_per_minute(), 3000);
  Limiter::Ticket last;
  for (int i = 0; i < 25; ++i) {
    last = RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket;
    if (i < 5) limiter.Report(last, true, 0);
  }
  EXPECT_EQ(limiter.rate_per_minute(), 3000);  // fewer than 20 sent at this rate: counted, no cut yet
  // One each 20 ms from the last of the burst.
  std::vector<std::int64_t> paced(25, 20);
  paced[0] = 10;
  EXPECT_EQ(clock.DelaysMs(), paced);
  limiter.Report(last, true, 0);
  // It took 19 of the 25 sent at 3,000 a minute: its limit is about 2,280, and 90% of
  // that would be 2,052; but one sample cuts a fifth at most: 2,400.
  EXPECT_EQ(limiter.rate_per_minute(), 2400);
}

TEST(RequestLimiterTest, OneRefusedInASampleWhileProbingIsJitterAndTheProbeGoesOn) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  // 64 at once, the first refused: probing up from 3,840 a minute; then the 28th of 28 sent at it
  // refused (a provider that spaces requests strictly, and two sent a little too close).
  BurstThenSample(limiter, clock, 64, 28, 1);
  EXPECT_EQ(limiter.rate_per_minute(), 3840);  // held: cut to the share taken, it would be 3,703
  // Half a second of requests taken from the hold: it ran clean, and the probe doubles.
  EXPECT_EQ(SendUntilTheRateChanges(limiter), 32);
  EXPECT_EQ(limiter.rate_per_minute(), 7680);
}

TEST(RequestLimiterTest, OnlyRequestsTeachItAndAStepUpRefusedGoesBackToTheRateThatRanClean) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  LearnFromABurst(limiter, clock);
  ASSERT_EQ(limiter.rate_per_minute(), 2400);
  // A minute idle teaches nothing: the rate holds.
  clock.Advance(std::chrono::seconds(60));
  ASSERT_EQ(Take(limiter), Outcome::kGo);
  EXPECT_EQ(limiter.rate_per_minute(), 2400);
  // Half a second of requests at 2,400 (one each 25 ms; creeps come each half second this far
  // below the refused 3,000) and no 429: it ran clean, and the rate goes halfway towards 3,000.
  EXPECT_EQ(SendUntilTheRateChanges(limiter), 20);
  EXPECT_EQ(limiter.rate_per_minute(), 2700);
  // Refused one step up: back to what ran clean at once, without waiting for a sample.
  limiter.Report(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket, true, 0);
  EXPECT_EQ(limiter.rate_per_minute(), 2400);
  const Clock::TimePoint refused = clock.Now();
  // Then a search between the two: halfway, while they are more than 1% apart.
  SendUntilTheRateChanges(limiter);
  EXPECT_EQ(limiter.rate_per_minute(), 2550);
  SendUntilTheRateChanges(limiter);
  EXPECT_EQ(limiter.rate_per_minute(), 2625);
  SendUntilTheRateChanges(limiter);
  EXPECT_EQ(limiter.rate_per_minute(), 2662.5);
  SendUntilTheRateChanges(limiter);
  EXPECT_EQ(limiter.rate_per_minute(), 2681.25);
  // Settled (within 27 of 2,700). One 429 alone refused 2,700, as likely jitter as the
  // limit: a try just past it once 100 requests' worth (2.2 s here) passed since, so at
  // the next second that runs clean, not half a minute later.
  ASSERT_GE(clock.Now() - refused, milliseconds(2200));
  const Clock::TimePoint settled = clock.Now();
  SendUntilTheRateChanges(limiter);
  EXPECT_NEAR(*limiter.rate_per_minute(), 2727, 1e-9);
  EXPECT_LE(clock.Now() - settled, milliseconds(1100));
}

// Probing up from a first burst, a doubling refused: the limit lies between the two, and the
// search starts halfway at once (on nginx at 100 a second, the half second back at 64 a second
// before that step was the first second's largest loss). Refused there too: back to what ran clean.
TEST(RequestLimiterTest, AProbesDoublingRefusedGoesHalfwayBackAndRefusedAgainToTheRateThatRanClean) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  FirstBurstRefused(limiter, clock, 64);
  ASSERT_EQ(limiter.rate_per_minute(), 3840);  // probing up from the burst's pace
  EXPECT_EQ(SendUntilTheRateChanges(limiter), 32);
  ASSERT_EQ(limiter.rate_per_minute(), 7680);  // half a second ran clean: doubled
  SendRefused(limiter);
  EXPECT_EQ(limiter.rate_per_minute(), 5760);
  SendRefused(limiter);
  EXPECT_EQ(limiter.rate_per_minute(), 3840);
  // The search goes on from there: halfway towards the 5,760 refused after half a second clean.
  SendUntilTheRateChanges(limiter);
  EXPECT_EQ(limiter.rate_per_minute(), 4800);
}

// More than a stray share refused at a rate that ran clean is as likely jitter at the limit (a
// provider spacing requests strictly refuses a third of those sent at its own rate) as a limit
// fallen: a step of kStepShare down, and what ran clean is forgotten, so that a limit fallen
// further is cut by the next sample. On nginx at 100 a second, 6 of 20 refused at 6,000 a minute
// after it ran clean cut to 4,800, and the search took 5 s back to 5,962.
TEST(RequestLimiterTest, SeveralRefusedAtARateThatRanCleanStepItDownAndTheNextSampleCuts) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  ASSERT_NO_FATAL_FAILURE(SearchFrom2400(limiter, clock));
  // 6 of 20 refused at 2,400: 90% of the 1,680 it took would be 1,512, a fifth down 1,920.
  auto refuse_six_of_twenty = [&] {
    Limiter::Ticket last;
    for (int i = 0; i < 20; ++i) {
      last = RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket;
      if (i < 5) limiter.Report(last, true, 0);  // fewer than 20 sent: counted, no cut yet
    }
    limiter.Report(last, true, 0);
  };
  refuse_six_of_twenty();
  EXPECT_EQ(limiter.rate_per_minute(), 2280);
  // One taken ends the cut's grace, then 6 of 21 refused at 2,280, which never ran clean: a fifth down.
  limiter.Report(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket, false, 0);
  refuse_six_of_twenty();
  EXPECT_EQ(limiter.rate_per_minute(), 1824);
}

// Searching between 2,400 (ran clean) and 2,700 (refused), requests slower than the pace teach
// nothing of the provider: nobody waits, the rate holds and is not counted as clean. Two replicas'
// callers coming back together from a Retry-After met a rate risen unused from 1,106 to 2,999 a
// minute and 21 of 166 were refused. As fast as the pace lets them, the same search rises.
TEST(RequestLimiterTest, ASearchRiseNobodyWouldUseIsHeld) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  ASSERT_NO_FATAL_FAILURE(SearchFrom2400(limiter, clock));
  clock.Advance(milliseconds(100));  // past the last one's slot
  const std::size_t slept = clock.sleeps.size();
  for (int i = 0; i < 100; ++i) {
    clock.Advance(milliseconds(50));  // 1,200 a minute: nobody waits at 2,400
    ASSERT_EQ(Take(limiter), Outcome::kGo);
  }
  EXPECT_EQ(clock.sleeps.size(), slept);  // nobody waited
  EXPECT_EQ(limiter.rate_per_minute(), 2400);
  SendUntilTheRateChanges(limiter);
  EXPECT_EQ(limiter.rate_per_minute(), 2550);
}

// Searching between 2,400 (ran clean) and 2,700 (refused), one stray 429 at 2,400 is held as
// jitter, and the search goes on at the next chance. It used to stop every rise until the
// sample had 200 requests (5 s here; measured on nginx: 5 s at 73 of its 100 a second).
TEST(RequestLimiterTest, AStray429HeldAsJitterDoesNotStopTheNextRise) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  ASSERT_NO_FATAL_FAILURE(SearchFrom2400(limiter, clock));
  const Clock::TimePoint start = clock.Now();
  Limiter::Ticket last;
  for (int i = 0; i < 5; ++i) last = RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket;
  limiter.Report(last, true, 0);  // 1 of 5 at 2,400, which ran clean
  EXPECT_EQ(limiter.rate_per_minute(), 2400);
  // Creeps each half second (a wide search): at 0.5 s the sample is short of 20 with a 429 in
  // it (held); at 1 s it is complete, and that 429 is held as jitter; at 1.5 s it rises.
  const int sent = SendUntilTheRateChanges(limiter);
  EXPECT_EQ(limiter.rate_per_minute(), 2550);
  EXPECT_EQ(sent, 55);
  EXPECT_EQ(clock.Now() - start, milliseconds(1500));
}

// A first burst's refused rate is far past the limit: the search from the rate that ran clean
// after the cut goes halfway towards it, but 1.5 times up at most (nginx at 100 a second
// refused a halfway step to 154 and one to 110, each costing the half second before the next
// try). Creeps come each half second this far below the refused rate. Below 1,200 a minute,
// half a second's worth with no 429 is a rate that ran clean: counting only seconds of 10 or
// more, a rate of 430 never ran clean and rose 5% of the estimate a second (8 s from 430 to
// 600 in a two-replica test against a server taking 1,200).
TEST(RequestLimiterTest, ASearchFarBelowTheRefusedRateStepsUpByHalfAtMost) {
  struct Case {
    int burst, sample, refused;  // BurstThenSample
    double cut;                  // 90% of the share taken of the burst's pace
    int sent;                    // until the next rise
    double next;
  };
  const Case cases[] = {
      // 12,000 a minute refused; 18 of 25 refused took 3,360. Half a second (25 sent) ran clean;
      // halfway would be 7,512.
      {200, 25, 18, 3024, 25, 4536},
      // Two are no pace: 1,200 a minute; 12 of 20 refused took 480. Within a second (8 sent) it
      // ran clean; halfway would be 816 (not counted as clean: 480, halfway to 1.1 x 480).
      {2, 20, 12, 432, 8, 648},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.burst);
    FakeClock clock;
    RequestLimiter limiter(RateLimit{}, clock);
    BurstThenSample(limiter, clock, c.burst, c.sample, c.refused);
    ASSERT_NEAR(*limiter.rate_per_minute(), c.cut, 1e-9);
    EXPECT_EQ(SendUntilTheRateChanges(limiter), c.sent);
    EXPECT_NEAR(*limiter.rate_per_minute(), c.next, 1e-9);
  }
}

// A rate refused by more than one 429 (a cut from a sample) is tried again after half a minute.
TEST(RequestLimiterTest, ARateRefusedBySeveral429sIsTriedAgainAfterHalfAMinute) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  LearnFromABurst(limiter, clock);  // 6 of 25 refused at 3,000: cut to 2,400
  const Clock::TimePoint refused = clock.Now();
  std::vector<std::optional<double>> rates;
  while (limiter.rate_per_minute() <= 2999) {
    SendUntilTheRateChanges(limiter);
    rates.push_back(limiter.rate_per_minute());
  }
  // Halfway towards 3,000 each second that ran clean, settled within 30, then 3,030.
  EXPECT_EQ(rates, (std::vector<std::optional<double>>{2700, 2850, 2925, 2962.5, 2981.25, 3030}));
  EXPECT_GE(clock.Now() - refused, std::chrono::seconds(30));
}

TEST(RequestLimiterTest, ProbingPastItsCapIsUnlimitedAgainOnlyWhenNobodyWaited) {
  // Requests slower than the pace: nobody waits, and past twice the refused burst it is
  // unlimited again.
  {
    FakeClock clock;
    RequestLimiter limiter(RateLimit{}, clock);
    std::vector<Limiter::Ticket> burst;
    for (int i = 0; i < 50; ++i) burst.push_back(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket);
    limiter.Report(burst[0], true, 0);
    ASSERT_EQ(limiter.rate_per_minute(), 3000);  // probing: doubling each half second
    std::vector<std::optional<double>> rates;
    for (int i = 0; i < 60 && limiter.rate_per_minute(); ++i) {
      clock.Advance(milliseconds(40));  // 25 a second, below every pace it probes
      ASSERT_EQ(Take(limiter), Outcome::kGo);
      if (rates.empty() || rates.back() != limiter.rate_per_minute()) rates.push_back(limiter.rate_per_minute());
    }
    EXPECT_TRUE(clock.sleeps.empty());
    EXPECT_EQ(rates, (std::vector<std::optional<double>>{3000, 6000, std::nullopt}));
  }
  // Requests as fast as the pace lets them: it holds them back, so it doubles on.
  {
    FakeClock clock;
    RequestLimiter limiter(RateLimit{}, clock);
    std::vector<Limiter::Ticket> burst;
    for (int i = 0; i < 50; ++i) burst.push_back(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket);
    limiter.Report(burst[0], true, 0);
    SendUntilTheRateChanges(limiter);
    SendUntilTheRateChanges(limiter);
    ASSERT_EQ(limiter.rate_per_minute(), 12000);
    SendUntilTheRateChanges(limiter);
    EXPECT_EQ(limiter.rate_per_minute(), 24000);
  }
}

// The pace a first 429 is judged by is the last second's, not the average
// since the limiter started: after an idle hour a burst of 50 is 3,000 a minute.
TEST(RequestLimiterTest, AFirst429AfterAnIdleHourIsJudgedByTheLastSecondsPace) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  for (int i = 0; i < 100; ++i) {
    ASSERT_EQ(Take(limiter), Outcome::kGo);
    clock.Advance(std::chrono::seconds(36));
  }
  std::vector<Limiter::Ticket> burst;
  for (int i = 0; i < 50; ++i) burst.push_back(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket);
  clock.Advance(milliseconds(10));
  limiter.Report(burst[0], true, 0);
  EXPECT_EQ(limiter.rate_per_minute(), 3000);  // not 150 in the hour: 2.5 a minute
}

TEST(RequestLimiterTest, ARiseBringsWaitersAlreadyAsleepForwardInTheirOrder) {
  test_support::VirtualClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  boost::asio::io_context io;
  std::vector<Limiter::Ticket> burst;
  for (int i = 0; i < 5; ++i) {
    boost::asio::co_spawn(io, limiter.Acquire(kFarFuture, 0),
                          [&](std::exception_ptr, Limiter::Admission a) { burst.push_back(a.ticket); });
  }
  clock.Run(io);
  ASSERT_EQ(burst.size(), 5u);
  limiter.Report(burst[0], true, 0);
  // 5 in a second are no pace: counted as kMinSample (20) a second; probing.
  ASSERT_EQ(limiter.rate_per_minute(), 1200);
  // 80 callers at once: at 20 a second the last would go after 3.95 s. Each half second of
  // requests with no 429 doubles the pace, and the waiters already asleep go sooner too.
  const Clock::TimePoint start = clock.Now();
  std::vector<std::pair<int, Clock::TimePoint>> went;
  for (int i = 0; i < 80; ++i) {
    boost::asio::co_spawn(io, limiter.Acquire(kFarFuture, 0), [&, i](std::exception_ptr, Limiter::Admission a) {
      EXPECT_EQ(a.outcome, Outcome::kGo);
      went.emplace_back(i, clock.Now());
    });
  }
  clock.Run(io);
  ASSERT_EQ(went.size(), 80u);
  for (std::size_t i = 0; i < went.size(); ++i) EXPECT_EQ(went[i].first, static_cast<int>(i));  // in order
  EXPECT_LT(went.back().second - start, std::chrono::milliseconds(2500));
  EXPECT_GT(*limiter.rate_per_minute(), 1200);
}

// A clock whose sleepers wake late: by 0, 3 or 6 ms in turn (a busy CPU).
class LateClock : public Clock {
 public:
  TimePoint Now() const override { return clock.Now(); }
  boost::asio::awaitable<bool> Sleep(milliseconds delay) override { co_return co_await SleepUntil(Now() + delay); }
  boost::asio::awaitable<bool> SleepUntil(TimePoint deadline) override {
    co_return co_await clock.SleepUntil(deadline + milliseconds(3 * (sleeps_++ % 3)));
  }
  test_support::VirtualClock clock;

 private:
  int sleeps_ = 0;
};

// Waiters woken late go in arrival order, none within the pace of the one before: the rest of the
// queue follows the last one to go, each at its own time. Left on a schedule that late wake-ups had
// passed, every waiter whose slot had passed slept until the same instant after each send and the
// first to get the lock went (here the 9th to come went before the 8th; on nginx at 100 a second, requests
// went 10.35 ms apart on average at a pace of 10.12 ms).
TEST(RequestLimiterTest, AQueueWokenLateGoesInArrivalOrderEachOneThePaceAfterTheLast) {
  LateClock clock;
  RequestLimiter limiter(RateLimit{6000, std::nullopt}, clock);  // one each 10 ms
  boost::asio::io_context io;
  std::vector<std::pair<int, Clock::TimePoint>> went;
  for (int i = 0; i < 50; ++i) {
    boost::asio::co_spawn(io, limiter.Acquire(kFarFuture, 0), [&, i](std::exception_ptr, Limiter::Admission a) {
      EXPECT_EQ(a.outcome, Outcome::kGo);
      went.emplace_back(i, clock.Now());
    });
  }
  clock.clock.Run(io);
  ASSERT_EQ(went.size(), 50u);
  for (std::size_t i = 1; i < went.size(); ++i) {
    EXPECT_EQ(went[i].first, static_cast<int>(i));
    EXPECT_GE(went[i].second - went[i - 1].second, milliseconds(10));
  }
}

TEST(RequestLimiterTest, AStray429NearTheLimitTakesOnlyTheShareItRefused) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{6000, std::nullopt}, clock);
  Limiter::Ticket last;
  // 0.3 s: not yet a rate that ran clean (that one would hold, below).
  for (int i = 0; i < 30; ++i) last = RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket;
  limiter.Report(last, true, 0);  // 1 of 30 refused: jitter at the limit, not a rate above it
  EXPECT_NEAR(*limiter.rate_per_minute(), 6000.0 * 29 / 30, 1e-9);
}

TEST(RequestLimiterTest, AFew429sAtARateThatRanCleanHoldItAndMoreForgetIt) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{600, std::nullopt}, clock);
  Limiter::Ticket last;
  // 7 s at 600 a minute with no 429: it ran clean.
  for (int i = 0; i < 70; ++i) last = RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket;
  // 1 of 70 refused: two requests a busy CPU sent too close, and the rate holds.
  limiter.Report(last, true, 0);
  EXPECT_EQ(limiter.rate_per_minute(), 600);
  // The sample goes on: a second 429 four requests later (2 of 74, more than 2%) is the
  // provider's limit falling, and it takes off the share refused.
  for (int i = 0; i < 4; ++i) last = RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket;
  limiter.Report(last, true, 0);
  EXPECT_NEAR(*limiter.rate_per_minute(), 600.0 * 72 / 74, 1e-9);
}

TEST(RequestLimiterTest, AProviderRefusingMostIsCutAtMostFourfoldAndProbedBackWhileQuiet) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{6000, std::nullopt}, clock);
  for (int i = 0; i < 20; ++i) {
    // The provider takes none (a spent per-minute window, say).
    limiter.Report(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket, true, 0);
  }
  // It took none of 20: held at a quarter of 6,000, and probing.
  EXPECT_EQ(limiter.rate_per_minute(), 1500);
  // Half a second of requests taken (one each 40 ms): doubled; again: the ceiling.
  EXPECT_EQ(SendUntilTheRateChanges(limiter), 13);
  EXPECT_EQ(limiter.rate_per_minute(), 3000);
  SendUntilTheRateChanges(limiter);
  EXPECT_EQ(limiter.rate_per_minute(), 6000);
}

// After a cut of the excess, a provider may go on refusing for a while what the rate before sent
// too many (the rest of a spent window): those 429s are not the new rate's sample, which starts
// with the first request it takes (or kCutGrace after the cut). They used to cut again, to a
// quarter of the quarter (1,500 to 93.75).
TEST(RequestLimiterTest, AfterACutThe429sUntilTheProviderTakesOneAreNotTheNewRatesSample) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{6000, std::nullopt}, clock);
  for (int i = 0; i < 20; ++i) limiter.Report(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket, true, 0);
  ASSERT_EQ(limiter.rate_per_minute(), 1500);  // none of 20 taken: a quarter
  for (int i = 0; i < 10; ++i) limiter.Report(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket, true, 0);
  EXPECT_EQ(limiter.rate_per_minute(), 1500);  // 0.4 s of 429s (within kCutGrace): held, not a rise either
  // One taken ends the grace before it would have: the sample starts there, and the next 429s are
  // its own (10 of 20 refused at 1,500: 90% of the 750 it took).
  limiter.Report(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket, false, 0);
  for (int i = 0; i < 19; ++i) limiter.Report(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket, i % 2 == 0, 0);
  EXPECT_EQ(limiter.rate_per_minute(), 675);
}

// The grace is bounded: a provider that only refuses is the sample again kCutGrace after the cut
// (a rule waiting for a request taken would never learn).
TEST(RequestLimiterTest, AfterACutOnlyRefusedTheGraceEndsAndTheNextSampleCuts) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{6000, std::nullopt}, clock);
  for (int i = 0; i < 20; ++i) limiter.Report(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket, true, 0);
  ASSERT_EQ(limiter.rate_per_minute(), 1500);
  for (int i = 0; i < 25; ++i) limiter.Report(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket, true, 0);
  ASSERT_EQ(limiter.rate_per_minute(), 1500);  // the first second's 429s: the provider's window
  for (int i = 0; i < 20; ++i) limiter.Report(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket, true, 0);
  EXPECT_EQ(limiter.rate_per_minute(), 375);  // past it, 20 of 20 refused: a quarter again
}

TEST(RequestLimiterTest, TokensPerMinutePaceTheEstimateAndTheUsageCorrectsIt) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{std::nullopt, 60'000}, clock);  // 1,000 tokens a second
  auto first = RunAwaitable(limiter.Acquire(kFarFuture, 2'000));   // takes the next 2 s of tokens
  ASSERT_EQ(first.outcome, Outcome::kGo);
  EXPECT_TRUE(clock.sleeps.empty());
  // It used only 500: the 1.5 s it did not use are given back.
  limiter.Report(first.ticket, false, 500);
  ASSERT_EQ(Take(limiter, kFarFuture, 1'000), Outcome::kGo);
  EXPECT_EQ(clock.DelaysMs(), (std::vector<std::int64_t>{500}));
  // Requests stay unlimited: only tokens were configured.
  EXPECT_FALSE(limiter.rate_per_minute().has_value());
}

TEST(RequestLimiterTest, ASlotPastTheDeadlineIsRefusedWithoutWaiting) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{60, std::nullopt}, clock);  // one a second
  ASSERT_EQ(Take(limiter), Outcome::kGo);
  auto late = RunAwaitable(limiter.Acquire(clock.Now() + milliseconds(500), 0));
  EXPECT_EQ(late.outcome, Outcome::kTooLate);
  EXPECT_EQ(late.wait, milliseconds(1000));  // when the next slot is free
  EXPECT_TRUE(clock.sleeps.empty());
  clock.cancel_at = 0;
  EXPECT_EQ(Take(limiter), Outcome::kCancelled);
}

// A provider that takes `per_second` requests in each second of the clock and refuses the rest
// (429 with a retry-after of a second): a limit the limiter does not know.
class PerSecondProvider {
 public:
  explicit PerSecondProvider(int per_second) : per_second_(per_second) {}
  bool Take(Clock::TimePoint now) {
    const auto second = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
    if (second != second_) {
      second_ = second;
      taken_ = 0;
    }
    if (taken_ == per_second_) return false;
    ++taken_;
    return true;
  }

 private:
  int per_second_;
  std::int64_t second_ = -1;
  int taken_ = 0;
};

// nginx `limit_req zone=... rate=PER_SECONDr/s burst=BURST nodelay` (bench/rate_limit_bench.sh),
// as ngx_http_limit_req_lookup counts: the excess over the steady pace in thousandths of a
// request, drained at the rate for each millisecond of the clock since the last request it took;
// a request that would put the excess past the burst is refused and changes nothing. So it takes
// BURST + 1 at once, then one each 1 / PER_SECOND s.
class NginxLimitReq {
 public:
  NginxLimitReq(int per_second, int burst)
      : rate_(per_second * std::int64_t{1000}), burst_(burst * std::int64_t{1000}) {}
  bool Take(Clock::TimePoint now) {
    const std::int64_t ms = std::chrono::duration_cast<milliseconds>(now.time_since_epoch()).count();
    if (!last_) {
      last_ = ms;
      return true;
    }
    const std::int64_t excess = std::max<std::int64_t>(excess_ - rate_ * (ms - *last_) / 1000 + 1000, 0);
    if (excess > burst_) return false;
    excess_ = excess;
    last_ = ms;
    return true;
  }

 private:
  std::int64_t rate_;
  std::int64_t burst_;
  std::int64_t excess_ = 0;
  std::optional<std::int64_t> last_;
};

// Whether the provider takes a request that reaches it at a time.
using ProviderTake = std::function<bool(Clock::TimePoint)>;
ProviderTake PerSecond(int per_second) {
  return [provider = PerSecondProvider(per_second)](Clock::TimePoint now) mutable { return provider.Take(now); };
}
ProviderTake Nginx(int per_second, int burst) {
  return [provider = NginxLimitReq(per_second, burst)](Clock::TimePoint now) mutable { return provider.Take(now); };
}

// How the simulated eval's requests travel: a request reaches the provider 0.2 ms to `most_us` after
// its slot, and a 429 (with `Retry-After: 1`, reported to the limiter as the server's delay) is
// retried after that second plus up to a quarter of it, the retrying provider's spread: never sooner
// (design.md §12.0).
struct Travel {
  int most_us = 1500;
};

// bench/rate_limit_bench.sh on the virtual clock: `cases` cases of one generation (through
// `generation`) then one judge call (through `judge`), 64 at a time, against a provider taking
// 100 a second (the ideal: 2 x cases / 100 seconds; PerSecondProvider unless another is given).
// An answer takes 100 ms, a 429 1 ms. Returns the seconds the eval took.
class SimulatedEval {
 public:
  explicit SimulatedEval(unsigned seed, ProviderTake provider = PerSecond(100), Travel travel = {})
      : random_(seed), provider_(std::move(provider)), travel_(travel) {}
  test_support::VirtualClock clock;

  double Run(Limiter& generation, Limiter& judge, int cases = 1000) {
    boost::asio::io_context io;
    cases_left_ = cases;
    const Clock::TimePoint start = clock.Now();
    for (int i = 0; i < 64; ++i) boost::asio::co_spawn(io, Case(generation, judge), boost::asio::detached);
    clock.Run(io);
    return std::chrono::duration<double>(clock.Now() - start).count();
  }

 private:
  boost::asio::awaitable<void> Case(Limiter& generation, Limiter& judge) {
    while (cases_left_ > 0) {
      --cases_left_;
      co_await Request(generation);
      co_await Request(judge);
    }
  }
  boost::asio::awaitable<void> Request(Limiter& limiter) {
    for (;;) {
      Limiter::Admission admission = co_await limiter.Acquire(kFarFuture, 0);
      co_await clock.SleepUntil(clock.Now() + std::chrono::microseconds(Uniform(200, travel_.most_us)));
      const bool taken = provider_(clock.Now());
      co_await clock.Sleep(milliseconds(taken ? 100 : 1));
      limiter.Report(admission.ticket, !taken, 0, taken ? milliseconds(0) : milliseconds(1000));
      if (taken) co_return;
      co_await clock.Sleep(milliseconds(1000 + Uniform(0, 250)));
    }
  }
  int Uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(random_); }

  std::mt19937 random_;
  ProviderTake provider_;
  Travel travel_;
  int cases_left_ = 0;
};

// The eval's seconds over three seeds, sorted, the generation and the judge calls through one
// limiter configured at `per_minute` (none: nullopt). Two provider entries on one account share it
// (ProviderSet), capped by the smallest rate either configures.
std::vector<double> SimulatedEvalSeconds(
    std::optional<double> per_minute, const std::function<ProviderTake()>& provider = [] { return PerSecond(100); },
    Travel travel = {}) {
  std::vector<double> seconds;
  for (unsigned seed = 1; seed <= 3; ++seed) {
    SimulatedEval eval(seed, provider(), travel);
    RequestLimiter account(RateLimit{per_minute, std::nullopt}, eval.clock);
    seconds.push_back(eval.Run(account, account));
  }
  std::sort(seconds.begin(), seconds.end());
  return seconds;
}

// design.md §9.6: a configured limit is a ceiling, never a reason to be slower than none. Configured
// at 2x and 4x the provider's real limit (summed over the entries that share it: two entries at
// 1x and 2x each, one at 2x and 4x), the eval takes at most 1.1x the ideal 20 s (the median of
// three seeds; each 1.15x at most) and no longer than with nothing configured. It took 39 s at 2x
// over two entries (then one limiter each), 61 s at 4x, and 65 s at 4x on one: after a cut from
// the ceiling, the provider went on refusing for the rest of its second, those 429s cut again to a
// quarter, and the search then settled under a rate refused only for that (kCutGrace).
TEST(RequestLimiterTest, ALimitConfiguredAboveTheProvidersConvergesAsFastAsNone) {
  const std::vector<double> none = SimulatedEvalSeconds(std::nullopt);
  for (bool two_entries : {true, false}) {
    for (double factor : {2.0, 4.0}) {
      SCOPED_TRACE(std::to_string(factor) + "x over " + (two_entries ? "two entries" : "one entry"));
      const double each = 6000 * factor / (two_entries ? 2 : 1);
      const std::vector<double> seconds = SimulatedEvalSeconds(each);
      std::printf("%.0fx over %s: %.1f %.1f %.1f s (none: %.1f %.1f %.1f s)\n", factor,
                  two_entries ? "two entries" : "one entry", seconds[0], seconds[1], seconds[2], none[0], none[1],
                  none[2]);
      EXPECT_LE(seconds[1], 22.0);
      EXPECT_LE(seconds[2], 23.0);
      EXPECT_LE(seconds[1], none[1] * 1.05) << "no limit: " << none[1] << " s";
    }
  }
}

// Issue 39: nginx at 100 a second with `burst=20 nodelay` (bench/rate_limit_bench.sh's standing
// BURST=20 case). A rate past the limit runs clean on the burst's credit for a while (20 / (R - 100)
// seconds), then a share of it is refused: the sample's estimate holds. Unconfigured and configured
// at 2x, the eval takes at most 1.05x the ideal 20 s (the median of three seeds; modelled from
// request_limiter.cpp in Python: 20.3-20.8 s).
TEST(RequestLimiterTest, ABurstTheProviderTakesAtOnceIsLearnedAsItsLimit) {
  for (std::optional<double> per_minute : {std::optional<double>(), std::optional<double>(12000)}) {
    SCOPED_TRACE(per_minute ? "configured at 2x" : "nothing configured");
    const std::vector<double> seconds = SimulatedEvalSeconds(per_minute, [] { return Nginx(100, 20); });
    std::printf("nginx burst 20, %s: %.1f %.1f %.1f s\n", per_minute ? "2x" : "none", seconds[0], seconds[1],
                seconds[2]);
    EXPECT_LE(seconds[1], 21.0);
  }
}

// bench/rate_limit_bench.sh's standing BURST=0 case: nginx at 100 a second without a burst refuses
// any request within 10 ms of the last it took, so 63 of a first burst of 64 are refused. With
// what the bench measures of the way there (a request reaches nginx 0.2-0.4 ms after its slot;
// every 429 waited out: its second plus up to a quarter, design.md §12.0), the eval takes at most
// 1.09x the ideal 20 s unconfigured and 1.05x configured at 2x (the median of three seeds). The
// first burst's refused callers are away for the whole first second, a twentieth of the run, before
// anything is learned; the rest is the pace they come back to. (With a paced 429 retried at a
// random point within its second, as stage four did, it was 20.75 s unconfigured: it came back
// before the server said. Earlier, 21.1 s when a refused doubling of the first probe went back to
// the rate below it for half a second, and a few more 429s at a rate that had run clean cut it a
// fifth.)
TEST(RequestLimiterTest, AProviderSpacingRequestsStrictlyIsLearnedNearItsLimit) {
  for (std::optional<double> per_minute : {std::optional<double>(), std::optional<double>(12000)}) {
    SCOPED_TRACE(per_minute ? "configured at 2x" : "nothing configured");
    const std::vector<double> seconds = SimulatedEvalSeconds(
        per_minute, [] { return Nginx(100, 0); }, Travel{.most_us = 400});
    std::printf("nginx burst 0, %s: %.2f %.2f %.2f s\n", per_minute ? "2x" : "none", seconds[0], seconds[1],
                seconds[2]);
    EXPECT_LE(seconds[1], per_minute ? 21.0 : 21.8);
  }
}

// Issue 39, a reproduction (disabled until the limiter learns it): a provider taking 100 in each
// second of the clock (PerSecondProvider) takes a whole second's worth at once, then refuses
// everything until the second ends. Unconfigured, a sample of that wall reads "took none of 20": a
// cut to a quarter and probing, which doubles back through 128 a second (it "ran clean" for half a
// second on the window's credit), into the next wall: a loop at about 80 a second (modelled: 25.3 s,
// 1.26x; ALimitConfiguredAboveTheProvidersConvergesAsFastAsNone prints it as "none"). Bound: what
// a configured limit is held to there, 1.1x (with the wall rule proposed for issue 39, modelled: 21.1 s).
TEST(RequestLimiterTest, DISABLED_AnUnconfiguredLimiterSettlesAtAFixedWindowsLimit) {
  const std::vector<double> seconds = SimulatedEvalSeconds(std::nullopt);
  EXPECT_LE(seconds[1], 22.0) << seconds[0] << " " << seconds[1] << " " << seconds[2] << " s";
}

// Answers from a script; records when each request arrived.
class ScriptedProvider : public providers::Provider {
 public:
  std::deque<std::expected<providers::ChatResponse, providers::ProviderError>> script;
  int requests = 0;
  boost::asio::awaitable<providers::ChatResult> Chat(const providers::ChatRequest&) override {
    ++requests;
    auto next = script.front();
    if (script.size() > 1) script.pop_front();
    co_return next;
  }
};

TEST(LimitedProviderTest, A429SlowsTheNextRequestsAndATooLateSlotIsOverloaded) {
  FakeClock clock;
  auto inner = std::make_shared<ScriptedProvider>();
  providers::ProviderError refused;
  refused.http_status = 429;
  refused.retryable = true;
  inner->script = {providers::ChatResponse{}, std::unexpected(refused), providers::ChatResponse{}};
  providers::LimitedProvider limited(inner, std::make_unique<RequestLimiter>(RateLimit{}, clock), clock);
  providers::ChatRequest request;
  request.timeout = std::chrono::minutes(1);
  ASSERT_TRUE(RunAwaitable(limited.Chat(request)));
  clock.Advance(milliseconds(500));
  auto refused_answer = RunAwaitable(limited.Chat(request));  // the 429
  ASSERT_FALSE(refused_answer);
  EXPECT_EQ(refused_answer.error().http_status, 429);  // the refusal as the provider gave it
  ASSERT_TRUE(limited.limiter().rate_per_minute().has_value());
  auto first_after = RunAwaitable(limited.Chat(request));
  auto second_after = RunAwaitable(limited.Chat(request));
  ASSERT_TRUE(first_after && second_after);
  // Paced at 1,200 a minute (the two sent in the second before are no pace: kMinSample a
  // second at least): 50 ms after the refused one, and the next 50 ms after that. Each says
  // how long it waited.
  EXPECT_EQ(first_after->queued_ms, 50);
  EXPECT_EQ(second_after->queued_ms, 50);
  request.timeout = milliseconds(1);
  auto late = RunAwaitable(limited.Chat(request));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().kind, providers::ProviderError::Kind::kOverloaded);
  EXPECT_FALSE(late.error().IsRateLimited());  // not sent: no 429 for the pace to learn from
  ASSERT_TRUE(late.error().retry_after.has_value());
  EXPECT_GT(late.error().retry_after->count(), 0);
  EXPECT_EQ(late.error().message, "the provider's rate limit (" +
                                      std::to_string(std::llround(*limited.limiter().rate_per_minute())) +
                                      " requests a minute) leaves no slot before the deadline; the next is free in " +
                                      std::to_string(late.error().retry_after->count()) + " ms");
  EXPECT_EQ(inner->requests, 4);
}

TEST(LimitedProviderTest, ASlotInTheLastTenthOfTheRequestsTimeIsTooLateAndSaysSoAtOnce) {
  FakeClock clock;
  auto inner = std::make_shared<ScriptedProvider>();
  inner->script = {providers::ChatResponse{}};
  // 600 a minute: one request each 100 ms.
  providers::LimitedProvider limited(inner, std::make_unique<RequestLimiter>(RateLimit{600, {}}, clock), clock);
  providers::ChatRequest request;
  request.timeout = std::chrono::minutes(1);
  ASSERT_TRUE(RunAwaitable(limited.Chat(request)));
  // The next slot is 100 ms away: inside a 105 ms request's last tenth (from 94.5 ms), so not taken.
  request.timeout = milliseconds(105);
  auto late = RunAwaitable(limited.Chat(request));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().kind, providers::ProviderError::Kind::kOverloaded);
  EXPECT_EQ(late.error().retry_after, milliseconds(100));
  EXPECT_TRUE(clock.sleeps.empty());  // nothing was waited for
  // With 120 ms, 100 ms is before its last tenth (from 108 ms): it waits and goes.
  request.timeout = milliseconds(120);
  auto went = RunAwaitable(limited.Chat(request));
  ASSERT_TRUE(went);
  EXPECT_EQ(went->queued_ms, 100);
  EXPECT_EQ(inner->requests, 2);
}

}  // namespace
}  // namespace skillrunner::state
