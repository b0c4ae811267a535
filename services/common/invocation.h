#pragma once

// The attempt log of one invocation (design.md §6.1): every try, in order, with
// what it cost; and the words the front doors print for them.

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/clock.h"
#include "services/common/error.h"
#include "services/common/trace_context.h"

namespace skillrunner {

class StreamEvents;  // services/common/stream_events.h

// What one attempt came to (design.md §6.1 "attempt.kind").
enum class AttemptKind {
  kOk,
  kTransient,
  kParse,
  kValidation,
  kRule,  // schema-valid, rejected by one of the skill's validators (design.md §9.2)
  kReview,
  kTruncated,
  kRefusal,
  kContentFilter,
  kProviderError,
  kDowngrade,
  kTimeout,
  kHandler,
  kOverloaded,  // not sent: the provider's rate limit had no slot before the deadline
  kCancelled,   // in flight (or queued for the rate limit) when the caller cancelled
};
// ok|transient|parse|validation|rule|review|truncated|refusal|content_filter|
// provider_error|downgrade|timeout|handler|overloaded|cancelled
std::string_view AttemptKindName(AttemptKind kind);

// Whose attempt it is (design.md §9.8 "role"): the skill's own generation or a
// judge's; kNone for handler attempts.
enum class AttemptRole { kNone, kGeneration, kJudge };
// ""|generation|judge
std::string_view AttemptRoleName(AttemptRole role);

// How structured output is obtained (design.md §6.2 `structured_output`).
enum class OutputMode { kNative, kJsonObject, kNone, kTool };
// native|json_object|none|tool, as written in the config and descriptors.
std::string_view OutputModeName(OutputMode mode);
std::optional<OutputMode> ParseOutputMode(std::string_view word);

// How an invocation ran (design.md §6.1 "metrics.mode"); kUnset before a service
// has said (an unknown skill, an input that failed its schema).
enum class RunMode { kUnset, kNativeStrict, kJsonObject, kValidationLoop, kHandler, kTool };
// ""|native_strict|json_object|validation_loop|handler|tool
std::string_view RunModeName(RunMode mode);
RunMode RunModeFor(OutputMode mode);

// A model's price (design.md §9.4 `price`), USD per million tokens.
struct Price {
  double input = 0;
  std::optional<double> cached_input;  // input tokens read from the provider's cache (default: input)
  double output = 0;
  std::optional<double> cache_write;  // input tokens written to the cache (Anthropic; default: input)
  // design.md §10.6: inside a provider's batch (default: half of input and output).
  std::optional<double> batch_input;
  std::optional<double> batch_output;
};

// The price of a request answered inside a batch: batch_input and
// batch_output (default half the online ones); cached input and cache writes
// at their online price x batch_input / input.
Price BatchPrice(const Price& price);

// What `input` tokens (of which `cached` were read from the cache and
// `cache_write` written to it) and `output` tokens cost at `price`, in USD.
double CostUsd(const Price& price, std::int64_t input, std::int64_t cached, std::int64_t cache_write,
               std::int64_t output);

// Where a provider request sits in the invocation's trace (design.md §9.4).
// Never printed with the attempt: the trace exporter reads it.
struct AttemptSpan {
  std::string span_id;  // 16 hex digits, also sent in `traceparent`; empty when not traced
  Clock::TimePoint started{};
  Clock::TimePoint ended{};
  std::string response_model;     // as the provider reported it
  std::string finish_reason;      // stop|length|...; empty when no answer came
  bool validation_retry = false;  // the request fed back a rejected answer's errors
};

// One try at producing the output (design.md §6.1 "attempt").
struct Attempt {
  int n = 0;
  AttemptKind kind = AttemptKind::kOk;
  AttemptRole role = AttemptRole::kNone;
  std::string model;                          // what answered; empty for handlers
  std::string provider;                       // the provider name of the config; empty for handlers
  std::optional<bool> pass;                   // judge attempts that gave a verdict: the pass it came to
  std::optional<boost::json::value> request;  // with InvocationOptions::show_request
  std::optional<double> temperature;
  std::vector<FieldError> errors;
  std::string raw;
  std::optional<int> http_status;
  std::optional<std::string> reason;  // transient attempts: malformed_body when the kind alone does not say
  // The wait before this attempt's request went out, since the previous
  // attempt ended (the invocation's start for the first): the backoff or
  // retry-after (the previous attempt's delay_ms), the rate-limit queue
  // (queued_ms) and the work between. waited_ms + duration_ms over the
  // attempts add up to the invocation's time.
  std::int64_t waited_ms = 0;
  std::optional<std::int64_t> delay_ms;   // the backoff this attempt's failure asked for before the next
  std::optional<std::int64_t> queued_ms;  // waited for the provider's rate limit before the request went out
  std::optional<std::string> repair;      // fence|prose|coerce (fence,coerce: both)
  std::vector<std::string> coerced;       // repair coerce: the pointers of the values converted
  std::optional<int> max_output_tokens;
  std::int64_t input_tokens = 0;
  std::int64_t cached_input_tokens = 0;  // of input_tokens, served from the provider's prompt cache
  std::int64_t output_tokens = 0;
  std::optional<double> cost_usd;  // at the model's price; none when the model has no price
  bool tokens_estimated = false;
  bool from_cache = false;  // eval --cache answered it: no request was made, nothing was paid
  // design.md §10.7: a streamed answer stopped as soon as a complete member broke
  // the schema (its tokens are the part that arrived).
  bool aborted_early = false;
  // design.md §11.5: in native or tool mode, the answer broke the schema the provider was sent
  // (native_violation), and this one was the third in ten minutes that sent the model to the loop.
  bool native_violation = false;
  bool native_downgrade = false;
  std::int64_t duration_ms = 0;           // the request's own time, from when it went out to its answer
  AttemptSpan span;                       // LLM attempts of a traced invocation
  std::string batch_id;                   // answered inside this batch (design.md §10.6)
  std::optional<double> online_cost_usd;  // batched: what it would have cost online
};

struct Metrics {
  RunMode mode = RunMode::kUnset;
  std::string provider;  // of the last attempt that had one
  std::string model;
  int attempts = 0;
  int validation_retries = 0;
  int transient_retries = 0;
  int fallbacks = 0;       // models given up on for the next of their `fallbacks` (design.md §9.3)
  bool escalated = false;  // one more generation ran on the model's `escalate_to`
  // design.md §11.5: the model this invocation sent to the validation loop for the process's life
  // (its strict mode failed a third time within ten minutes); empty when none.
  std::string native_downgraded;
  std::int64_t input_tokens = 0;
  std::int64_t cached_input_tokens = 0;  // of input_tokens, served from the provider's prompt cache
  std::int64_t output_tokens = 0;
  std::optional<double> cost_usd;  // the sum over priced attempts; none when no model used had a price
  // design.md §10.6: set when an attempt was answered inside a batch: what the
  // batched attempts cost, and what every attempt would have cost online.
  bool batched = false;
  std::optional<double> batch_cost_usd;
  std::optional<double> online_cost_usd;
  std::map<std::string, double, std::less<>> cost_by_model;  // the same, per model (Prometheus)
  bool tokens_estimated = false;
  std::int64_t duration_ms = 0;
};

// Per-call options from the CLI, the socket or an eval case.
// Which case of an eval, and which repeat of it, an invocation runs. Shared by
// the invocation's options and each of its requests: most invocations are no
// eval's, and a pointer is all they carry.
struct EvalTag {
  std::string case_id;
  int repeat = 0;
  // The suite's `redact:` pointers ("/input/...", "/output/..."): masked in the spans' captured
  // content, whose prompt and answer texts are then left out (design.md §12.3).
  std::vector<std::string> redact;
};

struct InvocationOptions {
  std::optional<std::chrono::milliseconds> timeout;  // overrides the skill's
  // Sent to providers as request metadata; the simulated provider seeds its
  // answers with it.
  std::optional<std::uint64_t> seed;
  // Agent workflows: validation errors of earlier invocations of the same
  // skill in this session are fed forward as "avoid these mistakes".
  std::optional<std::string> session;
  // Each LLM attempt carries the request it made (`request`: messages,
  // response_format, temperature, max_output_tokens; never a key).
  bool show_request = false;
  // design.md §9.4: what the whole invocation may cost in USD (never above the
  // skill's own max_cost_usd); checked against each provider call's worst case.
  std::optional<double> max_cost_usd;
  // design.md §9.4: the caller's W3C traceparent; the invocation's span is its child.
  std::optional<TraceContext> traceparent;
  // design.md §10.7: the output streams to these events as it is generated (the
  // skill's own generations only); not owned, outlives the invocation.
  StreamEvents* stream = nullptr;
  // An eval's case and repeat (design.md §10.6: batch requests are recorded by
  // them); null outside evals.
  std::shared_ptr<const EvalTag> eval;
  // design.md §11.2: what a rollout assigns this call by (before the input's
  // sticky value and the session); the same key keeps the same arm.
  std::optional<std::string> routing_key;
  // Runs this version of the skill (its stable one or its candidate's); a
  // pinned call is not counted by the rollout.
  std::optional<int> version;
};

// How long one request waited before it went out and how long it took.
struct RequestTiming {
  std::int64_t waited_ms = 0;
  std::int64_t duration_ms = 0;
};

// An output with the attempt that produced it, not yet recorded: whoever
// decides how that attempt ends (accepted, rejected by the output schema or
// by a review) records it, once. `attempt` is empty when every attempt is
// recorded already. The attempt is boxed: a Result<Produced> passes through
// every coroutine frame between the service and the runner, and each of
// them would otherwise hold room for a whole Attempt while it waits.
struct Produced {
  boost::json::value value;
  std::unique_ptr<Attempt> attempt;
};

// What the services build up while they work on one invocation. Attempts are
// appended, numbered, and never changed afterwards. Not thread-safe: one
// invocation runs as one coroutine chain.
class InvocationContext {
 public:
  using TimePoint = Clock::TimePoint;

