// Tenants' quotas in one process (design.md §9.6; the shared ones are in
// tests/runner/shared_state_test.cpp), on a fake clock.
#include "services/state/tenant_quota.h"

#include <gtest/gtest.h>

#include "tests/support/fake_clock.h"
#include "tests/support/run_awaitable.h"

namespace skillrunner::state {
namespace {
using std::chrono::milliseconds;
using test_support::FakeClock;
using test_support::RunAwaitable;

TEST(TenantQuotasTest, RequestsPerMinuteAllowASecondsWorthThenSayWhenToComeBack) {
  FakeClock clock;
  TenantQuotas quotas({{"team-a", Quota{120, std::nullopt}}}, nullptr, clock);  // 2 a second
  auto lease = milliseconds(60'000);
  EXPECT_TRUE(RunAwaitable(quotas.Admit("team-a", lease)).admitted);
  EXPECT_TRUE(RunAwaitable(quotas.Admit("team-a", lease)).admitted);
  auto refused = RunAwaitable(quotas.Admit("team-a", lease));
  EXPECT_FALSE(refused.admitted);
  EXPECT_EQ(refused.reason, "requests_per_minute");
  EXPECT_EQ(refused.retry_after, milliseconds(500));
  clock.Advance(milliseconds(500));
  EXPECT_TRUE(RunAwaitable(quotas.Admit("team-a", lease)).admitted);
  // A tenant the config does not name has no quota.
  EXPECT_TRUE(RunAwaitable(quotas.Admit("team-z", lease)).admitted);
  auto usage = quotas.usage();
  EXPECT_EQ(usage.at("team-a").requests, 3u);
  EXPECT_EQ(usage.at("team-a").overloaded, 1u);
  EXPECT_EQ(usage.at("team-a").in_flight, 3);
  EXPECT_FALSE(usage.contains("team-z"));
}

TEST(TenantQuotasTest, MaxInFlightRefusesUntilASlotIsGivenBack) {
  FakeClock clock;
  TenantQuotas quotas({{"team-b", Quota{std::nullopt, 2}}}, nullptr, clock);
  auto lease = milliseconds(60'000);
  auto first = RunAwaitable(quotas.Admit("team-b", lease));
  auto second = RunAwaitable(quotas.Admit("team-b", lease));
  ASSERT_TRUE(first.admitted && second.admitted);
  auto refused = RunAwaitable(quotas.Admit("team-b", lease));
  EXPECT_FALSE(refused.admitted);
  EXPECT_EQ(refused.reason, "max_in_flight");
  EXPECT_EQ(refused.retry_after, milliseconds(200));
  quotas.Release("team-b", refused);  // a refusal holds nothing
  EXPECT_EQ(quotas.usage().at("team-b").in_flight, 2);
  quotas.Release("team-b", first);
  EXPECT_TRUE(RunAwaitable(quotas.Admit("team-b", lease)).admitted);
  EXPECT_EQ(quotas.usage().at("team-b").in_flight, 2);
}

}  // namespace
}  // namespace skillrunner::state
