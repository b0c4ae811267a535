#pragma once

// Inline SVG charts for report.html: no scripts, no external resources; every
// label is escaped. Each function returns one <svg> element (or a short
// <p> saying there is nothing to draw). Internal to runner/eval.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner::eval::report {

struct Bar {
  std::string label;
  double value = 0;
};

// Vertical bars with their counts above and labels below; `caption` names
// what is counted (it also becomes the chart's accessible title).
std::string SvgHistogram(std::string_view caption, const std::vector<Bar>& bars);

// One horizontal bar split into passed (green), failed (red) and
// indeterminate (grey) shares of their sum, each with a tooltip.
std::string SvgStackedBar(double passed, double failed, double indeterminate);

struct Series {
  std::string name;
  std::string colour;                         // a CSS colour literal
  std::vector<std::optional<double>> values;  // rates 0..1, one per run
};

// Rate lines over runs (x: run, oldest left; y: 0-100 %). A missing value
// breaks the line. `run_labels` (one per run) become point tooltips, the
// first and last also axis labels.
std::string SvgRateLines(const std::vector<std::string>& run_labels, const std::vector<Series>& series);

// Up to 10 equal-width latency buckets covering [0, max], labelled in ms/s.
std::vector<Bar> LatencyBuckets(const std::vector<double>& durations_ms);
// The same for each case's cost in USD, labelled in dollars.
std::vector<Bar> CostBuckets(const std::vector<double>& costs_usd);

}  // namespace skillrunner::eval::report
