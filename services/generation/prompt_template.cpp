#include "services/generation/prompt_template.h"

#include <boost/json/serialize.hpp>

#include "services/common/json_text.h"

namespace skillrunner {
namespace {

bool IsSegmentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

}  // namespace

std::string PlaceholderName(const Placeholder& placeholder) {
  std::string name = "input";
  for (const auto& segment : placeholder.path) name += "." + segment;
  return name;
}

std::expected<std::vector<Placeholder>, TemplateError> ParsePlaceholders(std::string_view text) {
  std::vector<Placeholder> out;
  std::size_t pos = 0;
  while ((pos = text.find("{{", pos)) != std::string_view::npos) {
    std::size_t close = text.find("}}", pos + 2);
    if (close == std::string_view::npos) {
      return std::unexpected(TemplateError{pos, "unclosed \"{{\""});
    }
    std::string_view inner = Trim(text.substr(pos + 2, close - pos - 2));
    Placeholder placeholder{{}, pos, close + 2 - pos};
    std::string_view rest = inner;
    bool ok = rest.starts_with("input");
    rest.remove_prefix(ok ? 5 : 0);
    while (ok && !rest.empty()) {
      if (rest.front() != '.') {
        ok = false;
        break;
      }
      rest.remove_prefix(1);
      std::size_t n = 0;
      while (n < rest.size() && IsSegmentChar(rest[n])) ++n;
      if (n == 0) {
        ok = false;
        break;
      }
      placeholder.path.emplace_back(rest.substr(0, n));
      rest.remove_prefix(n);
    }
    if (!ok) {
      return std::unexpected(TemplateError{
          pos, "malformed placeholder \"{{" + std::string(inner) + "}}\": expected {{input}} or {{input.field.path}}"});
    }
    out.push_back(std::move(placeholder));
    pos = close + 2;
  }
  return out;
}

Result<std::string> RenderTemplate(std::string_view text, const std::vector<Placeholder>& placeholders,
                                   const boost::json::value& input) {
  std::string out;
  out.reserve(text.size() + 64);
  std::size_t copied = 0;
  for (const auto& placeholder : placeholders) {
    out.append(text.substr(copied, placeholder.offset - copied));
    const boost::json::value* value = &input;
    for (const auto& segment : placeholder.path) {
      if (value == nullptr) break;
      const boost::json::value* next = nullptr;
      if (value->is_object()) {
        next = value->as_object().if_contains(segment);
      } else if (value->is_array() && !segment.empty() && segment.size() < 10 &&
                 segment.find_first_not_of("0123456789") == std::string::npos) {
        std::size_t index = std::stoul(segment);
        if (index < value->as_array().size()) next = &value->as_array()[index];
      }
      value = next;
    }
    if (value == nullptr) {
      // An optional property the input leaves out (the loader refuses
      // placeholders of properties the input_schema does not declare).
    } else if (value->is_string()) {
      out.append(value->as_string());
    } else {
      out.append(CompactJson(*value));
    }
    copied = placeholder.offset + placeholder.length;
  }
  out.append(text.substr(copied));
  return out;
}

}  // namespace skillrunner
