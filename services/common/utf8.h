#pragma once

// UTF-8 helpers for everything that cuts or writes text. In eval runs:
// results.jsonl must hold valid UTF-8 on every line (Boost.JSON's parser
// rejects anything else, and a rejected line would stop --resume and merge),
// and reports must never cut a character in half.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace skillrunner {

// Decodes one UTF-8 character at `text[i]`; returns its length and sets
// `code_point`, or returns 0 for an invalid sequence (overlong forms,
// surrogates and truncated sequences included).
std::size_t DecodeUtf8(std::string_view text, std::size_t i, char32_t& code_point);

// True when `text` is entirely valid UTF-8.
bool IsValidUtf8(std::string_view text);

// The offset of the first byte of `text` that does not begin a valid UTF-8
// sequence, or nullopt when all of it is valid.
std::optional<std::size_t> InvalidUtf8At(std::string_view text);

// `text` with every byte that is not part of a valid UTF-8 sequence replaced
// by U+FFFD.
std::string SanitizeUtf8(std::string_view text);

// The first `max_bytes` of `text`, cut on a UTF-8 character boundary.
std::string_view TruncateUtf8(std::string_view text, std::size_t max_bytes);

// `text` cut to at most `max_bytes` (on a character boundary) with `ellipsis`
// appended when anything was cut; the result is at most max_bytes long.
std::string ShortenUtf8(std::string_view text, std::size_t max_bytes, std::string_view ellipsis = "...");

// The number of code points in `text` (bytes that do not continue a sequence).
std::int64_t CodePoints(std::string_view text);

}  // namespace skillrunner
