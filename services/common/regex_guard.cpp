#include "services/common/regex_guard.h"

#include <cstddef>
#include <string>

namespace skillrunner {
namespace {

constexpr std::size_t kMostDigits = 9;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// The length of the run of digits at `at`.
std::size_t Digits(std::string_view text, std::size_t at) {
  std::size_t end = at;
  while (end < text.size() && IsDigit(text[end])) ++end;
  return end - at;
}

}  // namespace

bool RegexNumbersFit(std::string_view pattern) {
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '\\') {
      if (Digits(pattern, i + 1) > kMostDigits) return false;  // \N
      ++i;                                                     // the escaped character (a backslash too) is not a start
    } else if (pattern[i] == '{') {
      std::size_t low = Digits(pattern, i + 1);
      std::size_t high = i + 1 + low < pattern.size() && pattern[i + 1 + low] == ',' ? Digits(pattern, i + 2 + low) : 0;
      if (low > kMostDigits || high > kMostDigits) return false;  // {m} or {m,n}
    }
  }
  return true;
}

std::optional<std::regex> CompileSchemaRegex(std::string_view pattern) {
  if (!RegexNumbersFit(pattern)) return std::nullopt;
  try {
    return std::regex(std::string(pattern), std::regex::ECMAScript);
  } catch (const std::regex_error&) {
    return std::nullopt;
  }
}

}  // namespace skillrunner
