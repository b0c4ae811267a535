#pragma once

#include <boost/json/value.hpp>
#include <string>

namespace skillrunner {

// Indented JSON (two spaces), for `--pretty` and human-facing files.
std::string PrettyJson(const boost::json::value& value);

}  // namespace skillrunner
