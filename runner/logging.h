#pragma once

#include <expected>
#include <string>
#include <string_view>

namespace skillrunner {

// Sends spdlog's default logger to stderr at `level` (trace, debug, info,
// warn, error, critical, off) in `format` "text" or "json" (one object per
// line: ts, level, msg). Never log secrets: callers pass no keys to the log.
std::expected<void, std::string> ConfigureLogging(std::string_view level,
                                                  std::string_view format);

}  // namespace skillrunner
