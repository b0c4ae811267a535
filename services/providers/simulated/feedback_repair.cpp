#include "services/providers/simulated/feedback_repair.h"

#include <boost/json/parse.hpp>
#include <boost/json/stream_parser.hpp>

#include "services/providers/simulated/instance_edit.h"

namespace skillrunner::providers::simulation {
namespace {

namespace json = boost::json;

constexpr int kMaxStarts = 8;  // '{' / '[' positions tried in prose

std::string_view Trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

std::optional<FeedbackError> ParseLine(std::string_view line) {
  line = Trim(line);
  if (!line.starts_with("- ")) return std::nullopt;
  line.remove_prefix(2);
  if (line.starts_with("(root)")) {
    line.remove_prefix(6);
    if (line.starts_with(":")) line.remove_prefix(1);
    return FeedbackError{"", std::string(Trim(line))};
  }
  if (!line.starts_with("/")) return std::nullopt;
  std::size_t colon = line.find(": ");
  std::string_view pointer = line.substr(0, colon);
  std::string_view message = colon == std::string_view::npos ? "" : line.substr(colon + 2);
  if (pointer.ends_with(":")) pointer.remove_suffix(1);
  return FeedbackError{std::string(pointer), std::string(Trim(message))};
}

std::optional<json::value> ParseWhole(std::string_view text) {
  boost::system::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec) return std::nullopt;
  return value;
}

// The first complete JSON value at the start of `text`; what follows is ignored.
std::optional<json::value> ParsePrefix(std::string_view text) {
  json::stream_parser parser;
  boost::system::error_code ec;
  parser.write_some(text.data(), text.size(), ec);
  if (ec || !parser.done()) return std::nullopt;
  return parser.release();
}

std::string NameFor(const std::vector<std::string>& tokens) {
  for (auto it = tokens.rbegin(); it != tokens.rend(); ++it) {
    bool index = !it->empty() && it->find_first_not_of("0123456789") == std::string::npos;
    if (!index) return *it;
  }
  return "";
}

bool IsEmpty(const json::value& value) {
  return value.is_null() || (value.is_string() && value.get_string().empty()) ||
         (value.is_array() && value.get_array().empty()) || (value.is_object() && value.get_object().empty());
}

// A new value for what an error named: one that differs from `current` (when
// there is one) and is not empty, if a few tries find one.
json::value Regenerate(const std::vector<std::string>& tokens, const json::value& schema, InstanceGenerator& generator,
                       const json::value* current = nullptr) {
  constexpr int kTries = 8;
  json::value value;
  for (int i = 0; i < kTries; ++i) {
    value = generator.GenerateFor(schema, NameFor(tokens), static_cast<int>(tokens.size()));
    if (!IsEmpty(value) && (current == nullptr || value != *current)) break;
  }
  return value;
}

void RepairOne(json::value& answer, const std::vector<std::string>& tokens, const std::string& message,
               InstanceGenerator& generator) {
  const SchemaWalker& walker = generator.walker();
  // The deepest prefix of `tokens` that exists in the answer.
  std::size_t present = 0;
  for (; present < tokens.size(); ++present) {
    std::vector<std::string> prefix(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(present) + 1);
    if (Find(answer, prefix) == nullptr) break;
  }
  if (present == tokens.size()) {
    const json::value* schema = walker.SchemaAt(tokens);
    if (schema == nullptr || message.starts_with("unexpected property")) {
      Remove(answer, tokens);
    } else {
      json::value current = *Find(answer, tokens);
      Put(answer, tokens, Regenerate(tokens, *schema, generator, &current));
    }
    return;
  }
  std::vector<std::string> missing(tokens.begin(), tokens.begin() + static_cast<std::ptrdiff_t>(present) + 1);
  const json::value* schema = walker.SchemaAt(missing);
  if (schema == nullptr) return;  // not allowed there: nothing to add
  if (Put(answer, missing, Regenerate(missing, *schema, generator))) return;
  // The parent is a scalar where a container belongs: regenerate the parent.
  missing.pop_back();
  if (const json::value* parent = walker.SchemaAt(missing)) {
    Put(answer, missing, Regenerate(missing, *parent, generator));
  }
}

}  // namespace

std::optional<RepairRequest> FindRepairRequest(const std::vector<ChatMessage>& messages) {
  std::size_t last = messages.size();
  for (std::size_t i = messages.size(); i-- > 0;) {
    if (messages[i].role == "assistant") {
      last = i;
      break;
    }
  }
  RepairRequest request;
  if (last < messages.size()) {
    request.previous_answer = messages[last].content;
  } else {
    const std::size_t n = messages.size();
    if (n < 2 || messages[n - 1].role != "user" || messages[n - 2].role != "user") return std::nullopt;
    request.fresh = true;
    last = n - 2;
  }
  for (std::size_t i = last + 1; i < messages.size(); ++i) {
    if (messages[i].role != "user") continue;
    std::string_view content = messages[i].content;
    while (!content.empty()) {
      std::size_t end = content.find('\n');
      if (auto error = ParseLine(content.substr(0, end))) request.errors.push_back(std::move(*error));
      if (end == std::string_view::npos) break;
      content.remove_prefix(end + 1);
    }
  }
  if (request.errors.empty()) return std::nullopt;
  return request;
}

std::optional<json::value> ExtractJson(std::string_view text) {
  if (auto whole = ParseWhole(text)) return whole;
  if (std::size_t fence = text.find("```"); fence != std::string_view::npos) {
    std::size_t body = text.find('\n', fence);
    std::size_t close = body == std::string_view::npos ? body : text.find("```", body);
    if (close != std::string_view::npos) {
      if (auto inner = ParseWhole(text.substr(body + 1, close - body - 1))) return inner;
    }
  }
  std::size_t start = text.find_first_of("{[");
  for (int tries = 0; start != std::string_view::npos && tries < kMaxStarts; ++tries) {
    if (auto value = ParsePrefix(text.substr(start))) return value;
    start = text.find_first_of("{[", start + 1);
  }
  return std::nullopt;
}

void Repair(json::value& answer, const std::vector<FeedbackError>& errors, InstanceGenerator& generator) {
  for (const auto& error : errors) {
    std::vector<std::string> tokens;
    if (!ParsePointer(error.pointer, tokens)) continue;
    if (tokens.empty()) {
      answer = generator.Generate();
      return;
    }
    RepairOne(answer, tokens, error.message, generator);
  }
}

}  // namespace skillrunner::providers::simulation
