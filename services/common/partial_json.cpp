#include "services/common/partial_json.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/string.hpp>

#include "services/common/json_pointer.h"

namespace skillrunner {
namespace json = boost::json;

namespace {

constexpr std::size_t kMaxDepth = 256;
constexpr unsigned kReplacement = 0xFFFD;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNumberChar(char c) { return IsDigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// How many bytes the UTF-8 character led by `lead` has (1 for a byte that
// cannot lead one: it is passed through as it is).
std::size_t Utf8Length(unsigned char lead) {
  if (lead >= 0xC0 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF7) return 4;
  return 1;
}

bool IsLiteralPrefix(std::string_view text) {
  for (std::string_view word : {"true", "false", "null"}) {
    if (word.substr(0, text.size()) == text) return true;
  }
  return false;
}

}  // namespace

PartialJson::PartialJson() = default;

void PartialJson::Feed(std::string_view text) {
  for (char c : text) {
    if (state_ == State::kDone || state_ == State::kFailed) return;
    Step(c);
  }
}

void PartialJson::Finish() {
  if (state_ == State::kNumber && stack_.empty()) EndNumber();
}

bool PartialJson::TakeChanged() {
  bool changed = changed_;
  changed_ = false;
  return changed;
}

void PartialJson::Step(char c) {
  switch (state_) {
    case State::kString:
      return StepString(c);
    case State::kEscape:
      return StepEscape(c);
    case State::kUnicode:
      return StepUnicode(c);
    case State::kNumber:
    case State::kLiteral:
      return StepScalar(c);
    case State::kDone:
    case State::kFailed:
      return;
    case State::kBeforeRoot:
      if (IsSpace(c)) return;
      if (c == '{' || c == '[' || c == '"' || c == '-' || IsDigit(c)) return StepValueStart(c);
      state_ = State::kSkipProse;
      return;
    case State::kSkipProse:
      if (c == '{' || c == '[') StepValueStart(c);
      return;
    default:
      if (!IsSpace(c)) StepStructural(c);
  }
}

void PartialJson::StepStructural(char c) {
  const bool in_object = !stack_.empty() && stack_.back().object != nullptr;
  switch (state_) {
    case State::kValueOrEnd:
      if (c == ']') return CloseContainer(false);
      return StepValueStart(c);
    case State::kValue:
      return StepValueStart(c);
    case State::kKeyOrEnd:
      if (c == '}') return CloseContainer(true);
      if (c == '"') return StartString(true);
      return Fail();
    case State::kKey:
      if (c == '"') return StartString(true);
      return Fail();
    case State::kColon:
      if (c == ':') {
        state_ = State::kValue;
        return;
      }
      return Fail();
    case State::kCommaOrEnd:
      if (c == ',') {
        state_ = in_object ? State::kKey : State::kValue;
        return;
      }
      if (c == '}' || c == ']') return CloseContainer(c == '}');
      return Fail();
    default:
      return Fail();
  }
}

void PartialJson::StepValueStart(char c) {
  if (!stack_.empty() && stack_.back().array != nullptr) path_.back() = std::to_string(stack_.back().array->size());
  if (c == '{' || c == '[') return OpenContainer(c == '{');
  if (c == '"') return StartString(false);
  if (c == '-' || IsDigit(c)) {
    scalar_.assign(1, c);
    state_ = State::kNumber;
    return;
  }
  if (c == 't' || c == 'f' || c == 'n') {
    scalar_.assign(1, c);
    state_ = State::kLiteral;
    return;
  }
  Fail();
}

json::value& PartialJson::Place(json::value value) {
  changed_ = true;
  if (stack_.empty()) {
    root_ = std::move(value);
    return root_;
  }
  Frame& top = stack_.back();
  if (top.object != nullptr) return (*top.object)[top.key] = std::move(value);
  top.array->push_back(std::move(value));
  return top.array->back();
}

void PartialJson::OpenContainer(bool object) {
  if (stack_.size() >= kMaxDepth) return Fail();
  json::value& placed = Place(object ? json::value(json::object()) : json::value(json::array()));
  Frame frame;
  if (object) {
    frame.object = &placed.as_object();
  } else {
    frame.array = &placed.as_array();
  }
  stack_.push_back(std::move(frame));
  path_.emplace_back();
  state_ = object ? State::kKeyOrEnd : State::kValueOrEnd;
}

void PartialJson::CloseContainer(bool object) {
  if (stack_.empty() || (stack_.back().object != nullptr) != object) return Fail();
  stack_.pop_back();
  path_.pop_back();
  Completed();
  AfterValue();
}

void PartialJson::Completed() {
  complete_.push_back(MakePointer(path_));
  changed_ = true;
}

void PartialJson::AfterValue() { state_ = stack_.empty() ? State::kDone : State::kCommaOrEnd; }

void PartialJson::StartString(bool is_key) {
  in_key_ = is_key;
  if (is_key) {
    key_.clear();
  } else {
    text_ = &Place(json::string()).as_string();
  }
  state_ = State::kString;
}

void PartialJson::StepString(char c) {
  if (c == '"') return EndString();
  if (c == '\\') {
    state_ = State::kEscape;
    return;
  }
  if (static_cast<unsigned char>(c) < 0x20) return Fail();
  AppendByte(c);
}

void PartialJson::AppendText(std::string_view text) {
  if (in_key_) {
    key_.append(text);
  } else {
    text_->append(text);
    changed_ = true;
  }
}

// Holds a UTF-8 character back until its last byte came.
void PartialJson::AppendByte(char c) {
  if (high_surrogate_ != 0) AppendCodePoint(kReplacement);
  const auto byte = static_cast<unsigned char>(c);
  if ((byte & 0xC0) == 0x80 && !pending_utf8_.empty()) {
    pending_utf8_.push_back(c);
    if (pending_utf8_.size() < Utf8Length(static_cast<unsigned char>(pending_utf8_[0]))) return;
    AppendText(pending_utf8_);
    pending_utf8_.clear();
    return;
  }
  if (!pending_utf8_.empty()) {  // a character cut short: passed on as it came
    AppendText(pending_utf8_);
    pending_utf8_.clear();
  }
  if (Utf8Length(byte) > 1) {
    pending_utf8_.push_back(c);
    return;
  }
  AppendText(std::string_view(&c, 1));
}

void PartialJson::AppendCodePoint(unsigned cp) {
  high_surrogate_ = 0;
  char out[4];
  std::size_t n = 0;
  if (cp < 0x80) {
    out[n++] = static_cast<char>(cp);
  } else if (cp < 0x800) {
    out[n++] = static_cast<char>(0xC0 | (cp >> 6));
    out[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out[n++] = static_cast<char>(0xE0 | (cp >> 12));
    out[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out[n++] = static_cast<char>(0xF0 | (cp >> 18));
    out[n++] = static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out[n++] = static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out[n++] = static_cast<char>(0x80 | (cp & 0x3F));
  }
  AppendText(std::string_view(out, n));
}

void PartialJson::StepEscape(char c) {
  state_ = State::kString;
  if (c == 'u') {
    hex_.clear();
    state_ = State::kUnicode;
    return;
  }
  static constexpr std::string_view kFrom = "\"\\/bfnrt";
  static constexpr std::string_view kTo = "\"\\/\b\f\n\r\t";
  std::size_t at = kFrom.find(c);
  if (at == std::string_view::npos) return Fail();
  AppendByte(kTo[at]);
}

void PartialJson::StepUnicode(char c) {
  if (!IsHex(c)) return Fail();
  hex_.push_back(c);
  if (hex_.size() < 4) return;
  state_ = State::kString;
  const auto cp = static_cast<unsigned>(std::stoul(hex_, nullptr, 16));
  if (cp >= 0xD800 && cp <= 0xDBFF) {
    if (high_surrogate_ != 0) AppendCodePoint(kReplacement);
    high_surrogate_ = cp;
  } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
    const unsigned high = high_surrogate_;
    high_surrogate_ = 0;
    AppendCodePoint(high == 0 ? kReplacement : 0x10000 + ((high - 0xD800) << 10) + (cp - 0xDC00));
  } else {
    if (high_surrogate_ != 0) AppendCodePoint(kReplacement);
    AppendCodePoint(cp);
  }
}

void PartialJson::EndString() {
  if (!pending_utf8_.empty()) {
    AppendText(pending_utf8_);
    pending_utf8_.clear();
  }
  if (high_surrogate_ != 0) AppendCodePoint(kReplacement);
  if (in_key_) {
    in_key_ = false;
    stack_.back().key = key_;
    path_.back() = key_;
    state_ = State::kColon;
    return;
  }
  text_ = nullptr;
  Completed();
  AfterValue();
}

void PartialJson::StepScalar(char c) {
  if (state_ == State::kNumber) {
    if (IsNumberChar(c)) {
      scalar_.push_back(c);
      return;
    }
    EndNumber();
    if (state_ != State::kFailed && state_ != State::kDone) Step(c);
    return;
  }
  scalar_.push_back(c);
  if (!IsLiteralPrefix(scalar_)) return Fail();
  if (scalar_ != "true" && scalar_ != "false" && scalar_ != "null") return;
  Place(scalar_ == "null" ? json::value(nullptr) : json::value(scalar_ == "true"));
  Completed();
  AfterValue();
}

void PartialJson::EndNumber() {
  boost::system::error_code ec;
  json::value number = json::parse(scalar_, ec);
  if (ec || !number.is_number()) return Fail();
  Place(std::move(number));
  Completed();
  AfterValue();
}

}  // namespace skillrunner
