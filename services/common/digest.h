#pragma once

// Digests of text and JSON: what the response cache keys on and what
// `skills.list` reports as a skill's `schema_hash`.

#include <array>
#include <boost/json/value.hpp>
#include <string>
#include <string_view>

namespace skillrunner {

// The SHA-256 of `text`: its 32 bytes, or as 64 lowercase hex digits.
std::array<unsigned char, 32> Sha256(std::string_view text);
std::string Sha256Hex(std::string_view text);

// JSON with the members of every object sorted by key (byte order) and no
// whitespace, numbers as CompactJson writes them: the same value always gives
// the same text, whatever order its members were written in.
std::string CanonicalJson(const boost::json::value& value);

}  // namespace skillrunner
