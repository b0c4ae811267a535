#pragma once

#include <boost/json/value.hpp>
#include <expected>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/error.h"

namespace skillrunner {

struct Placeholder {
  std::vector<std::string> path;  // segments after "input"
  std::size_t offset = 0;         // of "{{" in the template text
  std::size_t length = 0;         // through "}}"
};

struct TemplateError {
  std::size_t offset = 0;
  std::string message;
};

// Finds every `{{ ... }}` in `text`. A placeholder is `{{input}}` or
// `{{input.a.b}}` (segments of [A-Za-z0-9_-]; spaces inside the braces are
// allowed); anything else between braces, or an unclosed `{{`, is an error.
std::expected<std::vector<Placeholder>, TemplateError> ParsePlaceholders(std::string_view text);

// Replaces each placeholder by the input value at its path: strings as they
// are, other values as JSON text, and "" where the input has no value (an
// optional property left out; design.md §9.8). Never fails today; the error
// (INPUT_INVALID: the input cannot fill the template) is kept for placeholders
// a later version may refuse at render time.
Result<std::string> RenderTemplate(std::string_view text, const std::vector<Placeholder>& placeholders,
                                   const boost::json::value& input);

// "input.a.b" for messages.
std::string PlaceholderName(const Placeholder& placeholder);

}  // namespace skillrunner
