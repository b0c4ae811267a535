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

TEST(RequestLimiterTest, A429HalvesTheObservedRateAndQuietSecondsWinItBack) {
  FakeClock clock;
  RequestLimiter limiter(RateLimit{}, clock);
  // 600 a minute for 5 seconds, then a 429.
  Limiter::Ticket admitted;
  for (int i = 0; i < 50; ++i) {
    auto admission = RunAwaitable(limiter.Acquire(kFarFuture, 0));
    ASSERT_EQ(admission.outcome, Outcome::kGo);
    admitted = admission.ticket;
    clock.Advance(milliseconds(100));
  }
  limiter.Report(admitted, true, 0);
  ASSERT_TRUE(limiter.rate_per_minute().has_value());
  EXPECT_NEAR(*limiter.rate_per_minute(), 300, 10);  // half of what was observed
  // Requests admitted before the cut say nothing new.
  limiter.Report(admitted, true, 0);
  EXPECT_NEAR(*limiter.rate_per_minute(), 300, 10);
  // The new pace: one every 200 ms.
  clock.sleeps.clear();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(Take(limiter), Outcome::kGo);
  EXPECT_EQ(clock.DelaysMs().size(), 2u);
  EXPECT_NEAR(static_cast<double>(clock.DelaysMs()[1]), 200, 2);
  // Quiet seconds add back 5% of what was observed each; past twice that: unlimited.
  clock.Advance(std::chrono::seconds(2));
  ASSERT_EQ(Take(limiter), Outcome::kGo);
  EXPECT_NEAR(*limiter.rate_per_minute(), 360, 12);
  clock.Advance(std::chrono::seconds(60));
  ASSERT_EQ(Take(limiter), Outcome::kGo);
  EXPECT_FALSE(limiter.rate_per_minute().has_value());
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
  ASSERT_EQ(clock.DelaysMs().size(), 1u);  // paced: the second waited for its slot, and says so
  EXPECT_EQ(first_after->queued_ms, 0);
  EXPECT_EQ(second_after->queued_ms, clock.DelaysMs()[0]);
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
