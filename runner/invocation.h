#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <string>
#include <vector>

#include "runner/error.h"

namespace skillrunner {

// One try at producing the output (DESIGN §6.1 "attempt").
struct Attempt {
  int n = 0;
  std::string kind;  // ok|transient|parse|validation|review|truncated|refusal|
                     // content_filter|provider_error|downgrade|timeout|handler
  std::optional<double> temperature;
  std::vector<FieldError> errors;
  std::string raw;
  std::optional<int> http_status;
  std::optional<std::int64_t> delay_ms;
  std::optional<std::string> repair;  // fence|prose
  std::optional<int> max_output_tokens;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  bool tokens_estimated = false;
  std::int64_t duration_ms = 0;
};

struct Metrics {
  std::string mode;  // native_strict|json_object|validation_loop|handler
  int attempts = 0;
  int validation_retries = 0;
  int transient_retries = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  bool tokens_estimated = false;
  std::int64_t duration_ms = 0;
};

// Per-call options from the CLI, the socket or an eval case.
struct InvocationOptions {
  std::optional<std::chrono::milliseconds> timeout;  // overrides the skill's
  std::optional<std::uint64_t> seed;                 // simulated provider
  // Agent workflows: validation errors of earlier invocations of the same
  // skill in this session are fed forward as "avoid these mistakes".
  std::optional<std::string> session;
};

// What a service builds up while it works on one invocation. Not thread-safe:
// one invocation runs as one coroutine chain.
class InvocationContext {
 public:
  using Clock = std::chrono::steady_clock;

  InvocationContext(std::string skill_id, InvocationOptions options,
                    Clock::time_point deadline)
      : skill_id_(std::move(skill_id)),
        options_(std::move(options)),
        deadline_(deadline) {}

  const std::string& skill_id() const { return skill_id_; }
  const InvocationOptions& options() const { return options_; }
  Clock::time_point deadline() const { return deadline_; }

  // Appends an attempt, numbering it, and adds its tokens to the metrics.
  void AddAttempt(Attempt attempt);
  const std::vector<Attempt>& attempts() const { return attempts_; }
  Attempt* last_attempt() { return attempts_.empty() ? nullptr : &attempts_.back(); }
  Attempt* attempt_at(std::size_t index) { return index < attempts_.size() ? &attempts_[index] : nullptr; }
  std::vector<Attempt> TakeAttempts() { return std::move(attempts_); }

  Metrics& metrics() { return metrics_; }

  // Facts a service leaves for an error the runner may still raise about its
  // output (a handler's exit_status and stderr_tail).
  boost::json::object& details() { return details_; }

  // The review verdict of a gated generation (DESIGN §6.1 "review"); the
  // runner copies it into InvocationResult::review.
  std::optional<boost::json::value>& review() { return review_; }

 private:
  std::string skill_id_;
  InvocationOptions options_;
  Clock::time_point deadline_;
  std::vector<Attempt> attempts_;
  Metrics metrics_;
  boost::json::object details_;
  std::optional<boost::json::value> review_;
};

struct InvocationResult {
  std::string skill;
  boost::json::value output;
  std::optional<boost::json::value> review;
  std::vector<Attempt> attempts;
  Metrics metrics;
};

struct InvocationFailure {
  Error error;
  std::vector<Attempt> attempts;
  Metrics metrics;
};

using InvocationOutcome = std::expected<InvocationResult, InvocationFailure>;

boost::json::value ToJson(const Attempt& attempt);
boost::json::value ToJson(const Metrics& metrics);
// success: {"skill","output","review"?,"attempts","metrics"}
boost::json::value ToJson(const InvocationResult& result);
// The inner error object: {"code","message","errors"?,"details"?,"attempts","metrics"}
boost::json::value ErrorToJson(const InvocationFailure& failure);
// {"error": ErrorToJson(...)} or the success shape.
boost::json::value ToJson(const InvocationOutcome& outcome);

}  // namespace skillrunner
