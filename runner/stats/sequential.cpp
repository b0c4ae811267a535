#include "runner/stats/sequential.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace skillrunner::stats {
namespace {

// The rate the variance uses: (x + 0.5) / (n + 1), never 0 or 1.
double SmoothedRate(const ArmCounts& arm) {
  return (static_cast<double>(arm.successes) + 0.5) / (static_cast<double>(arm.n) + 1.0);
}

double ArmVariance(const ArmCounts& arm) {
  const double p = SmoothedRate(arm);
  return p * (1.0 - p) / static_cast<double>(arm.n);
}

std::string Describe(const MeasureDecision& measure, const char* what) {
  char text[160];
  std::snprintf(text, sizeof text, "%s: %s (%+.3f in [%+.3f, %+.3f])", measure.name.c_str(), what,
                measure.sequence.estimate, measure.sequence.lower, measure.sequence.upper);
  return text;
}

}  // namespace

ConfidenceSequence DifferenceSequence(const ArmCounts& stable, const ArmCounts& candidate, double alpha, double tau) {
  ConfidenceSequence out{candidate.Rate() - stable.Rate(), -1.0, 1.0};
  if (stable.n <= 0 || candidate.n <= 0) return out;
  const double v = ArmVariance(stable) + ArmVariance(candidate);
  const double t2 = tau * tau;
  const double half = std::sqrt(v * (v + t2) / t2 * (2.0 * std::log(1.0 / alpha) + std::log((v + t2) / v)));
  out.lower = std::max(-1.0, out.estimate - half);
  out.upper = std::min(1.0, out.estimate + half);
  return out;
}

Decision Decide(std::span<const MeasureCounts> measures, const DecideOptions& options) {
  Decision decision;
  decision.alpha_each = options.alpha / static_cast<double>(std::max<std::size_t>(1, measures.size()));
  bool all_non_inferior = !measures.empty();
  for (const MeasureCounts& m : measures) {
    MeasureDecision d{m.name, DifferenceSequence(m.stable, m.candidate, decision.alpha_each, options.tau)};
    const std::int64_t fewest = std::min(m.stable.n, m.candidate.n);
    d.worse = fewest >= options.min_for_rollback && d.sequence.upper < 0;
    d.non_inferior = fewest >= options.min_samples && d.sequence.lower > -options.margin;
    all_non_inferior = all_non_inferior && d.non_inferior;
    if (d.worse && decision.verdict != Verdict::kRollback) {
      decision.verdict = Verdict::kRollback;
      if (options.explain) decision.reason = Describe(d, "the candidate is worse");
    }
    decision.measures.push_back(std::move(d));
  }
  if (decision.verdict != Verdict::kRollback && all_non_inferior) {
    decision.verdict = Verdict::kStepUp;
    std::string reason;
    for (const auto& d : decision.measures) {
      if (options.explain) reason += (reason.empty() ? "" : "; ") + Describe(d, "not worse");
    }
    decision.reason = reason;
  }
  return decision;
}

}  // namespace skillrunner::stats