  InvocationContext(std::string skill_id, InvocationOptions options, TimePoint deadline, Clock& clock);

  // Unique in this process ("inv-1", "inv-2", ...); a fork keeps its parent's.
  const std::string& invocation_id() const { return invocation_id_; }
  const std::string& skill_id() const { return skill_id_; }
  const InvocationOptions& options() const { return options_; }
  TimePoint deadline() const { return deadline_; }
  Clock& clock() const { return *clock_; }

  // Times a request that went out at `sent` and ended at `ended`: its wait
  // since the previous request of this invocation ended (the invocation's
  // start for the first) and its own duration. The next request's wait
  // counts from `ended`. Both are differences of whole milliseconds since
  // the start, so that over the attempts they add up to the time up to the
  // last request's end.
  RequestTiming TimeRequest(TimePoint sent, TimePoint ended);
  // When the invocation started (default: the context's creation).
  void set_started(TimePoint started) { started_ = started; }
  // A deadline that starts again (a handler's, once its process place is free).
  void set_deadline(TimePoint deadline) { deadline_ = deadline; }
  TimePoint started() const { return started_; }

  // Appends an attempt, numbering it, and adds its tokens to the metrics; the
  // observer (if any) sees it next.
  void AddAttempt(Attempt attempt);
  // Called with each attempt as AddAttempt records it (not copied by Fork).
  void set_attempt_observer(std::function<void(const Attempt&)> observer) { attempt_observer_ = std::move(observer); }
  const std::vector<Attempt>& attempts() const { return attempts_; }
  std::vector<Attempt> TakeAttempts() { return std::move(attempts_); }

