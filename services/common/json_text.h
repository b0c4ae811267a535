#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace skillrunner {

// Compact JSON with numbers as people write them (0.2, not Boost.JSON's
// 2E-1): doubles in the shortest form that reads back exactly.
std::string CompactJson(const boost::json::value& value);
// The same, appended to `out`.
void AppendCompactJson(const boost::json::value& value, std::string& out);
// `text` as a JSON string (quoted, escaped as Boost.JSON escapes), appended.
void AppendJsonString(std::string_view text, std::string& out);

// The same, indented by two spaces, for `--pretty` and human-facing files.
std::string PrettyJson(const boost::json::value& value);

// Parses one JSON value (surrounding whitespace allowed); on failure, where:
// "line 2, column 7: syntax error" (columns count characters, from 1).
std::expected<boost::json::value, std::string> ParseJsonText(std::string_view text, int max_depth = 256);

// A number as JSON Schema's "integer" takes it (2.0 is the integer 2),
// clamped to int64's range; nullopt for anything else (2.5, a string). What a
// loader reads where its schema said "integer" (as_int64 throws on 2.0).
std::optional<std::int64_t> JsonInteger(const boost::json::value& value);

}  // namespace skillrunner
