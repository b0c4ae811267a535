#include "runner/eval/report/html_charts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "runner/eval/report/report_markup.h"
#include "services/common/utf8.h"

namespace skillrunner::eval::report {

namespace {

constexpr std::string_view kPassColour = "#2e7d32";
constexpr std::string_view kFailColour = "#c62828";
constexpr std::string_view kIndeterminateColour = "#9e9e9e";
constexpr int kMaxBuckets = 10;

std::string Num(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}

std::string Text(double x, double y, std::string_view anchor, std::string_view text, std::string_view extra = "") {
  return "<text x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" text-anchor=\"" + std::string(anchor) + "\"" +
         std::string(extra) + ">" + EscapeMarkup(text) + "</text>";
}

std::string Rect(double x, double y, double width, double height, std::string_view colour, std::string_view tooltip) {
  return "<rect x=\"" + Num(x) + "\" y=\"" + Num(y) + "\" width=\"" + Num(width) + "\" height=\"" + Num(height) +
         "\" fill=\"" + std::string(colour) + "\"><title>" + EscapeMarkup(tooltip) + "</title></rect>";
}

}  // namespace

std::string SvgHistogram(std::string_view caption, const std::vector<Bar>& bars) {
  if (bars.empty()) return "<p class=\"muted\">" + EscapeMarkup(caption) + ": no data.</p>";
  constexpr double kBarWidth = 36, kGap = 8, kPlotHeight = 120, kTop = 24;
  // A bin label wider than its bar and gap (at 10 px, about 6 px a character) would run into
  // the next one ("100-250 ms", "$0.001-0.0025"): every label is then turned 40 degrees.
  constexpr double kCharWidth = 6, kSin40 = 0.643;
  double max = 0;
  std::size_t longest = 0;
  for (const Bar& bar : bars) {
    max = std::max(max, bar.value);
    longest = std::max<std::size_t>(longest, CodePoints(bar.label));
  }
  const bool turned = static_cast<double>(longest) * kCharWidth > kBarWidth + kGap;
  const double bottom = turned ? 34 + static_cast<double>(longest) * kCharWidth * kSin40 : 34;
  // Wide enough for the caption under even one or two bars.
  double width = std::max(200.0, kGap + static_cast<double>(bars.size()) * (kBarWidth + kGap));
  double height = kTop + kPlotHeight + bottom;
  std::string svg = "<svg class=\"chart\" role=\"img\" width=\"" + Num(width) + "\" height=\"" + Num(height) +
                    "\" viewBox=\"0 0 " + Num(width) + " " + Num(height) + "\"><title>" + EscapeMarkup(caption) +
                    "</title>";
  double x = kGap;
  for (const Bar& bar : bars) {
    double h = max > 0 ? bar.value / max * kPlotHeight : 0;
    double y = kTop + kPlotHeight - h;
    svg += Rect(x, y, kBarWidth, h, "#1565c0", bar.label + ": " + FormatNumber(bar.value));
    svg += Text(x + kBarWidth / 2, y - 4, "middle", FormatNumber(bar.value));
    const double label_x = x + kBarWidth / 2, label_y = kTop + kPlotHeight + 14;
    if (turned) {
      svg += Text(label_x + 4, label_y, "end", bar.label,
                  " font-size=\"10\" transform=\"rotate(-40 " + Num(label_x) + " " + Num(label_y) + ")\"");
    } else {
      svg += Text(label_x, label_y, "middle", bar.label, " font-size=\"10\"");
    }
    x += kBarWidth + kGap;
  }
  svg += "<line x1=\"0\" y1=\"" + Num(kTop + kPlotHeight) + "\" x2=\"" + Num(width) + "\" y2=\"" +
         Num(kTop + kPlotHeight) + "\" stroke=\"#555\"/>";
  svg += Text(width / 2, height - 4, "middle", caption, " font-size=\"11\"");
  return svg + "</svg>";
}

std::string SvgStackedBar(double passed, double failed, double indeterminate) {
  constexpr double kWidth = 240, kHeight = 16;
  std::string svg = "<svg class=\"bar\" width=\"" + Num(kWidth) + "\" height=\"" + Num(kHeight) + "\" viewBox=\"0 0 " +
                    Num(kWidth) + " " + Num(kHeight) + "\">";
  double total = passed + failed + indeterminate;
  if (total <= 0) {
    return svg + Rect(0, 0, kWidth, kHeight, "#eeeeee", "nothing judged") + "</svg>";
  }
  double x = 0;
  auto segment = [&](double count, std::string_view colour, std::string_view name) {
    if (count <= 0) return;
    double width = count / total * kWidth;
    svg += Rect(x, 0, width, kHeight, colour, FormatNumber(count) + " " + std::string(name));
    x += width;
  };
  segment(passed, kPassColour, "passed");
  segment(failed, kFailColour, "failed");
  segment(indeterminate, kIndeterminateColour, "indeterminate");
  return svg + "</svg>";
}

std::string SvgRateLines(const std::vector<std::string>& run_labels, const std::vector<Series>& series) {
  constexpr double kWidth = 640, kHeight = 200, kLeft = 44, kRight = 12, kTop = 10, kBottom = 30;
  const double plot_width = kWidth - kLeft - kRight;
  const double plot_height = kHeight - kTop - kBottom;
  const std::size_t runs = run_labels.size();
  auto x_of = [&](std::size_t i) {
    return runs <= 1 ? kLeft + plot_width / 2
                     : kLeft + plot_width * static_cast<double>(i) / static_cast<double>(runs - 1);
  };
  auto y_of = [&](double rate) { return kTop + plot_height * (1.0 - std::clamp(rate, 0.0, 1.0)); };
  std::string svg = "<svg class=\"chart\" role=\"img\" width=\"" + Num(kWidth) + "\" height=\"" + Num(kHeight) +
                    "\" viewBox=\"0 0 " + Num(kWidth) + " " + Num(kHeight) + "\">";
  for (double rate : {0.0, 0.5, 1.0}) {
    svg += "<line x1=\"" + Num(kLeft) + "\" y1=\"" + Num(y_of(rate)) + "\" x2=\"" + Num(kWidth - kRight) + "\" y2=\"" +
           Num(y_of(rate)) + "\" stroke=\"#ddd\"/>";
    svg += Text(kLeft - 6, y_of(rate) + 4, "end", FormatRate(rate), " font-size=\"10\"");
  }
  if (runs > 0) {
    svg += Text(x_of(0), kHeight - 8, runs == 1 ? "middle" : "start", run_labels.front(), " font-size=\"10\"");
    if (runs > 1) svg += Text(x_of(runs - 1), kHeight - 8, "end", run_labels.back(), " font-size=\"10\"");
  }
  for (const Series& line : series) {
    std::string points;
    std::size_t count = 0;  // one point alone is drawn by its circle
    auto flush = [&] {
      if (count >= 2) {
        svg += "<polyline fill=\"none\" stroke-width=\"2\" stroke=\"" + line.colour + "\" points=\"" + points + "\"/>";
      }
      points.clear();
      count = 0;
    };
    for (std::size_t i = 0; i < runs && i < line.values.size(); ++i) {
      if (!line.values[i]) {
        flush();
        continue;
      }
      double x = x_of(i), y = y_of(*line.values[i]);
      if (!points.empty()) points += " ";
      points += Num(x) + "," + Num(y);
      ++count;
      svg += "<circle cx=\"" + Num(x) + "\" cy=\"" + Num(y) + "\" r=\"3\" fill=\"" + line.colour + "\"><title>" +
             EscapeMarkup(run_labels[i] + " · " + line.name + ": " + FormatRate(line.values[i])) + "</title></circle>";
    }
    flush();
  }
  return svg + "</svg>";
}

namespace {

// Up to kMaxBuckets + 1 buckets of one round width (1, 2 or 5 times a power
// of ten, so labels stay legible) covering [0, max]; `smallest` bounds the
// width from below (1 ms: no sub-millisecond latency buckets).
std::vector<Bar> EvenBuckets(const std::vector<double>& values, double smallest, std::string (*label)(double)) {
  std::vector<Bar> bars;
  if (values.empty()) return bars;
  double max = *std::max_element(values.begin(), values.end());
  double raw = std::max(max, smallest) / kMaxBuckets;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  double width = power;
  for (double step : {1.0, 2.0, 5.0, 10.0}) {
    if (step * power >= raw) {
      width = step * power;
      break;
    }
  }
  auto count = static_cast<std::size_t>(std::floor(max / width)) + 1;
  count = std::min<std::size_t>(count, kMaxBuckets + 1);
  bars.resize(count);
  for (std::size_t i = 0; i < count; ++i) bars[i].label = "≥" + label(width * static_cast<double>(i));
  for (double value : values) {
    auto i = static_cast<std::size_t>(std::max(0.0, std::floor(value / width)));
    bars[std::min(i, count - 1)].value += 1;
  }
  return bars;
}

std::string MsLabel(double ms) { return FormatMs(ms); }
std::string UsdLabel(double usd) { return usd == 0 ? "$0" : FormatUsd(usd); }

}  // namespace

std::vector<Bar> LatencyBuckets(const std::vector<double>& durations_ms) {
  // Buckets of at least 1 ms: the labels are whole milliseconds, and
  // sub-millisecond buckets all read "≥0 ms".
  return EvenBuckets(durations_ms, 10.0, MsLabel);
}

std::vector<Bar> CostBuckets(const std::vector<double>& costs_usd) { return EvenBuckets(costs_usd, 1e-9, UsdLabel); }

}  // namespace skillrunner::eval::report
