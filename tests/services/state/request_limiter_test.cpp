// The learned pace of one provider (DESIGN 9.6), on a fake clock.
#include "services/state/request_limiter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>

#include "services/providers/limited_provider.h"
#include "tests/support/fake_clock.h"
#include "tests/support/run_awaitable.h"

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

TEST(RequestLimiterTest, AFirstBurstHalvesThenTheShareTheProviderTookSetsTheRateAndQuietSecondsWinItBack) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  std::vector<Limiter::Ticket> burst;
  for (int i = 0; i < 100; ++i) burst.push_back(RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket);
  EXPECT_TRUE(clock.sleeps.empty());  // unlimited until the first 429
  clock.Advance(milliseconds(10));
  limiter.Report(burst[0], true, 0);
  // 100 sent in (under) a second and nothing to sample: half of 6,000 a minute.
  EXPECT_EQ(limiter.rate_per_minute(), 3000);
  limiter.Report(burst[1], true, 0);  // sent before the rate changed: not its sample
  EXPECT_EQ(limiter.rate_per_minute(), 3000);
  // 25 at the new pace (one each 20 ms); the provider refuses 6 of them.
  Limiter::Ticket last;
  for (int i = 0; i < 25; ++i) {
    last = RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket;
    if (i < 5) limiter.Report(last, true, 0);  // fewer than 20 sent at this rate: counted, no cut yet
  }
  EXPECT_EQ(limiter.rate_per_minute(), 3000);
  limiter.Report(last, true, 0);
  // It took 19 of the 25 sent at 3,000 a minute: its limit is about 2,280, and 90% of
  // that would be 2,052; but one sample cuts a fifth at most: 2,400.
  ASSERT_TRUE(limiter.rate_per_minute().has_value());
  EXPECT_NEAR(*limiter.rate_per_minute(), 2400, 1e-9);
  // Quiet seconds go halfway back towards the refused 3,000, but no further than 110% of
  // the estimate (2,640): 2,520; near it, they add 5% of the estimate (2,640); past twice
  // the estimate: unlimited.
  clock.Advance(std::chrono::seconds(2));
  ASSERT_EQ(Take(limiter), Outcome::kGo);
  EXPECT_NEAR(*limiter.rate_per_minute(), 2640, 1e-9);
  clock.Advance(std::chrono::seconds(60));
  ASSERT_EQ(Take(limiter), Outcome::kGo);
  EXPECT_FALSE(limiter.rate_per_minute().has_value());
}

TEST(RequestLimiterTest, AStray429NearTheLimitTakesOnlyTheShareItRefused) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{600, std::nullopt}, clock);
  Limiter::Ticket last;
  for (int i = 0; i < 30; ++i) last = RunAwaitable(limiter.Acquire(kFarFuture, 0)).ticket;
  limiter.Report(last, true, 0);  // 1 of 30 refused: jitter at the limit, not a rate above it
  EXPECT_NEAR(*limiter.rate_per_minute(), 600.0 * 29 / 30, 1e-9);
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
  clock.Advance(std::chrono::seconds(1));
  ASSERT_EQ(Take(limiter), Outcome::kGo);
  EXPECT_EQ(limiter.rate_per_minute(), 3000);
  clock.Advance(std::chrono::seconds(5));
  ASSERT_EQ(Take(limiter), Outcome::kGo);
  EXPECT_EQ(limiter.rate_per_minute(), 6000);  // the ceiling
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

// Answers from a script; records when each request arrived.
class ScriptedProvider : public providers::Provider {
 public:
  std::deque<std::expected<providers::ChatResponse, providers::ProviderError>> script;
  int requests = 0;
  boost::asio::awaitable<std::expected<providers::ChatResponse, providers::ProviderError>> Chat(
      const providers::ChatRequest&) override {
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
  ASSERT_FALSE(RunAwaitable(limited.Chat(request)));  // the 429
  ASSERT_TRUE(limited.limiter().rate_per_minute().has_value());
  auto first_after = RunAwaitable(limited.Chat(request));
  auto second_after = RunAwaitable(limited.Chat(request));
  ASSERT_TRUE(first_after && second_after);
  // Paced (one a second after the refused one): each waited for its slot, and says so.
  ASSERT_EQ(clock.DelaysMs().size(), 2u);
  EXPECT_EQ(first_after->queued_ms, 1000);
  EXPECT_EQ(second_after->queued_ms, clock.DelaysMs()[1]);
  EXPECT_GT(second_after->queued_ms, 0);
  request.timeout = milliseconds(1);
  auto late = RunAwaitable(limited.Chat(request));
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().kind, providers::ProviderError::Kind::kOverloaded);
  ASSERT_TRUE(late.error().retry_after.has_value());
  EXPECT_GT(late.error().retry_after->count(), 0);
  EXPECT_EQ(late.error().message, "the provider's rate limit (" +
                                      std::to_string(std::llround(*limited.limiter().rate_per_minute())) +
                                      " requests a minute) leaves no slot before the deadline; the next is free in " +
                                      std::to_string(late.error().retry_after->count()) + " ms");
  EXPECT_EQ(inner->requests, 4);
}

}  // namespace
}  // namespace skillrunner::state
