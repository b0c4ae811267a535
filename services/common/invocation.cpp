#include "services/common/invocation.h"

#include <algorithm>
#include <atomic>

#include "services/common/stream_events.h"

namespace skillrunner {
namespace json = boost::json;

std::string_view AttemptKindName(AttemptKind kind) {
  switch (kind) {
    case AttemptKind::kOk:
      return "ok";
    case AttemptKind::kTransient:
      return "transient";
    case AttemptKind::kParse:
      return "parse";
    case AttemptKind::kValidation:
      return "validation";
    case AttemptKind::kRule:
      return "rule";
    case AttemptKind::kReview:
      return "review";
    case AttemptKind::kTruncated:
      return "truncated";
    case AttemptKind::kRefusal:
      return "refusal";
    case AttemptKind::kContentFilter:
      return "content_filter";
    case AttemptKind::kProviderError:
      return "provider_error";
    case AttemptKind::kDowngrade:
      return "downgrade";
    case AttemptKind::kTimeout:
      return "timeout";
    case AttemptKind::kHandler:
      return "handler";
    case AttemptKind::kOverloaded:
      return "overloaded";
    case AttemptKind::kCancelled:
      return "cancelled";
  }
  return "ok";
}

std::string_view AttemptRoleName(AttemptRole role) {
  switch (role) {
    case AttemptRole::kNone:
      return "";
    case AttemptRole::kGeneration:
      return "generation";
    case AttemptRole::kJudge:
      return "judge";
  }
  return "";
}

std::string_view OutputModeName(OutputMode mode) {
  switch (mode) {
    case OutputMode::kNative:
      return "native";
    case OutputMode::kJsonObject:
      return "json_object";
    case OutputMode::kNone:
      return "none";
    case OutputMode::kTool:
      return "tool";
  }
  return "none";
}

std::optional<OutputMode> ParseOutputMode(std::string_view word) {
  for (OutputMode mode : {OutputMode::kNative, OutputMode::kJsonObject, OutputMode::kNone, OutputMode::kTool}) {
    if (OutputModeName(mode) == word) return mode;
  }
  return std::nullopt;
}

std::string_view RunModeName(RunMode mode) {
  switch (mode) {
    case RunMode::kUnset:
      return "";
    case RunMode::kNativeStrict:
      return "native_strict";
    case RunMode::kJsonObject:
      return "json_object";
    case RunMode::kValidationLoop:
      return "validation_loop";
    case RunMode::kHandler:
      return "handler";
    case RunMode::kTool:
      return "tool";
  }
  return "";
}

RunMode RunModeFor(OutputMode mode) {
  switch (mode) {
    case OutputMode::kNative:
      return RunMode::kNativeStrict;
    case OutputMode::kJsonObject:
      return RunMode::kJsonObject;
    case OutputMode::kNone:
      return RunMode::kValidationLoop;
    case OutputMode::kTool:
      return RunMode::kTool;
  }
  return RunMode::kValidationLoop;
}

double CostUsd(const Price& price, std::int64_t input, std::int64_t cached, std::int64_t cache_write,
               std::int64_t output) {
  const double fresh = static_cast<double>(std::max<std::int64_t>(0, input - cached - cache_write));
  return (fresh * price.input + static_cast<double>(cached) * price.cached_input.value_or(price.input) +
          static_cast<double>(cache_write) * price.cache_write.value_or(price.input) +
          static_cast<double>(output) * price.output) /
         1e6;
}

Price BatchPrice(const Price& price) {
  Price batch = price;
  batch.input = price.batch_input.value_or(price.input / 2);
  batch.output = price.batch_output.value_or(price.output / 2);
  const double ratio = price.input > 0 ? batch.input / price.input : 0.5;
  if (price.cached_input) batch.cached_input = *price.cached_input * ratio;
  if (price.cache_write) batch.cache_write = *price.cache_write * ratio;
  return batch;
}

// A batched attempt's share of the batch and online costs (design.md §10.6).
void AddBatchCosts(Metrics& metrics, const Attempt& attempt) {
  if (!attempt.batch_id.empty()) metrics.batched = true;
  auto add = [](std::optional<double>& sum, std::optional<double> usd) {
    if (usd) sum = sum.value_or(0) + *usd;
  };
  if (!attempt.batch_id.empty()) add(metrics.batch_cost_usd, attempt.cost_usd);
  add(metrics.online_cost_usd, attempt.batch_id.empty() ? attempt.cost_usd : attempt.online_cost_usd);
}

void InvocationContext::AddAttempt(Attempt attempt) {
  attempt.n = first_number_ + static_cast<int>(attempts_.size());
  metrics_.attempts = attempt.n;
  metrics_.input_tokens += attempt.input_tokens;
  metrics_.cached_input_tokens += attempt.cached_input_tokens;
  if (attempt.cost_usd) {
    metrics_.cost_usd = metrics_.cost_usd.value_or(0) + *attempt.cost_usd;
    metrics_.cost_by_model[attempt.model] += *attempt.cost_usd;
  }
  AddBatchCosts(metrics_, attempt);
  metrics_.output_tokens += attempt.output_tokens;
  metrics_.tokens_estimated = metrics_.tokens_estimated || attempt.tokens_estimated;
  if (!attempt.model.empty()) {
    metrics_.model = attempt.model;
    metrics_.provider = attempt.provider;
  }
  attempts_.push_back(std::move(attempt));
  if (attempt_observer_) attempt_observer_(attempts_.back());
}

std::function<void(const Attempt&)> ResetOnAbandon(StreamEvents& events) {
  return [&events](const Attempt& attempt) {
    if (attempt.n != events.shown_attempt()) return;
    const bool retried = attempt.kind == AttemptKind::kTransient && attempt.delay_ms.has_value();
    const bool rejected = attempt.kind == AttemptKind::kParse || attempt.kind == AttemptKind::kValidation ||
                          attempt.kind == AttemptKind::kRule || attempt.kind == AttemptKind::kReview;
    if (retried || rejected) events.Reset(attempt.n, AttemptKindName(attempt.kind), attempt.errors);
  };
}

InvocationContext::InvocationContext(std::string skill_id, InvocationOptions options, TimePoint deadline, Clock& clock)
    : skill_id_(std::move(skill_id)),
      options_(std::move(options)),
      deadline_(deadline),
      clock_(&clock),
      started_(clock.Now()) {
  static std::atomic<std::uint64_t> next_id{0};
  invocation_id_ = "inv-" + std::to_string(++next_id);
}

InvocationContext InvocationContext::Fork(int held) const {
  InvocationContext forked(skill_id_, options_, deadline_, *clock_);
  forked.invocation_id_ = invocation_id_;
  forked.first_number_ = NextRequestNumber() + held;
  forked.trace_ = trace_;
  forked.started_ = started_;
  forked.last_request_end_ms_ = last_request_end_ms_;
  return forked;
}

RequestTiming InvocationContext::TimeRequest(TimePoint sent, TimePoint ended) {
  auto since_start = [this](TimePoint t) {
    return std::max<std::int64_t>(0, std::chrono::duration_cast<std::chrono::milliseconds>(t - started_).count());
  };
  const std::int64_t sent_ms = std::max(since_start(sent), last_request_end_ms_);
  const std::int64_t ended_ms = std::max(since_start(ended), sent_ms);
  RequestTiming timing{sent_ms - last_request_end_ms_, ended_ms - sent_ms};
  last_request_end_ms_ = ended_ms;
  return timing;
}

void InvocationContext::Join(InvocationContext&& forked) {
  for (Attempt& attempt : forked.attempts_) AddAttempt(std::move(attempt));
  metrics_.validation_retries += forked.metrics_.validation_retries;
  metrics_.transient_retries += forked.metrics_.transient_retries;
  metrics_.fallbacks += forked.metrics_.fallbacks;
  metrics_.escalated = metrics_.escalated || forked.metrics_.escalated;
  last_request_end_ms_ = std::max(last_request_end_ms_, forked.last_request_end_ms_);
}

namespace {

json::array ErrorsToJson(const std::vector<FieldError>& errors) {
  json::array out;
  out.reserve(errors.size());
  for (const auto& e : errors) out.push_back(json::object{{"path", e.path}, {"message", e.message}});
  return out;
}

json::array AttemptsToJson(const std::vector<Attempt>& attempts) {
  json::array out;
  out.reserve(attempts.size());
  for (const auto& a : attempts) out.push_back(ToJson(a));
  return out;
}

}  // namespace

json::value ToJson(const Attempt& a) {
  json::object out;
  out["n"] = a.n;
  out["kind"] = AttemptKindName(a.kind);
  if (a.role != AttemptRole::kNone) out["role"] = AttemptRoleName(a.role);
  if (!a.model.empty()) out["model"] = a.model;
  if (!a.provider.empty()) out["provider"] = a.provider;
  if (a.pass) out["pass"] = *a.pass;
  out["temperature"] = a.temperature ? json::value(*a.temperature) : json::value(nullptr);
  out["errors"] = ErrorsToJson(a.errors);
  out["raw"] = a.raw;
  if (a.http_status) out["http_status"] = *a.http_status;
  if (a.reason) out["reason"] = *a.reason;
  out["waited_ms"] = a.waited_ms;
  if (a.delay_ms) out["delay_ms"] = *a.delay_ms;
  if (a.queued_ms) out["queued_ms"] = *a.queued_ms;
  if (a.repair) out["repair"] = *a.repair;
  if (!a.coerced.empty()) {
    json::array coerced;
    for (const auto& pointer : a.coerced) coerced.emplace_back(pointer);
    out["coerced"] = std::move(coerced);
  }
  if (a.max_output_tokens) out["max_output_tokens"] = *a.max_output_tokens;
  out["input_tokens"] = a.input_tokens;
  if (a.cached_input_tokens > 0) out["cached_input_tokens"] = a.cached_input_tokens;
  out["output_tokens"] = a.output_tokens;
  // LLM attempts: the cost at the model's price, null when it has none.
  if (!a.model.empty()) out["cost_usd"] = a.cost_usd ? json::value(*a.cost_usd) : json::value(nullptr);
  if (a.tokens_estimated) out["tokens_estimated"] = true;
  if (a.from_cache) out["from_cache"] = true;
  if (a.aborted_early) out["aborted_early"] = true;
  if (a.native_violation) out["native_violation"] = true;
  if (a.native_downgrade) out["native_downgrade"] = true;
  if (!a.batch_id.empty()) {
    out["batch"] = a.batch_id;
    out["online_cost_usd"] = a.online_cost_usd ? json::value(*a.online_cost_usd) : json::value(nullptr);
  }
  out["duration_ms"] = a.duration_ms;
  if (a.request) out["request"] = *a.request;
  return out;
}

json::value ToJson(const Metrics& m) {
  json::object out;
  out["mode"] = RunModeName(m.mode);
  if (!m.provider.empty()) out["provider"] = m.provider;
  if (!m.model.empty()) out["model"] = m.model;
  out["attempts"] = m.attempts;
  out["validation_retries"] = m.validation_retries;
  out["transient_retries"] = m.transient_retries;
  out["fallbacks"] = m.fallbacks;
  out["escalated"] = m.escalated;
  out["input_tokens"] = m.input_tokens;
  if (m.cached_input_tokens > 0) out["cached_input_tokens"] = m.cached_input_tokens;
  out["output_tokens"] = m.output_tokens;
  out["cost_usd"] = m.cost_usd ? json::value(*m.cost_usd) : json::value(nullptr);
  if (m.batched) {
    out["batch_cost_usd"] = m.batch_cost_usd ? json::value(*m.batch_cost_usd) : json::value(nullptr);
    out["online_cost_usd"] = m.online_cost_usd ? json::value(*m.online_cost_usd) : json::value(nullptr);
  }
  out["tokens_estimated"] = m.tokens_estimated;
  out["duration_ms"] = m.duration_ms;
  return out;
}

namespace {

void AddServed(const Served& served, json::object& out) {
  if (served.version > 0) out["skill_version"] = served.version;
  if (!served.arm.empty()) out["arm"] = served.arm;
}

}  // namespace

json::value ToJson(const InvocationResult& r) {
  json::object out;
  out["skill"] = r.skill;
  AddServed(r.served, out);
  out["output"] = r.output;
  if (r.review) out["review"] = *r.review;
  out["attempts"] = AttemptsToJson(r.attempts);
  out["metrics"] = ToJson(r.metrics);
  return out;
}

json::value ErrorToJson(const InvocationFailure& f) {
  json::object out;
  out["code"] = ErrorCodeName(f.error.code);
  out["message"] = f.error.message;
  if (!f.error.errors.empty()) out["errors"] = ErrorsToJson(f.error.errors);
  if (!f.error.details.empty()) out["details"] = f.error.details;
  // Whichever layer refused, an overloaded call says when to come back.
  if (f.error.code == ErrorCode::kOverloaded) {
    if (const json::value* after = f.error.details.if_contains("retry_after_ms")) out["retry_after_ms"] = *after;
  }
  AddServed(f.served, out);
  out["attempts"] = AttemptsToJson(f.attempts);
  out["metrics"] = ToJson(f.metrics);
  return out;
}

bool ReviewFailed(const json::value& review) {
  const json::object* verdict = review.if_object();
  const json::value* pass = verdict != nullptr ? verdict->if_contains("pass") : nullptr;
  return pass != nullptr && pass->is_bool() && !pass->get_bool();
}

json::value ToJson(const InvocationOutcome& outcome) {
  if (outcome) return ToJson(*outcome);
  return json::object{{"error", ErrorToJson(outcome.error())}};
}

}  // namespace skillrunner
