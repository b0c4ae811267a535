#include "services/generation/session_memory.h"

#include <gtest/gtest.h>

#include "tests/support/run_awaitable.h"

namespace skillrunner::generation {
namespace {
using Clock = SessionMemory::Clock;
using test_support::RunAwaitable;

TEST(SessionMemoryTest, KeepsTheLastThreeErrorsPerSkillAndSession) {
  SessionMemory memory;
  const Clock::time_point now{};
  memory.Remember("s1", "triage", {{"/a", "one"}, {"/b", "two"}}, now);
  memory.Remember("s1", "triage", {{"", "three"}, {"/d", "four"}}, now);
  memory.Remember("s1", "other", {{"/x", "elsewhere"}}, now);
  EXPECT_EQ(RunAwaitable(memory.Recall("s1", "triage", now)),
            (std::vector<std::string>{"/b: two", "(root): three", "/d: four"}));
  EXPECT_EQ(RunAwaitable(memory.Recall("s2", "triage", now)), std::vector<std::string>{});
}

TEST(SessionMemoryTest, LeastRecentlyUsedSessionsAreEvicted) {
  SessionMemory memory(/*max_sessions=*/2, std::chrono::hours(1));
  auto now = Clock::now();
  memory.Remember("a", "k", {{"/x", "1"}}, now);
  memory.Remember("b", "k", {{"/x", "2"}}, now);
  memory.Remember("a", "k", {{"/x", "3"}}, now);  // a is now the most recent
  memory.Remember("c", "k", {{"/x", "4"}}, now);  // evicts b
  EXPECT_EQ(memory.sessions(), 2u);
  EXPECT_TRUE(RunAwaitable(memory.Recall("b", "k", now)).empty());
  EXPECT_EQ(RunAwaitable(memory.Recall("a", "k", now)).size(), 2u);
}

TEST(SessionMemoryTest, SessionsExpireAfterTheirTtl) {
  SessionMemory memory(10, std::chrono::seconds(60));
  auto now = Clock::now();
  memory.Remember("a", "k", {{"/x", "1"}}, now);
  EXPECT_EQ(RunAwaitable(memory.Recall("a", "k", now + std::chrono::seconds(59))).size(), 1u);
  EXPECT_TRUE(RunAwaitable(memory.Recall("a", "k", now + std::chrono::seconds(200))).empty());
  EXPECT_EQ(memory.sessions(), 0u);
}

}  // namespace
}  // namespace skillrunner::generation
