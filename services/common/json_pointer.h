#pragma once

// RFC 6901 JSON pointers: the one place that escapes and splits them.

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner {

// Escapes one reference token ("~" -> "~0", "/" -> "~1").
std::string EscapePointerToken(std::string_view token);

// `pointer` + "/" + the escaped token.
std::string AppendPointer(std::string_view pointer, std::string_view token);

// Joins tokens into a pointer: {} -> "", {"a/b", "0"} -> "/a~1b/0".
std::string MakePointer(const std::vector<std::string>& tokens);

// Replaces the value at `pointer` in `root` ("" is `root` itself) with the string `mask`; false when
// nothing is there. For the fields an eval suite's `redact:` masks in what skillrunner writes.
bool MaskAt(boost::json::value& root, std::string_view pointer, std::string_view mask);

// `pointer` is `root` or inside it ("/input/a" under "/input"): the rest of it ("/a", "" for
// `root` itself); nullopt otherwise.
std::optional<std::string_view> PointerUnder(std::string_view pointer, std::string_view root);

// Splits a pointer into unescaped tokens ("" -> {}, "/a~1b/0" -> {"a/b", "0"});
// false for text that is not a pointer (no leading "/", a bad "~" escape).
bool ParsePointer(std::string_view pointer, std::vector<std::string>& tokens);

}  // namespace skillrunner
