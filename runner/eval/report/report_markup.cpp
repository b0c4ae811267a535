#include "runner/eval/report/report_markup.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "runner/eval/records/case_record.h"
#include "services/common/json_text.h"

namespace skillrunner::eval::report {
namespace json = boost::json;

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool AllowedInXml(char32_t c) {
  if (c < 0x20) return c == 0x9 || c == 0xA || c == 0xD;
  return c != 0xFFFE && c != 0xFFFF;
}

}  // namespace

std::string EscapeMarkup(std::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    std::size_t length = DecodeUtf8(text, i, c);
    if (length == 0) {
      out.append(kReplacement);
      ++i;
      continue;
    }
    if (!AllowedInXml(c)) {
      out.append(kReplacement);
    } else if (c == '&') {
      out.append("&amp;");
    } else if (c == '<') {
      out.append("&lt;");
    } else if (c == '>') {
      out.append("&gt;");
    } else if (c == '"') {
      out.append("&quot;");
    } else if (c == '\'') {
      out.append("&#39;");
    } else if (attribute && (c == '\n' || c == '\r' || c == '\t')) {
      out.append(c == '\n' ? "&#10;" : c == '\r' ? "&#13;" : "&#9;");
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

namespace {

std::string Printf(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

}  // namespace

std::string FormatSignificant(double value) { return Printf("%.3g", value); }

std::string FormatRate(std::optional<double> rate) {
  if (!rate) return std::string(kDash);
  return Printf("%.1f%%", *rate * 100.0);
}

std::string FormatDeltaPoints(std::optional<double> delta) {
  if (!delta) return std::string(kDash);
  double points = *delta * 100.0;
  if (std::fabs(points) < 0.05) return "±0.0 pp";
  return Printf("%+.1f pp", points);
}

std::string FormatNumber(std::optional<double> number) {
  if (!number) return std::string(kDash);
  if (std::fabs(*number) < 1e15 && *number == std::floor(*number)) {
    return std::to_string(static_cast<std::int64_t>(*number));
  }
  if (std::fabs(*number) >= 1000.0) return Printf("%.0f", *number);
  return Printf("%.3g", *number);
}

std::string FormatUsd(std::optional<double> usd) {
  if (!usd) return std::string(kDash);
  if (*usd >= 1.0) return Printf("$%.2f", *usd);
  return Printf("$%.3g", *usd);
}

std::string FormatMs(std::optional<double> ms) {
  if (!ms) return std::string(kDash);
  if (*ms < 1000.0) return Printf("%.0f ms", *ms);
  if (*ms < 60'000.0) return Printf("%.1f s", *ms / 1000.0);
  return Printf("%.1f min", *ms / 60'000.0);
}

std::string FormatValue(const json::value* value) {
  if (value == nullptr || value->is_null()) return std::string(kDash);
  if (value->is_string()) return std::string(value->as_string());
  if (std::optional<double> number = AsNumber(value)) return FormatNumber(number);
  return CompactJson(*value);
}

}  // namespace skillrunner::eval::report

namespace skillrunner::eval::report {

std::vector<std::string> FailureReasons(const json::object& record) {
  std::vector<std::string> reasons;
  for (const GateFailure& gate : CaseRecord::FromJson(record).FailedGates()) {
    for (const std::string& line : gate.lines) {
      if (std::find(reasons.begin(), reasons.end(), line) == reasons.end()) reasons.push_back(line);
    }
  }
  return reasons;
}

}  // namespace skillrunner::eval::report
