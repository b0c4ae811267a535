#include <gtest/gtest.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "services/providers/limited_provider.h"
#include "services/providers/set/provider_set.h"
#include "services/state/request_limiter.h"
#include "tests/support/fake_clock.h"
#include "tests/support/run_awaitable.h"

namespace skillrunner::providers {
namespace {

using std::chrono::milliseconds;
using Outcome = state::Limiter::Outcome;

ProviderSettings Entry(const std::string &name, const std::string &base_url, const std::string &key) {
  return ProviderSettings{name, "openai", base_url, key, {}};
}

state::Limiter &LimiterOf(const ProviderSet &set, std::string_view name) {
  auto *limited = dynamic_cast<LimitedProvider *>(set.Find(name));
  if (limited == nullptr) throw std::runtime_error("not limited: " + std::string(name));
  return const_cast<state::Limiter &>(limited->limiter());
}

// Two entries on one account (same kind, base_url and key variable: a
// generation and a judge provider) draw from one pace; another key or another
// URL is another account.
TEST(ProviderSetLimiterTest, EntriesOnOneAccountShareOneLimiterAndOthersDoNot) {
  test_support::FakeClock clock;
  ProviderSettingsMap providers;
  for (auto entry :
       {Entry("gen", "http://127.0.0.1:9/v1", "KEY_A"), Entry("judge", "http://127.0.0.1:9/v1", "KEY_A"),
        Entry("other_key", "http://127.0.0.1:9/v1", "KEY_B"), Entry("other_url", "http://127.0.0.1:10/v1", "KEY_A")}) {
    providers.emplace(entry.name, entry);
  }
  std::map<std::string, state::RateLimit, std::less<>> limits{
      {"gen", {120, 9000}}, {"judge", {60, std::nullopt}}, {"other_key", {60, std::nullopt}}};
  std::vector<std::vector<std::string>> made;
  boost::asio::io_context io;
  auto set = ProviderSet::Create(
      providers, io.get_executor(), [](std::string_view) { return std::nullopt; }, clock,
      [&](const std::vector<std::string> &entries) {
        made.push_back(entries);
        return std::make_shared<state::RequestLimiter>(AccountLimit(limits, entries), clock);
      });
  ASSERT_TRUE(set) << set.error().message;
  std::sort(made.begin(), made.end());
  EXPECT_EQ(made, (std::vector<std::vector<std::string>>{{"gen", "judge"}, {"other_key"}, {"other_url"}}));
  // The smallest ceiling configured on the account, each of requests and
  // tokens.
  EXPECT_EQ(AccountLimit(limits, {"gen", "judge"}), (state::RateLimit{60, 9000}));
  EXPECT_EQ(AccountLimit(limits, {"other_url"}), (state::RateLimit{}));

  // 60 a minute through both: one request through gen, and judge's next slot is
  // a second later.
  state::Limiter &gen = LimiterOf(**set, "gen");
  state::Limiter &judge = LimiterOf(**set, "judge");
  EXPECT_EQ(&gen, &judge);
  EXPECT_EQ(test_support::RunAwaitable(gen.Acquire(clock.Now(), 0)).outcome, Outcome::kGo);
  auto late = test_support::RunAwaitable(judge.Acquire(clock.Now(), 0));
  EXPECT_EQ(late.outcome, Outcome::kTooLate);
  EXPECT_EQ(late.wait, milliseconds(1000));
  // Another key's pace is its own: its first slot is free now.
  state::Limiter &other = LimiterOf(**set, "other_key");
  EXPECT_NE(&other, &gen);
  EXPECT_EQ(test_support::RunAwaitable(other.Acquire(clock.Now(), 0)).outcome, Outcome::kGo);
  EXPECT_NE(&LimiterOf(**set, "other_url"), &gen);
}

}  // namespace
}  // namespace skillrunner::providers
