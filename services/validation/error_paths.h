#pragma once

#include <boost/json/value.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/json_pointer.h"

namespace skillrunner::validation {

// A `$ref` fragment ("#/definitions/a%25b") percent-decoded by Boost.URL
// (RFC 3986); text that is not valid percent-encoding is taken as written.
std::string DecodeUriFragment(std::string_view text);

// valijson's context ("<root>", "[a]", "[0]", ...) as reference tokens
// ({"a", "0"}).
std::vector<std::string> ContextTokens(const std::vector<std::string>& context);

// The value at `tokens` inside `root`, or nullptr when there is none.
const boost::json::value* FindByTokens(const boost::json::value& root, const std::vector<std::string>& tokens);

}  // namespace skillrunner::validation
