#include "services/common/utf8.h"

namespace skillrunner {
namespace {
constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD
}  // namespace

std::size_t DecodeUtf8(std::string_view text, std::size_t i, char32_t& code_point) {
  auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[i + k]); };
  unsigned char lead = byte(0);
  std::size_t length = 0;
  char32_t min = 0;
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  } else if ((lead & 0xE0) == 0xC0) {
    length = 2, code_point = lead & 0x1F, min = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code_point = lead & 0x0F, min = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code_point = lead & 0x07, min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(k) & 0x3F);
  }
  if (code_point < min || code_point > 0x10FFFF) return 0;
  if (code_point >= 0xD800 && code_point <= 0xDFFF) return 0;
  return length;
}

std::optional<std::size_t> InvalidUtf8At(std::string_view text) {
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    std::size_t length = DecodeUtf8(text, i, c);
    if (length == 0) return i;
    i += length;
  }
  return std::nullopt;
}

bool IsValidUtf8(std::string_view text) { return !InvalidUtf8At(text).has_value(); }

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    char32_t c = 0;
    std::size_t length = DecodeUtf8(text, i, c);
    if (length == 0) {
      out.append(kReplacement);
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string_view TruncateUtf8(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  std::size_t end = max_bytes;
  // Step back over continuation bytes so no character is cut in half.
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return text.substr(0, end);
}

std::string ShortenUtf8(std::string_view text, std::size_t max_bytes, std::string_view ellipsis) {
  if (text.size() <= max_bytes) return std::string(text);
  std::size_t room = max_bytes > ellipsis.size() ? max_bytes - ellipsis.size() : 0;
  return std::string(TruncateUtf8(text, room)) + std::string(ellipsis);
}

std::int64_t CodePoints(std::string_view text) {
  std::int64_t count = 0;
  for (unsigned char c : text) count += (c & 0xC0U) != 0x80U ? 1 : 0;
  return count;
}

}  // namespace skillrunner
