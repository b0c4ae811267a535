#pragma once

// The statistics of design.md §9.5, on Boost.Math's distributions (no
// hand-rolled ones): Wilson score intervals, the exact McNemar and sign tests,
// and Cohen's kappa. Internal to runner/eval.

#include <cstddef>
#include <optional>

namespace skillrunner::eval::stats {

// The 0.975 quantile of the standard normal distribution (1.959964...).
double Z975();

struct Interval {
  double low = 0;
  double high = 0;
};

// The Wilson score interval of `successes` in `n` at z (default: 95%):
// (p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n). Nullopt for n = 0.
std::optional<Interval> Wilson(std::size_t successes, std::size_t n, double z = Z975());

// The exact two-sided McNemar test on the discordant pairs: `b` pass->fail
// and `c` fail->pass, under H0 each is Binomial(b + c, 1/2):
// p = min(1, 2·P(X <= min(b, c))). 1 when there is no discordant pair.
double McNemarExactP(std::size_t b, std::size_t c);

// The two-sided sign test of `wins` against `losses` (ties left out): the
// same binomial test.
double SignTestP(std::size_t wins, std::size_t losses);

// Two raters' pass/fail on the same items: counts[a][b] with 0 = pass,
// 1 = fail (a: the judge, b: the human).
struct Agreement {
  std::size_t n = 0;
  double observed = 0;          // the share they agree on
  std::optional<double> kappa;  // (po - pe) / (1 - pe); nullopt when pe = 1
};
Agreement CohenKappa(const std::size_t counts[2][2]);

}  // namespace skillrunner::eval::stats
