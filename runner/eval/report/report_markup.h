#pragma once

// Helpers shared by the JUnit and HTML reports: tolerant reads of summary and
// record fields (any field may be missing, null or of the wrong type), markup
// escaping that always yields text XML 1.0 and HTML5 accept, and the display
// formats for rates, counts and durations. Internal to runner/eval.

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/eval/records/case_record.h"
#include "runner/eval/records/record_fields.h"
#include "services/common/utf8.h"

namespace skillrunner::eval::report {

// What a missing or null value shows as.
inline constexpr std::string_view kDash = "—";

// The field readers (runner/eval/records/record_fields.h) and UTF-8 helpers
// (services/common/utf8.h), under the names the report code uses.
using eval::ArrayAt;
using eval::AsNumber;
using eval::CaseDurationMs;
using eval::ErrorLines;
using eval::NumberAt;
using eval::ObjectAt;
using eval::TextAt;
using skillrunner::TruncateUtf8;

// Escapes & < > " ' and replaces what XML 1.0 forbids (C0 controls other
// than tab, newline and carriage return; U+FFFE, U+FFFF; invalid UTF-8) by
// U+FFFD. With `attribute`, tab, newline and carriage return become character
// references so that attribute normalisation keeps them.
std::string EscapeMarkup(std::string_view text, bool attribute = false);

// 0.938 -> "93.8%"; nullopt -> "—".
std::string FormatRate(std::optional<double> rate);
// Three significant digits ("0.000488", "0.25"): p-values and alphas.
std::string FormatSignificant(double value);
// A rate difference in percentage points: 0.05 -> "+5.0 pp".
std::string FormatDeltaPoints(std::optional<double> delta);
// 1234 -> "1234", 2.5 -> "2.5"; nullopt -> "—".
std::string FormatNumber(std::optional<double> number);
// US dollars: 0.01234 -> "$0.0123", 12.5 -> "$12.50"; nullopt -> "—".
std::string FormatUsd(std::optional<double> usd);
// Milliseconds for people: 950 -> "950 ms", 12500 -> "12.5 s".
std::string FormatMs(std::optional<double> ms);
// Any JSON scalar as text (strings as they are, numbers short), "—" for
// null or missing; arrays and objects as compact JSON.
std::string FormatValue(const boost::json::value* value);

// Why a case failed, one line each, gate by gate (CaseRecord::FailedGates):
// the expected-value mismatches ("expected <path>: <message>"), the failed
// checks ("check <op> <pointer>: <message>"), the review's issues and its
// failed criteria ("criterion <id> failed: <reasoning>").
std::vector<std::string> FailureReasons(const boost::json::object& record);

}  // namespace skillrunner::eval::report
