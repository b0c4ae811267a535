#include "services/generation/json_extract.h"

#include <algorithm>
#include <boost/json/error.hpp>
#include <boost/json/parser.hpp>
#include <boost/json/stream_parser.hpp>
#include <vector>

namespace skillrunner::generation {
namespace {

namespace json = boost::json;

constexpr std::size_t kMaxDepth = 256;
constexpr std::size_t kMaxCandidates = 8;
// Bytes the prose scan may feed the parser in total, so that adversarial
// text (thousands of unclosed brackets) stays linear.
constexpr std::size_t kMinScanBudget = std::size_t{1} << 20;
constexpr std::size_t kScanBudgetFactor = 8;

json::parse_options Options() {
  json::parse_options options;
  options.max_depth = kMaxDepth;
  return options;
}

struct Attempt {
  bool ok = false;
  json::value value;
  boost::system::error_code ec;
  std::size_t offset = 0;
};

Attempt ParseWhole(std::string_view text) {
  json::parser parser(json::storage_ptr(), Options());
  Attempt attempt;
  attempt.offset = parser.write(text.data(), text.size(), attempt.ec);
  if (!attempt.ec) {
    attempt.ok = true;
    attempt.value = parser.release();
  }
  return attempt;
}

bool IsBlank(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; });
}

ExtractError ErrorAt(std::string message, std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  ExtractError error{std::move(message), offset, 1, 1};
  for (std::size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++error.line;
      error.column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++error.column;
    }
  }
  error.message += " at line " + std::to_string(error.line) + ", column " + std::to_string(error.column);
  return error;
}

// What follows an opening ``` on its line: an info string ("json", "JSON",
// "jsonc", nothing) or already the content ("```{"a":1}```").
bool IsInfoString(std::string_view rest) {
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\t' || rest.back() == '\r')) rest.remove_suffix(1);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) rest.remove_prefix(1);
  return std::all_of(rest.begin(), rest.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
           c == '+' || c == '.' || c == '#';
  });
}

std::optional<json::value> FromFences(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t open = text.find("```", pos);
    if (open == std::string_view::npos) return std::nullopt;
    std::size_t after = open + 3;
    while (after < text.size() && text[after] == '`') ++after;
    std::size_t eol = text.find('\n', after);
    std::string_view rest = text.substr(after, eol == std::string_view::npos ? std::string_view::npos : eol - after);
    std::size_t start = after;
    if (IsInfoString(rest)) start = eol == std::string_view::npos ? text.size() : eol + 1;
    std::size_t close = text.find("```", start);
    std::size_t length = close == std::string_view::npos ? std::string_view::npos : close - start;
    std::string_view content = text.substr(start, length);
    if (!IsBlank(content)) {
      Attempt attempt = ParseWhole(content);
      if (attempt.ok) return std::move(attempt.value);
    }
    if (close == std::string_view::npos) return std::nullopt;
    pos = close + 3;
    while (pos < text.size() && text[pos] == '`') ++pos;
  }
  return std::nullopt;
}

struct Candidate {
  json::value value;
  std::size_t begin = 0;
};

// Objects and arrays that parse completely, left to right, not overlapping.
std::vector<Candidate> FindCandidates(std::string_view text) {
  std::vector<Candidate> found;
  std::size_t budget = std::max(kMinScanBudget, kScanBudgetFactor * text.size());
  std::size_t pos = 0;
  while (found.size() < kMaxCandidates) {
    std::size_t start = text.find_first_of("{[", pos);
    if (start == std::string_view::npos) break;
    json::stream_parser parser(json::storage_ptr(), Options());
    boost::system::error_code ec;
    std::size_t used = parser.write_some(text.data() + start, text.size() - start, ec);
    if (!ec && parser.done()) {
      found.push_back(Candidate{parser.release(), start});
      pos = start + std::max<std::size_t>(used, 1);
    } else {
      pos = start + 1;
    }
    if (used >= budget) break;
    budget -= used;
  }
  return found;
}

bool IsNumberList(const json::value& value) {
  if (!value.is_array()) return false;
  const json::array& items = value.get_array();
  return std::all_of(items.begin(), items.end(), [](const json::value& v) { return v.is_number(); });
}

}  // namespace

std::expected<Extracted, ExtractError> ExtractJson(std::string_view text) {
  if (IsBlank(text)) return std::unexpected(ExtractError{"the answer is empty", 0, 1, 1});
  Attempt whole = ParseWhole(text);
  if (whole.ok) return Extracted{std::move(whole.value), std::nullopt};
  if (auto fenced = FromFences(text)) return Extracted{std::move(*fenced), "fence"};
  // An answer that is JSON from its first character but ends before its value does was cut (a
  // token limit, a dropped stream): a complete object inside it is a fragment, not the answer (a
  // judge's verdict cut after its first criterion was taken for one and failed the schema).
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (whole.ec == json::error::incomplete && (text[first] == '{' || text[first] == '[')) {
    return std::unexpected(ErrorAt(whole.ec.message(), text, whole.offset));
  }
  std::vector<Candidate> candidates = FindCandidates(text);
  if (candidates.size() > 1) {
    std::vector<Candidate> meaningful;
    for (auto& candidate : candidates) {
      if (!IsNumberList(candidate.value)) meaningful.push_back(std::move(candidate));
    }
    if (meaningful.size() == 1) return Extracted{std::move(meaningful.front().value), "prose"};
    std::size_t second = meaningful.size() > 1 ? meaningful[1].begin : candidates[1].begin;
    return std::unexpected(ErrorAt("more than one JSON value: a second one starts", text, second));
  }
  if (candidates.size() == 1) return Extracted{std::move(candidates.front().value), "prose"};
  return std::unexpected(ErrorAt(whole.ec.message(), text, whole.offset));
}

}  // namespace skillrunner::generation
