#include "services/common/iso_time.h"

#include <cstdint>
#include <cstdio>
#include <ctime>

namespace skillrunner {

std::string IsoUtc(std::chrono::system_clock::time_point time) {
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms % 1000));
  return buffer;
}

double UnixSeconds(std::chrono::system_clock::time_point time) {
  return std::chrono::duration<double>(time.time_since_epoch()).count();
}

std::optional<std::chrono::system_clock::time_point> ParseIsoUtc(std::string_view text) {
  std::tm tm{};
  std::string copy(text);
  const char* end = strptime(copy.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return std::nullopt;
  std::chrono::nanoseconds fraction{0};
  if (*end == '.') {
    std::int64_t scale = 100'000'000;
    for (++end; *end >= '0' && *end <= '9'; ++end, scale /= 10)
      fraction += std::chrono::nanoseconds((*end - '0') * scale);
  }
  if (std::string_view(end) != "Z" && std::string_view(end) != "+00:00") return std::nullopt;
  return std::chrono::time_point_cast<std::chrono::system_clock::duration>(
      std::chrono::system_clock::from_time_t(timegm(&tm)) + fraction);
}

}  // namespace skillrunner
