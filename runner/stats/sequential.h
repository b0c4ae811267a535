#pragma once

// Always-valid sequential comparison of two arms' success rates (a canary's
// stable and candidate versions, design.md §11.2): a confidence sequence for
// the difference of the rates that holds at every sample size at once, so a
// rollout may be checked after every call without its error rate growing.
//
// The method is the mixture sequential probability ratio test of Johari,
// Pekelis and Walsh, "Always Valid Inference: Continuous Monitoring of A/B
// Tests" (Operations Research, 2022), as Optimizely's stats engine runs it:
// with θ̂ the difference of the observed rates, V its variance and a normal
// mixture of scale τ over the true difference, the set of differences the
// test does not reject at level α is
//
//   θ̂ ± sqrt( V (V + τ²) / τ² · ( 2 ln(1/α) + ln((V + τ²) / V) ) ).
//
// V = p_c(1 - p_c)/n_c + p_s(1 - p_s)/n_s with each rate taken as
// (x + 0.5)/(n + 1), so that an arm with no failure yet still has a variance.

#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace skillrunner::stats {

// One arm's count of a binary measure: `successes` out of `n`.
struct ArmCounts {
  std::int64_t n = 0;
  std::int64_t successes = 0;
  double Rate() const { return n > 0 ? static_cast<double>(successes) / static_cast<double>(n) : 0.0; }
};

// The difference candidate - stable and the interval that holds at every n.
struct ConfidenceSequence {
  double estimate = 0;
  double lower = 0;
  double upper = 0;
};

// The confidence sequence at level `alpha` (0 < alpha < 1) with mixture scale
// `tau` (> 0). With an empty arm the interval is [-1, 1].
ConfidenceSequence DifferenceSequence(const ArmCounts& stable, const ArmCounts& candidate, double alpha, double tau);

// A measure of a rollout (`ok`, `review_pass`) with both arms' counts.
struct MeasureCounts {
  std::string name;
  ArmCounts stable;
  ArmCounts candidate;
};

struct DecideOptions {
  double alpha = 0.05;                 // shared by the measures: each is tested at alpha / m
  double tau = 0.05;                   // the mixture's scale
  std::int64_t min_samples = 200;      // per arm and measure before a step up
  double margin = 0.02;                // the largest drop a step up accepts
  std::int64_t min_for_rollback = 30;  // per arm before a rollback
  bool explain = true;                 // write Decision::reason (formatting it is most of a decision's cost)
};

enum class Verdict {
  kWait,      // not enough evidence either way yet
  kRollback,  // some measure's sequence lies wholly below 0: the candidate is worse
  kStepUp,    // every measure has min_samples per arm and a lower bound above -margin
};

struct MeasureDecision {
  std::string name;
  ConfidenceSequence sequence;
  bool worse = false;         // upper < 0 with min_for_rollback per arm
  bool non_inferior = false;  // lower > -margin with min_samples per arm
};

struct Decision {
  Verdict verdict = Verdict::kWait;
  double alpha_each = 0;  // alpha / m
  std::vector<MeasureDecision> measures;
  // Why, for logs and status: "review_pass: the candidate is worse (-0.352 in [-0.410, -0.294])".
  std::string reason;
};

// Decides on the rollout's measures (at least one).
Decision Decide(std::span<const MeasureCounts> measures, const DecideOptions& options);

}  // namespace skillrunner::stats
