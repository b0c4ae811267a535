#include "services/common/json_pointer.h"

namespace skillrunner {
namespace {

// "a~1b" -> "a/b"; false for a malformed escape.
bool UnescapeToken(std::string_view raw, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '~') {
      out.push_back(raw[i]);
      continue;
    }
    if (i + 1 >= raw.size() || (raw[i + 1] != '0' && raw[i + 1] != '1')) return false;
    out.push_back(raw[i + 1] == '0' ? '~' : '/');
    ++i;
  }
  return true;
}

}  // namespace

std::string EscapePointerToken(std::string_view token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

std::string AppendPointer(std::string_view pointer, std::string_view token) {
  std::string out(pointer);
  out.push_back('/');
  out += EscapePointerToken(token);
  return out;
}

std::string MakePointer(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& token : tokens) {
    out.push_back('/');
    out += EscapePointerToken(token);
  }
  return out;
}

bool ParsePointer(std::string_view pointer, std::vector<std::string>& tokens) {
  tokens.clear();
  if (pointer.empty()) return true;
  if (pointer.front() != '/') return false;
  std::size_t start = 1;
  while (true) {
    std::size_t end = pointer.find('/', start);
    std::string_view raw = pointer.substr(start, end == std::string_view::npos ? end : end - start);
    std::string token;
    if (!UnescapeToken(raw, token)) return false;
    tokens.push_back(std::move(token));
    if (end == std::string_view::npos) return true;
    start = end + 1;
  }
}

bool MaskAt(boost::json::value& root, std::string_view pointer, std::string_view mask) {
  boost::system::error_code ec;
  boost::json::value* found = pointer.empty() ? &root : root.find_pointer(pointer, ec);
  if (found == nullptr) return false;
  *found = boost::json::string(mask);
  return true;
}

std::optional<std::string_view> PointerUnder(std::string_view pointer, std::string_view root) {
  if (!pointer.starts_with(root) || (pointer.size() > root.size() && pointer[root.size()] != '/')) return std::nullopt;
  return pointer.substr(root.size());
}

}  // namespace skillrunner
