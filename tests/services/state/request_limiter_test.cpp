// The learned pace of one provider (DESIGN 9.6), on a fake clock.
#include "services/state/request_limiter.h"

#include <gtest/gtest.h>

#include <deque>

#include "services/providers/limited_provider.h"
#include "tests/support/fake_clock.h"
#include "tests/support/run_awaitable.h"

namespace skillrunner::state {
namespace {
using std::chrono::milliseconds;
using test_support::FakeClock;
using test_support::RunAwaitable;
using Admission = RequestLimiter::Admission;

constexpr Clock::TimePoint kFarFuture = Clock::TimePoint::max();

TEST(RequestLimiterTest, UnconfiguredIsUnlimitedUntilA429) {
  FakeClock clock;
  RequestLimiter limiter(std::nullopt, clock);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(RunAwaitable(limiter.Acquire(kFarFuture)), Admission::kGo);
  EXPECT_TRUE(clock.sleeps.empty());
  EXPECT_FALSE(limiter.rate_per_minute().has_value());
}

TEST(RequestLimiterTest, AConfiguredRatePacesCallersInArrivalOrder) {
  FakeClock clock;
  RequestLimiter limiter(120.0, clock);  // one every 500 ms
  for (int i = 0; i < 4; ++i) ASSERT_EQ(RunAwaitable(limiter.Acquire(kFarFuture)), Admission::kGo);
  EXPECT_EQ(clock.DelaysMs(), (std::vector<std::int64_t>{500, 500, 500}));
}

TEST(RequestLimiterTest, A429HalvesTheObservedRateAndQuietSecondsWinItBack) {
  FakeClock clock;
  RequestLimiter limiter(std::nullopt, clock);
  // 600 a minute for 5 seconds, then a 429.
  Clock::TimePoint admitted{};
  for (int i = 0; i < 50; ++i) {
    admitted = clock.Now();
    ASSERT_EQ(RunAwaitable(limiter.Acquire(kFarFuture)), Admission::kGo);
    clock.Advance(milliseconds(100));
  }
  limiter.Report(admitted, true);
  ASSERT_TRUE(limiter.rate_per_minute().has_value());
  EXPECT_NEAR(*limiter.rate_per_minute(), 300, 10);  // half of what was observed
  // Requests admitted before the cut say nothing new.
  limiter.Report(admitted, true);
  EXPECT_NEAR(*limiter.rate_per_minute(), 300, 10);
  // The new pace: one every 200 ms.
  clock.sleeps.clear();
  for (int i = 0; i < 3; ++i) ASSERT_EQ(RunAwaitable(limiter.Acquire(kFarFuture)), Admission::kGo);
  EXPECT_EQ(clock.DelaysMs().size(), 2u);
  EXPECT_NEAR(static_cast<double>(clock.DelaysMs()[1]), 200, 2);
  // Quiet seconds add back 5% of what was observed each; past twice that: unlimited.
  clock.Advance(std::chrono::seconds(2));
  ASSERT_EQ(RunAwaitable(limiter.Acquire(kFarFuture)), Admission::kGo);
  EXPECT_NEAR(*limiter.rate_per_minute(), 360, 12);
  clock.Advance(std::chrono::seconds(60));
  ASSERT_EQ(RunAwaitable(limiter.Acquire(kFarFuture)), Admission::kGo);
  EXPECT_FALSE(limiter.rate_per_minute().has_value());
}

TEST(RequestLimiterTest, ASlotPastTheDeadlineIsRefusedWithoutWaiting) {
  FakeClock clock;
  RequestLimiter limiter(60.0, clock);  // one a second
  ASSERT_EQ(RunAwaitable(limiter.Acquire(kFarFuture)), Admission::kGo);
  EXPECT_EQ(RunAwaitable(limiter.Acquire(clock.Now() + milliseconds(500))), Admission::kTooLate);
  EXPECT_TRUE(clock.sleeps.empty());
  clock.cancel_at = 0;
  EXPECT_EQ(RunAwaitable(limiter.Acquire(kFarFuture)), Admission::kCancelled);
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

TEST(LimitedProviderTest, A429SlowsTheNextRequestsAndATooLateSlotIsATimeout) {
  FakeClock clock;
  auto inner = std::make_shared<ScriptedProvider>();
  providers::ProviderError refused;
  refused.http_status = 429;
  refused.retryable = true;
  inner->script = {providers::ChatResponse{}, std::unexpected(refused), providers::ChatResponse{}};
  providers::LimitedProvider limited(inner, std::make_unique<RequestLimiter>(std::nullopt, clock), clock);
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
  EXPECT_EQ(late.error().kind, providers::ProviderError::Kind::kTimeout);
  EXPECT_TRUE(late.error().message.starts_with("the provider's rate limit ("));
  EXPECT_EQ(inner->requests, 4);
}

}  // namespace
}  // namespace skillrunner::state
