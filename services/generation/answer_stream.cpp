#include "services/generation/answer_stream.h"

#include <boost/json/object.hpp>

namespace skillrunner::generation {
namespace json = boost::json;

void AnswerStream::Arm(providers::ChatRequest& request, const json::value* check, bool skip_nulls, bool wrapped) {
  check_schema_ = check;
  skip_nulls_ = skip_nulls;
  wrapped_ = wrapped;
  attempt_ = 0;
  abort_errors_.clear();
  request.on_text = [this](std::string_view piece) { return Text(piece); };
}

// A new attempt's first text: the one shown before it was abandoned gets
// its reset (reason: how its attempt ended, as recorded).
void AnswerStream::StartAttempt(int n) {
  attempt_ = n;
  got_text_ = false;
  parsed_.emplace();
  check_.reset();
  if (check_schema_ != nullptr) check_.emplace(*check_schema_, skip_nulls_);
  const int shown = events_.shown_attempt();
  if (shown == 0 || shown == n) return;
  std::string reason = reason_.value_or("review");
  std::vector<FieldError> errors;
  for (const Attempt& attempt : ctx_.attempts()) {
    if (attempt.n != shown) continue;
    if (!reason_) reason = std::string(AttemptKindName(attempt.kind));
    errors = attempt.errors;
  }
  reason_.reset();
  events_.Reset(shown, reason, errors);
}

bool AnswerStream::Text(std::string_view piece) {
  const int n = ctx_.NextRequestNumber();
  if (n != attempt_) StartAttempt(n);
  got_text_ = true;
  parsed_->Feed(piece);
  if (!parsed_->TakeChanged()) return true;
  Show();
  if (!check_) return true;
  abort_errors_ = check_->CheckNew(*parsed_);
  if (wrapped_) {
    for (FieldError& error : abort_errors_) error.path = error.path.substr(std::min<std::size_t>(6, error.path.size()));
  }
  return abort_errors_.empty();
}

void AnswerStream::Show() {
  if (!wrapped_) return events_.Partial(attempt_, parsed_->value(), parsed_->complete());
  const json::object* root = parsed_->value().if_object();
  const json::value* inner = root != nullptr ? root->if_contains("value") : nullptr;
  std::vector<std::string> complete;
  for (const std::string& pointer : parsed_->complete()) {
    if (pointer == "/value" || pointer.starts_with("/value/")) complete.push_back(pointer.substr(6));
  }
  events_.Partial(attempt_, inner != nullptr ? *inner : json::value(), complete);
}

void AnswerStream::Answered(const providers::ChatResponse& answer) {
  if (answer.stopped_early) return;
  const int n = ctx_.NextRequestNumber();
  if (n == attempt_ && got_text_) {
    parsed_->Finish();
    if (parsed_->TakeChanged()) Show();
  } else {
    StartAttempt(n);
    parsed_->Feed(answer.text);
    parsed_->Finish();
    if (parsed_->TakeChanged()) Show();
  }
  events_.Flush();  // the whole answer is shown before it is checked
}

}  // namespace skillrunner::generation
