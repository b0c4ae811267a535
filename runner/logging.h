#pragma once

#include <spdlog/common.h>

#include <boost/json/object.hpp>
#include <expected>
#include <string>
#include <string_view>

#include "services/common/error.h"

namespace skillrunner {

// Sends spdlog's default logger to stderr at `level` (trace, debug, info,
// warn, error, critical, off) in `format` "text" or "json" (one object per
// line: ts, level, msg); CONFIG_INVALID for a level or format it does not
// know. Never log secrets: callers pass no keys to the log.
Result<void> ConfigureLogging(std::string_view level, std::string_view format);

// An event with fields, such as the socket server's access log. In the json
// format the fields are members of the line's object
// ({"ts","level","event",...fields}); in text, "event key=value ...". Costs
// nothing when `level` is not logged. Never pass secrets or user input.
void LogEvent(spdlog::level::level_enum level, std::string_view event, const boost::json::object& fields);

}  // namespace skillrunner
