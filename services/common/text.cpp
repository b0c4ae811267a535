#include "services/common/text.h"

#include <algorithm>
#include <cstdio>

namespace skillrunner {

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::size_t DamerauDistance(std::string_view a, std::string_view b) {
  // Three rows: the one two back is what a swap reads.
  std::vector<std::size_t> before(b.size() + 1), last(b.size() + 1), row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) last[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      row[j] = std::min({last[j] + 1, row[j - 1] + 1, last[j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, last);
    std::swap(last, row);
  }
  return last[b.size()];
}

std::vector<std::string> ClosestNames(std::string_view name, const std::vector<std::string>& candidates,
                                      std::size_t most, std::size_t max_distance) {
  if (max_distance == 0) max_distance = std::max<std::size_t>(2, name.size() / 3);
  std::vector<std::pair<std::size_t, std::size_t>> scored;  // distance, index
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    std::size_t d = EditDistance(name, candidates[i]);
    if (d <= max_distance && candidates[i] != name) scored.emplace_back(d, i);
  }
  std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::string> out;
  for (std::size_t i = 0; i < scored.size() && i < most; ++i) out.push_back(candidates[scored[i].second]);
  return out;
}

std::string DidYouMean(const std::vector<std::string>& names) {
  if (names.empty()) return {};
  std::string out = " (did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i) out += (i ? ", \"" : "\"") + names[i] + "\"";
  return out + "?)";
}

// Label values are escaped as the exposition format asks (\\, \", \n).
std::string PrometheusLabel(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (char c : value) {
    if (c == '\\' || c == '"') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string PValueText(double p) {
  if (p < 1e-9) return "p < 1e-9";
  char text[32];
  std::snprintf(text, sizeof text, "p = %.3g", p);
  return text;
}

}  // namespace skillrunner
