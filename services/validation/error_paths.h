#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace skillrunner::validation {

// Escapes one reference token for an RFC 6901 pointer ("~" -> "~0", "/" -> "~1").
std::string EscapePointerToken(std::string_view token);

// A `$ref` fragment ("#/definitions/a%25b") percent-decoded by Boost.URL
// (RFC 3986); text that is not valid percent-encoding is taken as written.
std::string DecodeUriFragment(std::string_view text);

// Joins tokens into a pointer: {} -> "", {"a/b", "0"} -> "/a~1b/0".
std::string MakePointer(const std::vector<std::string>& tokens);

// valijson's context ("<root>", "[a]", "[0]", ...) as reference tokens
// ({"a", "0"}).
std::vector<std::string> ContextTokens(const std::vector<std::string>& context);

// The value at `tokens` inside `root`, or nullptr when there is none.
const boost::json::value* FindByTokens(const boost::json::value& root,
                                       const std::vector<std::string>& tokens);

}  // namespace skillrunner::validation
