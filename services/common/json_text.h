#pragma once

#include <boost/json/value.hpp>
#include <expected>
#include <string>
#include <string_view>

namespace skillrunner {

// Compact JSON with numbers as people write them (0.2, not Boost.JSON's
// 2E-1): doubles in the shortest form that reads back exactly.
std::string CompactJson(const boost::json::value& value);

// The same, indented by two spaces, for `--pretty` and human-facing files.
std::string PrettyJson(const boost::json::value& value);

// Parses one JSON value (surrounding whitespace allowed); on failure, where:
// "line 2, column 7: syntax error" (columns count characters, from 1).
std::expected<boost::json::value, std::string> ParseJsonText(std::string_view text, int max_depth = 256);

}  // namespace skillrunner
