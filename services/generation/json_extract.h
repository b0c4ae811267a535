#pragma once

// Tolerant extraction of the one JSON value in a model's answer (design.md §5.1
// fallback path). Pure: no I/O, thread-safe, never crashes on any input (the
// parser is non-recursive and limited to 256 levels of nesting).

#include <boost/json/value.hpp>
#include <cstddef>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace skillrunner::generation {

struct Extracted {
  boost::json::value value;
  // nullopt: the whole text was the value; "fence": taken from a Markdown code
  // fence; "prose": the one object/array embedded in other text.
  std::optional<std::string> repair;
};

struct ExtractError {
  // "<boost.json message> at line L, column C" for a parse failure of the
  // whole text (e.g. "syntax error at line 1, column 1", "incomplete JSON at
  // line 3, column 5"), "the answer is empty", or for several values
  // "more than one JSON value: a second one starts at line L, column C".
  std::string message;
  std::size_t offset = 0;  // byte offset of that position
  std::size_t line = 1;    // 1-based
  std::size_t column = 1;  // 1-based, in Unicode code points
};

// Accepts exactly one JSON value (strict JSON: no comments, no trailing commas):
//  1. the whole text, surrounding whitespace allowed -> repair nullopt;
//  2. else the first Markdown code fence (``` or ```json ...) whose content
//     parses, prose around it allowed -> repair "fence";
//  3. else the one object or array that parses inside the text -> "prose".
//     Arrays of numbers only (footnotes like "[1]") do not count as a second
//     value; two objects (`{"a":1} {"b":2}`) are an error, not a guess.
// Otherwise the error of parsing the whole text.
std::expected<Extracted, ExtractError> ExtractJson(std::string_view text);

}  // namespace skillrunner::generation
