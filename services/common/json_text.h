#pragma once

#include <boost/json/value.hpp>
#include <string>

namespace skillrunner {

// Compact JSON with numbers as people write them (0.2, not Boost.JSON's
// 2E-1): doubles in the shortest form that reads back exactly.
std::string CompactJson(const boost::json::value& value);

// The same, indented by two spaces, for `--pretty` and human-facing files.
std::string PrettyJson(const boost::json::value& value);

}  // namespace skillrunner
