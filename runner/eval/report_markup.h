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

namespace skillrunner::eval::report {

// What a missing or null value shows as.
inline constexpr std::string_view kDash = "—";

// nullptr when `object` is null, or the key is missing or of another type.
const boost::json::object* ObjectAt(const boost::json::object* object, std::string_view key);
const boost::json::array* ArrayAt(const boost::json::object* object, std::string_view key);
// Finite numbers only (int64, uint64 or double).
std::optional<double> NumberAt(const boost::json::object* object, std::string_view key);
std::optional<double> AsNumber(const boost::json::value* value);
// "" when missing or not a string.
std::string_view TextAt(const boost::json::object* object, std::string_view key);

// Escapes & < > " ' and replaces what XML 1.0 forbids (C0 controls other
// than tab, newline and carriage return; U+FFFE, U+FFFF; invalid UTF-8) by
// U+FFFD. With `attribute`, tab, newline and carriage return become character
// references so that attribute normalisation keeps them.
std::string EscapeMarkup(std::string_view text, bool attribute = false);

// The first `max_bytes` of `text`, cut on a UTF-8 character boundary.
std::string_view TruncateUtf8(std::string_view text, std::size_t max_bytes);

// 0.938 -> "93.8%"; nullopt -> "—".
std::string FormatRate(std::optional<double> rate);
// A rate difference in percentage points: 0.05 -> "+5.0 pp".
std::string FormatDeltaPoints(std::optional<double> delta);
// 1234 -> "1234", 2.5 -> "2.5"; nullopt -> "—".
std::string FormatNumber(std::optional<double> number);
// Milliseconds for people: 950 -> "950 ms", 12500 -> "12.5 s".
std::string FormatMs(std::optional<double> ms);
// Any JSON scalar as text (strings as they are, numbers short), "—" for
// null or missing; arrays and objects as compact JSON.
std::string FormatValue(const boost::json::value* value);

// Why a case whose outcome is "fail" failed, one line each: the review's
// issues, its failed criteria ("criterion <id> failed: <reasoning>") and the
// expected-value mismatches ("expected <path>: <message>").
std::vector<std::string> FailureReasons(const boost::json::object& record);

// "path: message" for each entry of an errors array ([{path, message}]).
std::vector<std::string> ErrorLines(const boost::json::array* errors);

// The case's wall time: the record's "duration_ms", else its metrics'.
std::optional<double> CaseDurationMs(const boost::json::object& record);

}  // namespace skillrunner::eval::report
