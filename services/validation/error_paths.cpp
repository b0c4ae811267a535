#include "services/validation/error_paths.h"

#include <boost/url/decode_view.hpp>
#include <boost/url/pct_string_view.hpp>
#include <charconv>

namespace skillrunner::validation {

std::string DecodeUriFragment(std::string_view text) {
  auto encoded = boost::urls::make_pct_string_view(text);
  if (!encoded) return std::string(text);
  boost::urls::decode_view decoded = **encoded;
  return std::string(decoded.begin(), decoded.end());
}

std::vector<std::string> ContextTokens(const std::vector<std::string>& context) {
  std::vector<std::string> tokens;
  for (std::size_t i = 0; i < context.size(); ++i) {
    const std::string& part = context[i];
    if (i == 0 && part == "<root>") continue;
    // valijson writes "[" + name + "]" without escaping, so only the outer
    // brackets are syntax.
    if (part.size() >= 2 && part.front() == '[' && part.back() == ']') {
      tokens.push_back(part.substr(1, part.size() - 2));
    } else {
      tokens.push_back(part);
    }
  }
  return tokens;
}

const boost::json::value* FindByTokens(const boost::json::value& root, const std::vector<std::string>& tokens) {
  const boost::json::value* current = &root;
  for (const auto& token : tokens) {
    if (const auto* object = current->if_object()) {
      auto it = object->find(token);
      if (it == object->end()) return nullptr;
      current = &it->value();
    } else if (const auto* array = current->if_array()) {
      std::size_t index = 0;
      auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), index);
      if (ec != std::errc() || end != token.data() + token.size() || index >= array->size()) {
        return nullptr;
      }
      current = &(*array)[index];
    } else {
      return nullptr;
    }
  }
  return current;
}

}  // namespace skillrunner::validation