  // The number the next provider request of this invocation carries (from
  // 1, transient retries included): it counts the attempts held by callers
  // of a Fork as well.
  int NextRequestNumber() const { return first_number_ + static_cast<int>(attempts_.size()); }

  // A context for work that runs while `held` attempts of this one are not
  // yet recorded (a generation's output waiting for its review): same skill,
  // options, deadline and clock; its attempts are numbered after the held
  // ones. Join it back after recording them.
  InvocationContext Fork(int held) const;
  // Appends a forked context's attempts and adds its retry counts and tokens;
  // this context's mode stays.
  void Join(InvocationContext&& forked);

  Metrics& metrics() { return metrics_; }
  const Metrics& metrics() const { return metrics_; }

  // Facts a service leaves for an error the runner may still raise about its
  // output (a handler's exit_status and stderr_tail).
  boost::json::object& details() { return details_; }

  // The review verdict of a gated generation (design.md §6.1 "review").
  std::optional<boost::json::value>& review() { return review_; }

  // The invocation's own span (design.md §9.4) when it is traced: provider
  // requests are its children and carry `traceparent`.
  const std::optional<TraceContext>& trace() const { return trace_; }
  void set_trace(TraceContext trace) { trace_ = std::move(trace); }

 private:
  std::string invocation_id_;
  std::string skill_id_;
  InvocationOptions options_;
  TimePoint deadline_;
  Clock* clock_;
  int first_number_ = 1;
  TimePoint started_{};
  std::int64_t last_request_end_ms_ = 0;  // since started_
  std::vector<Attempt> attempts_;
  Metrics metrics_;
  boost::json::object details_;
  std::optional<boost::json::value> review_;
  std::optional<TraceContext> trace_;
  std::function<void(const Attempt&)> attempt_observer_;
};

// The attempt observer of a streamed invocation: an attempt whose partials were shown, recorded
// as failed with a retry to follow (a transient failure waiting its backoff; an answer that failed
// to parse, its schema, a validator or the review), gets its skills.reset at once, not when the
// next attempt's first text arrives (after the backoff, or never when the retries end in an
// error). A provider failure that ends the request is left to the next attempt, which names it
// (it may be a fallback); a final error answer implies the reset.
std::function<void(const Attempt&)> ResetOnAbandon(StreamEvents& events);

// Which version of a skill answered (design.md §11.2): its `version`, and the
// arm of its rollout ("stable" | "candidate"; empty without a rollout).
// Version 0: no skill was found to answer.
struct Served {
  int version = 0;
  std::string_view arm;  // a literal
};

struct InvocationResult {
  std::string skill;
  boost::json::value output;
  std::optional<boost::json::value> review;
  std::vector<Attempt> attempts;
  Metrics metrics;
  Served served{};
};

struct InvocationFailure {
  Error error;
  std::vector<Attempt> attempts;
  Metrics metrics;
  Served served{};
};

using InvocationOutcome = std::expected<InvocationResult, InvocationFailure>;

// Whether a review verdict ({pass, ...}) says the reviewed answer failed: a gated result that
// is served all the same (outcome "review_failed", exit status 5).
bool ReviewFailed(const boost::json::value& review);

boost::json::value ToJson(const Attempt& attempt);
boost::json::value ToJson(const Metrics& metrics);
// success: {"skill","skill_version"?,"arm"?,"output","review"?,"attempts","metrics"}
boost::json::value ToJson(const InvocationResult& result);
// The inner error object: {"code","message","errors"?,"details"?,"skill_version"?,"arm"?,"attempts","metrics"}
boost::json::value ErrorToJson(const InvocationFailure& failure);
// {"error": ErrorToJson(...)} or the success shape.
boost::json::value ToJson(const InvocationOutcome& outcome);

}  // namespace skillrunner
