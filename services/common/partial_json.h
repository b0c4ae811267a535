#pragma once

// An incremental JSON parser for answers that arrive in pieces (design.md §10.7):
// after each piece, the value so far and the JSON pointers of the members
// that are complete.

#include <boost/json/value.hpp>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace boost::json {
class object;
class array;
class string;
}  // namespace boost::json

namespace skillrunner {

// Feed it the text as it arrives, split anywhere (inside a token, an escape
// or a UTF-8 character). Text before the root value is skipped when it does
// not start like JSON ("```json", "Here it is: {"): the root starts at the
// first `{` or `[` then. Text after the root value is ignored.
//
// value() is what is parsed so far: unfinished strings as far as they go
// (never half a UTF-8 character or escape), unfinished numbers and literals
// and unfinished keys left out. complete() lists, in the order they ended,
// the pointers of the values that are whole (a string once its closing
// quote came, a number once something followed it, a container once it
// closed; "" for the root). Once the text cannot be JSON, failed() is true
// and nothing changes any more. Not thread-safe.
class PartialJson {
 public:
  PartialJson();
  PartialJson(const PartialJson&) = delete;
  PartialJson& operator=(const PartialJson&) = delete;

  void Feed(std::string_view text);
  // The end of the text: a number that ends the root value completes.
  void Finish();

  const boost::json::value& value() const { return root_; }
  const std::vector<std::string>& complete() const { return complete_; }
  bool started() const { return state_ != State::kBeforeRoot; }
  bool done() const { return state_ == State::kDone; }
  bool failed() const { return state_ == State::kFailed; }
  // True when value() or complete() changed since the last call.
  bool TakeChanged();

 private:
  enum class State {
    kBeforeRoot,
    kSkipProse,
    kValue,
    kValueOrEnd,
    kKeyOrEnd,
    kKey,
    kColon,
    kCommaOrEnd,
    kString,
    kEscape,
    kUnicode,
    kNumber,
    kLiteral,
    kDone,
    kFailed,
  };
  struct Frame {
    boost::json::object* object = nullptr;  // one of the two
    boost::json::array* array = nullptr;
    std::string key;  // objects: the member being read
  };

  void Step(char c);
  void StepStructural(char c);
  void StepValueStart(char c);
  void StepString(char c);
  void StepEscape(char c);
  void StepUnicode(char c);
  void StepScalar(char c);
  void StartString(bool is_key);
  void AppendText(std::string_view text);
  void AppendByte(char c);
  void AppendCodePoint(unsigned code_point);
  void EndString();
  void EndNumber();
  boost::json::value& Place(boost::json::value value);
  void OpenContainer(bool object);
  void CloseContainer(bool object);
  void Completed();
  void AfterValue();
  void Fail() { state_ = State::kFailed; }

  boost::json::value root_;
  std::vector<Frame> stack_;
  std::vector<std::string> path_;  // tokens of the current slot (one per open container)
  std::vector<std::string> complete_;
  State state_ = State::kBeforeRoot;
  bool in_key_ = false;
  boost::json::string* text_ = nullptr;  // the string value being read (not keys)
  std::string key_;                      // the key being read
  std::string pending_utf8_;             // a UTF-8 character not yet whole
  std::string scalar_;                   // the number or literal being read
  std::string hex_;                      // the \u escape being read
  unsigned high_surrogate_ = 0;
  bool changed_ = false;
};

}  // namespace skillrunner
