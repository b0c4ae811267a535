// Rollout assignment (design.md §11.2, §11.6): the hash is SHA-256's first 8
// bytes over "id\0version\0key"; the share of keys sent to the candidate is
// the traffic; the key is routing_key, else the sticky value, else the session.
#include "runner/rollout/assignment.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "services/common/digest.h"

namespace skillrunner::rollout {
namespace {

TEST(AssignmentTest, TheHashIsTheFirstEightBytesOfSha256OverIdVersionAndKey) {
  const std::string text = std::string("triage_ticket") + '\0' + "2" + '\0' + "customer-42";
  const std::string hex = Sha256Hex(text);
  EXPECT_EQ(AssignmentHash("triage_ticket", 2, "customer-42"), std::stoull(hex.substr(0, 16), nullptr, 16));
  EXPECT_NE(AssignmentHash("triage_ticket", 3, "customer-42"), AssignmentHash("triage_ticket", 2, "customer-42"));
}

TEST(AssignmentTest, TenThousandKeysGiveTheCandidateItsTrafficAndAKeyKeepsItsArm) {
  int to_candidate = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::uint64_t hash = AssignmentHash("s", 2, "key-" + std::to_string(i));
    const bool arm = ToCandidate(hash, 0.1);
    to_candidate += arm ? 1 : 0;
    EXPECT_EQ(ToCandidate(AssignmentHash("s", 2, "key-" + std::to_string(i)), 0.1), arm);
    // A key on the candidate stays there as the traffic steps up.
    if (arm) {
      EXPECT_TRUE(ToCandidate(hash, 0.25));
    }
  }
  EXPECT_NEAR(to_candidate, 1000, 90);  // 10% ± 3 standard deviations of a binomial(10000, 0.1)
  EXPECT_FALSE(ToCandidate(9999, 0.9999));
  EXPECT_TRUE(ToCandidate(9998, 0.9999));
  EXPECT_FALSE(ToCandidate(0, 0.0));
}

TEST(AssignmentTest, TheKeyIsTheRoutingKeyElseTheStickyValueElseTheSession) {
  const auto input = boost::json::parse(R"({"customer": {"id": "c-7", "tier": 2}, "n": 1.5})");
  EXPECT_EQ(AssignmentKey("rk", input, "/customer/id", "sess"), "rk");
  EXPECT_EQ(AssignmentKey("", input, "/customer/id", "sess"), "c-7");
  EXPECT_EQ(AssignmentKey("", input, "/customer", "sess"), R"({"id":"c-7","tier":2})");
  EXPECT_EQ(AssignmentKey("", input, "/missing", "sess"), "sess");
  EXPECT_EQ(AssignmentKey("", input, "", ""), "");
}

}  // namespace
}  // namespace skillrunner::rollout
