#include "runner/invocation.h"

namespace skillrunner {
void InvocationContext::AddAttempt(Attempt attempt) {
  attempt.n = static_cast<int>(attempts_.size()) + 1;
  metrics_.attempts = attempt.n;
  metrics_.input_tokens += attempt.input_tokens;
  metrics_.output_tokens += attempt.output_tokens;
  metrics_.tokens_estimated = metrics_.tokens_estimated || attempt.tokens_estimated;
  attempts_.push_back(std::move(attempt));
}
}  // namespace skillrunner
