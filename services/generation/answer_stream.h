#pragma once

// One generation's answer streamed to the invocation's StreamEvents
// (design.md §10.7): partials per attempt, a reset before a retry that follows
// shown partials, and early abort when a complete member breaks the schema.

#include <boost/json/value.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/invocation.h"
#include "services/common/partial_json.h"
#include "services/common/stream_events.h"
#include "services/generation/stream_check.h"
#include "services/providers/provider.h"

namespace skillrunner::generation {

class AnswerStream {
 public:
  AnswerStream(StreamEvents& events, InvocationContext& ctx) : events_(events), ctx_(ctx) {}
  AnswerStream(const AnswerStream&) = delete;
  AnswerStream& operator=(const AnswerStream&) = delete;

  // Before each request: sets request.on_text. `check` (may be null: nothing
  // is checked) is the schema complete members are checked against, as the
  // model writes its answer; `wrapped`: the answer is {"value": OUTPUT}, and
  // the partials show OUTPUT.
  void Arm(providers::ChatRequest& request, const boost::json::value* check, bool skip_nulls, bool wrapped);
  // After an answer came: a provider that did not stream gets its whole text
  // shown as one partial.
  void Answered(const providers::ChatResponse& answer);
  // The errors that stopped the stream (empty unless it was stopped early).
  const std::vector<FieldError>& abort_errors() const { return abort_errors_; }
  // The next reset names this reason instead of the attempt's kind.
  void OverrideReason(std::string reason) { reason_ = std::move(reason); }

 private:
  bool Text(std::string_view piece);
  void StartAttempt(int n);
  void Show();

  StreamEvents& events_;
  InvocationContext& ctx_;
  const boost::json::value* check_schema_ = nullptr;
  bool skip_nulls_ = false;
  bool wrapped_ = false;
  int attempt_ = 0;  // the attempt being parsed
  bool got_text_ = false;
  std::optional<PartialJson> parsed_;
  std::optional<StreamCheck> check_;
  std::vector<FieldError> abort_errors_;
  std::optional<std::string> reason_;
};

}  // namespace skillrunner::generation
