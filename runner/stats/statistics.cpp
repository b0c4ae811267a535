#include "runner/stats/statistics.h"

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <boost/math/distributions/normal.hpp>
#include <cmath>

namespace skillrunner::eval::stats {

double Z975() {
  static const double z = boost::math::quantile(boost::math::normal_distribution<double>(), 0.975);
  return z;
}

std::optional<Interval> Wilson(std::size_t successes, std::size_t n, double z) {
  if (n == 0) return std::nullopt;
  const double nn = static_cast<double>(n);
  const double p = static_cast<double>(successes) / nn;
  const double z2 = z * z;
  const double centre = p + z2 / (2 * nn);
  const double spread = z * std::sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn));
  const double scale = 1 + z2 / nn;
  return Interval{std::max(0.0, (centre - spread) / scale), std::min(1.0, (centre + spread) / scale)};
}

double McNemarExactP(std::size_t b, std::size_t c) {
  const std::size_t n = b + c;
  if (n == 0) return 1.0;
  boost::math::binomial_distribution<double> h0(static_cast<double>(n), 0.5);
  return std::min(1.0, 2 * boost::math::cdf(h0, static_cast<double>(std::min(b, c))));
}

double SignTestP(std::size_t wins, std::size_t losses) { return McNemarExactP(wins, losses); }

Agreement CohenKappa(const std::size_t counts[2][2]) {
  Agreement out;
  out.n = counts[0][0] + counts[0][1] + counts[1][0] + counts[1][1];
  if (out.n == 0) return out;
  const double n = static_cast<double>(out.n);
  out.observed = static_cast<double>(counts[0][0] + counts[1][1]) / n;
  const double judge_pass = static_cast<double>(counts[0][0] + counts[0][1]) / n;
  const double human_pass = static_cast<double>(counts[0][0] + counts[1][0]) / n;
  const double expected = judge_pass * human_pass + (1 - judge_pass) * (1 - human_pass);
  if (expected >= 1.0) return out;
  out.kappa = (out.observed - expected) / (1 - expected);
  return out;
}

}  // namespace skillrunner::eval::stats
