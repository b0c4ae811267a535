// The always-valid sequential decisions of a rollout (design.md §11.2): the
// confidence sequence's formula, the decision rules, and seeded simulations of
// rollouts watched after every call: an A/A candidate is rolled back at most
// alpha + 1 point of the time, a clearly worse one at least 95% of the time,
// where a fixed-n test checked as often rolls back healthy candidates far more.
#include "runner/stats/sequential.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <vector>

namespace skillrunner::stats {
namespace {

TEST(SequentialTest, TheSequenceIsTheMixtureSprtIntervalOfTheDifference) {
  // 180/200 against 150/200 at alpha 0.05, tau 0.05, by hand:
  // p_s = 180.5/201, p_c = 150.5/201, V = p_s(1-p_s)/200 + p_c(1-p_c)/200
  const double ps = 180.5 / 201, pc = 150.5 / 201;
  const double v = ps * (1 - ps) / 200 + pc * (1 - pc) / 200;
  const double t2 = 0.05 * 0.05;
  const double half = std::sqrt(v * (v + t2) / t2 * (2 * std::log(20.0) + std::log((v + t2) / v)));
  const ConfidenceSequence cs = DifferenceSequence({200, 180}, {200, 150}, 0.05, 0.05);
  EXPECT_DOUBLE_EQ(cs.estimate, -0.15);
  EXPECT_NEAR(cs.lower, -0.15 - half, 1e-12);
  EXPECT_NEAR(cs.upper, -0.15 + half, 1e-12);
  EXPECT_NEAR(half, 0.1237, 0.0001);
  // Wider than the fixed-n 95% interval (1.96 sqrt(V) = 0.0794): the price of watching.
  EXPECT_GT(half, 1.96 * std::sqrt(v));
  // An empty arm says nothing.
  const ConfidenceSequence none = DifferenceSequence({0, 0}, {10, 10}, 0.05, 0.05);
  EXPECT_EQ(none.lower, -1.0);
  EXPECT_EQ(none.upper, 1.0);
}

TEST(SequentialTest, RollbackNeedsThirtyPerArmAndEachMeasureIsTestedAtAlphaOverM) {
  const std::vector<MeasureCounts> few{{"ok", {29, 29}, {29, 0}}};
  EXPECT_EQ(Decide(few, {}).verdict, Verdict::kWait);
  const std::vector<MeasureCounts> worse{{"ok", {300, 297}, {300, 298}}, {"review_pass", {100, 95}, {100, 55}}};
  const Decision decision = Decide(worse, {});
  EXPECT_EQ(decision.verdict, Verdict::kRollback);
  EXPECT_DOUBLE_EQ(decision.alpha_each, 0.025);
  ASSERT_EQ(decision.measures.size(), 2u);
  EXPECT_FALSE(decision.measures[0].worse);
  EXPECT_TRUE(decision.measures[1].worse);
  const ConfidenceSequence cs = DifferenceSequence({100, 95}, {100, 55}, 0.025, 0.05);
  EXPECT_DOUBLE_EQ(decision.measures[1].sequence.upper, cs.upper);
  char expected[160];
  std::snprintf(expected, sizeof expected, "review_pass: the candidate is worse (-0.400 in [%+.3f, %+.3f])", cs.lower,
                cs.upper);
  EXPECT_EQ(decision.reason, expected);
}

TEST(SequentialTest, AStepUpNeedsMinSamplesOnEveryMeasureAndALowerBoundAboveMinusMargin) {
  DecideOptions options;
  options.min_samples = 200;
  options.margin = 0.05;
  const std::vector<MeasureCounts> short_of_samples{{"ok", {199, 199}, {199, 199}},
                                                    {"review_pass", {400, 396}, {400, 397}}};
  EXPECT_EQ(Decide(short_of_samples, options).verdict, Verdict::kWait);
  const std::vector<MeasureCounts> enough{{"ok", {2000, 1990}, {2000, 1992}},
                                          {"review_pass", {2000, 1980}, {2000, 1981}}};
  const Decision up = Decide(enough, options);
  EXPECT_EQ(up.verdict, Verdict::kStepUp);
  EXPECT_TRUE(up.measures[0].non_inferior && up.measures[1].non_inferior);
  EXPECT_EQ(up.reason.rfind("ok: not worse (+0.001 in [", 0), 0u) << up.reason;
  options.margin = 0.001;  // the same counts cannot show a drop under 0.001
  EXPECT_EQ(Decide(enough, options).verdict, Verdict::kWait);
}

// One rollout at traffic 0.5 watched after every call: each call goes to either arm with probability
// 1/2 and succeeds at that arm's rate. The per-arm calls on the fuller arm at the first rollback, or
// nullopt when both arms reach `cap` without one. `fixed_n`: the naive rule instead, a one-sided
// two-proportion z-test at `alpha` taken after every call as if it were the only look.
std::optional<std::int64_t> Watch(std::mt19937_64& random, double stable_rate, double candidate_rate, std::int64_t cap,
                                  bool fixed_n = false) {
  std::vector<MeasureCounts> measure{{"ok", {}, {}}};
  ArmCounts& stable = measure[0].stable;
  ArmCounts& candidate = measure[0].candidate;
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const double z = 1.6448536269514722;  // the 0.95 quantile of the standard normal
  while (stable.n < cap || candidate.n < cap) {
    const bool to_candidate = uniform(random) < 0.5;
    ArmCounts& arm = to_candidate ? candidate : stable;
    if (arm.n >= cap) continue;
    ++arm.n;
    arm.successes += uniform(random) < (to_candidate ? candidate_rate : stable_rate) ? 1 : 0;
    if (std::min(stable.n, candidate.n) < 30) continue;
    if (fixed_n) {
      const double p = static_cast<double>(stable.successes + candidate.successes) / (stable.n + candidate.n);
      const double se = std::sqrt(p * (1 - p) * (1.0 / stable.n + 1.0 / candidate.n));
      if (se > 0 && (candidate.Rate() - stable.Rate()) / se < -z) return std::max(stable.n, candidate.n);
    } else if (DifferenceSequence(stable, candidate, 0.05, 0.05).upper < 0) {
      return std::max(stable.n, candidate.n);
    }
  }
  return std::nullopt;
}

TEST(SequentialTest, TwoThousandAaRolloutsWatchedAfterEveryCallRollBackAtMostAlphaPlusOnePoint) {
  std::mt19937_64 random(20261129);
  int rolled_back = 0;
  for (int i = 0; i < 2000; ++i) rolled_back += Watch(random, 0.9, 0.9, 5000).has_value() ? 1 : 0;
  EXPECT_LE(rolled_back, 120) << rolled_back << " of 2000 (alpha 0.05 + 1 point = 120)";
  RecordProperty("aa_false_rollbacks_of_2000", rolled_back);
}

TEST(SequentialTest, ACandidateAtEightyPercentAgainstNinetyIsRolledBackInAtLeast95Percent) {
  std::mt19937_64 random(7);
  int rolled_back = 0;
  std::vector<std::int64_t> samples;
  for (int i = 0; i < 1000; ++i) {
    if (auto at = Watch(random, 0.9, 0.8, 5000)) {
      ++rolled_back;
      samples.push_back(*at);
    }
  }
  EXPECT_GE(rolled_back, 950);
  std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
  RecordProperty("median_calls_per_arm_to_rollback", static_cast<int>(samples[samples.size() / 2]));
}

// Why the sequence: the same A/A rollouts under a fixed-n test checked after every call roll back far
// more often than its alpha (the docs give the figure).
TEST(SequentialTest, AFixedNTestWatchedAfterEveryCallRollsBackHealthyCandidatesFarMoreOften) {
  std::mt19937_64 random(20261129);
  int rolled_back = 0;
  for (int i = 0; i < 500; ++i) rolled_back += Watch(random, 0.9, 0.9, 5000, true).has_value() ? 1 : 0;
  EXPECT_GE(rolled_back, 100) << rolled_back << " of 500";
  RecordProperty("fixed_n_false_rollbacks_of_500", rolled_back);
}

}  // namespace
}  // namespace skillrunner::stats
