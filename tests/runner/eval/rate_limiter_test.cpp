// Token buckets with AIMD, on a fake clock: cases wait instead of failing.
#include "runner/eval/rate_limiter.h"

#include <gtest/gtest.h>

#include "tests/support/fake_clock.h"

#include "tests/support/run_awaitable.h"

namespace skillrunner::eval {
namespace {
using std::chrono::milliseconds;

using test_support::FakeClock;

RateLimiter::Permit Acquire(RateLimiter& limiter) { return test_support::RunAwaitable(limiter.Acquire()); }

TEST(RateLimiterTest, RequestsPerMinuteSpaceCasesOutInsteadOfFailingThem) {
  FakeClock clock;
  RateLimiter limiter(RateLimit{120, std::nullopt}, clock);  // 2 a second, bucket of 2
  Acquire(limiter);
  Acquire(limiter);
  EXPECT_TRUE(clock.sleeps.empty());  // the burst of one second's worth
  Acquire(limiter);
  Acquire(limiter);
  EXPECT_EQ(clock.sleeps, (std::vector<milliseconds>{milliseconds(500), milliseconds(500)}));
  EXPECT_EQ(limiter.waited(), milliseconds(1000));
}

TEST(RateLimiterTest, TokensAreChargedAfterTheCaseAndDebtMakesTheNextOneWait) {
  FakeClock clock;
  RateLimiter limiter(RateLimit{std::nullopt, 6000}, clock);  // 100 tokens a second, bucket of 100
  auto permit = Acquire(limiter);
  limiter.Report(permit, 300, false);  // 200 in debt
  Acquire(limiter);
  ASSERT_EQ(clock.sleeps.size(), 1u);
  EXPECT_EQ(clock.sleeps[0], milliseconds(2001));  // until the debt is paid, plus a millisecond
}

TEST(RateLimiterTest, A429HalvesTheRateOncePerBurstAndSuccessAddsItBack) {
  FakeClock clock;
  RateLimiter limiter(RateLimit{600, 60000}, clock);
  auto before_cut = Acquire(limiter);
  auto also_before_cut = Acquire(limiter);
  clock.Advance(milliseconds(10));
  limiter.Report(before_cut, 10, true);
  EXPECT_EQ(limiter.requests_per_minute(), 300);
  EXPECT_EQ(limiter.tokens_per_minute(), 30000);
  // A case that was already in flight saw the old rate: no second cut.
  limiter.Report(also_before_cut, 10, true);
  EXPECT_EQ(limiter.requests_per_minute(), 300);
  // A case granted after the cut that still meets a 429 cuts again.
  clock.Advance(milliseconds(10));
  auto after_cut = Acquire(limiter);
  clock.Advance(milliseconds(10));
  limiter.Report(after_cut, 10, true);
  EXPECT_EQ(limiter.requests_per_minute(), 150);
  // Additive increase: 1% of the limit (6 a minute) per case without a 429.
  for (int i = 0; i < 10; ++i) limiter.Report(Acquire(limiter), 10, false);
  EXPECT_NEAR(limiter.requests_per_minute(), 210, 1e-6);
  for (int i = 0; i < 200; ++i) limiter.Report(Acquire(limiter), 10, false);
  EXPECT_EQ(limiter.requests_per_minute(), 600);  // never above the limit
}

TEST(RateLimiterTest, AfterACutTheSlowerRateSpacesRequests) {
  FakeClock clock;
  RateLimiter limiter(RateLimit{60, std::nullopt}, clock);  // 1 a second
  auto permit = Acquire(limiter);
  limiter.Report(permit, 0, true);  // now 30 a minute: one per 2 s
  clock.sleeps.clear();
  Acquire(limiter);
  ASSERT_EQ(clock.sleeps.size(), 1u);
  EXPECT_EQ(clock.sleeps[0], milliseconds(2000));
}

TEST(RateLimiterTest, OnlyProvidersWithLimitsGetALimiter) {
  FakeClock clock;
  RateLimiters limiters({{"openai", RateLimit{60, std::nullopt}}, {"empty", RateLimit{}}}, clock);
  EXPECT_NE(limiters.For("openai"), nullptr);
  EXPECT_EQ(limiters.For("empty"), nullptr);
  EXPECT_EQ(limiters.For("anthropic"), nullptr);
}

}  // namespace
}  // namespace skillrunner::eval
