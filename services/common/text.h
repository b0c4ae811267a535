#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner {

// Levenshtein distance, for "did you mean" hints.
std::size_t EditDistance(std::string_view a, std::string_view b);

// Damerau-Levenshtein distance (optimal string alignment): a swap of two
// neighbouring letters counts one edit ("requried" is 1 from "required").
std::size_t DamerauDistance(std::string_view a, std::string_view b);

// The candidates closest to `name`, closest first (ties in the candidates'
// order), at most `most`, each within `max_distance` edits (0: within
// max(2, name's length / 3)).
std::vector<std::string> ClosestNames(std::string_view name, const std::vector<std::string>& candidates,
                                      std::size_t most = 3, std::size_t max_distance = 0);

// ` (did you mean "a"?)`, ` (did you mean "a", "b"?)`, or "" for none.
std::string DidYouMean(const std::vector<std::string>& names);

// A p-value as every output prints it: "p = 0.0156" (three significant digits), or "p < 1e-9"
// below that (stored p-values are rounded to 1e-9, so a smaller one reads 0).
std::string PValueText(double p);

// A Prometheus label value escaped as the text exposition format asks (\\, \", \n).
std::string PrometheusLabel(std::string_view value);

}  // namespace skillrunner
