#pragma once

// Wall-clock times as text: RFC 3339 in UTC with milliseconds, the form of run
// records, health's `last_reload` and the JSON log lines.

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace skillrunner {

// "2024-05-01T02:03:04.567Z"
std::string IsoUtc(std::chrono::system_clock::time_point time);
// Parses IsoUtc's output back, and any RFC 3339 time in UTC (a fraction of any length or none; Z or
// +00:00), as STS and the metadata services write expirations; nullopt for anything else.
std::optional<std::chrono::system_clock::time_point> ParseIsoUtc(std::string_view text);
// `time` as Unix seconds, with its fraction (what a dashboard compares with).
double UnixSeconds(std::chrono::system_clock::time_point time);

}  // namespace skillrunner
