#include "services/providers/retrying_provider.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <variant>
#include <vector>

#include "services/common/json_text.h"

namespace skillrunner::providers {
using std::chrono::milliseconds;

namespace {

double DefaultRandom() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

std::string Describe(const ProviderError& error) {
  std::string out;
  if (error.http_status > 0) out = "HTTP " + std::to_string(error.http_status);
  if (!error.message.empty() && error.message != out) {
    out += (out.empty() ? "" : ": ") + error.message;
  }
  return out;
}

// A 400 that names response_format (or, in tool mode, tools or
// tool_choice): the model cannot take that kind of structured output.
bool NamesResponseFormat(const ProviderError& error, const ResponseFormat& format) {
  if (error.http_status != 400) return false;
  std::vector<std::string_view> words{"response_format"};
  if (format.kind == ResponseFormat::Kind::kTool) words = {"tool_choice", "tools"};
  for (std::string_view word : words) {
    if (error.param.starts_with(word) || error.message.find(word) != std::string::npos) return true;
  }
  return false;
}

std::string_view StructuredModeName(const ResponseFormat& format) {
  switch (format.kind) {
    case ResponseFormat::Kind::kJsonSchema:
      return "native_strict";
    case ResponseFormat::Kind::kTool:
      return "tool";
    default:
      return "json_object";
  }
}

// The attempt that records one failed request.
Attempt FailedAttempt(const ChatRequest& request, const ProviderError& error, RequestTiming timing) {
  Attempt attempt;
  attempt.kind = AttemptKind::kTransient;
  attempt.role = request.metadata.role;
  attempt.model = request.model;
  attempt.provider = request.metadata.provider;
  attempt.temperature = request.temperature;
  attempt.raw = error.raw_body.empty() ? error.message : error.raw_body;
  attempt.errors.push_back({"", Describe(error)});
  if (error.http_status > 0) attempt.http_status = error.http_status;
  if (!error.reason.empty()) attempt.reason = error.reason;
  if (error.queued_ms > 0) attempt.queued_ms = error.queued_ms;
  attempt.waited_ms = timing.waited_ms;
  attempt.duration_ms = timing.duration_ms;
  if (request.metadata.price) attempt.cost_usd = 0.0;  // a failed request is not billed
  return attempt;
}

// How a failed request ends the call: the error, and whether its attempt
// goes into the log (a missing key or a cancellation made no real try).
struct Stop {
  Error error;
  bool record = true;
};

// A 429/529 that says waiting cannot help: the account's quota or credit is
// spent (OpenAI insufficient_quota, Anthropic billing errors, Gemini quota
// exhaustion).
bool QuotaSpent(const ProviderError& error) {
  // Gemini says "exceeded your current quota" of per-minute limits too; a
  // RetryInfo delay says waiting helps.
  if (error.code == "RESOURCE_EXHAUSTED" && error.retry_after) return false;
  for (std::string_view word : {"insufficient_quota", "billing_error", "billing_hard_limit_reached"}) {
    if (error.code == word || error.type == word) return true;
  }
  return error.message.find("exceeded your current quota") != std::string::npos ||
         error.message.find("credit balance is too low") != std::string::npos;
}

bool RateLimited(const ProviderError& error) { return error.IsRateLimited(); }

// A request that the invocation's deadline ended (its timeout was the time
// left, or the deadline's cancellation reached it): an attempt of kind
// timeout, and the invocation's TIMEOUT. Nullopt for any other failure.
std::optional<Stop> EndedByDeadline(const ProviderError& error, const ChatRequest& request, const AttemptSpan& span,
                                    const InvocationContext& ctx, Attempt& attempt) {
  // The request's timeout is the time left, in whole milliseconds rounded down.
  const bool timed_out =
      error.kind == ProviderError::Kind::kTimeout && span.started + request.timeout + milliseconds(1) >= ctx.deadline();
  const bool cancelled = error.kind == ProviderError::Kind::kCancelled && span.ended >= ctx.deadline();
  if (!timed_out && !cancelled) return std::nullopt;
  attempt.kind = AttemptKind::kTimeout;
  // As the runner says it when its own timer notices first.
  const auto limit = std::chrono::round<milliseconds>(ctx.deadline() - ctx.started());
  return Stop{
      ToError(error, ErrorCode::kTimeout, "invocation timed out after " + std::to_string(limit.count()) + " ms")};
}

// A failure that is not retried, or nullopt for a retryable one.
std::optional<Stop> Permanent(const ProviderError& error, const ChatRequest& request, Attempt& attempt) {
  if (error.kind == ProviderError::Kind::kConfig) {
    return Stop{ToError(error, ErrorCode::kConfigInvalid, error.message), false};
  }
  if (error.kind == ProviderError::Kind::kCancelled) {
    // The request in flight (or queued for the rate limit) stays on record.
    attempt.kind = AttemptKind::kCancelled;
    return Stop{ToError(error, ErrorCode::kCancelled, "cancelled")};
  }
  if (error.kind == ProviderError::Kind::kOverloaded) {
    attempt.kind = AttemptKind::kOverloaded;
    return Stop{ToError(error, ErrorCode::kOverloaded, error.message)};
  }
  if (RateLimited(error) && QuotaSpent(error)) {
    attempt.kind = AttemptKind::kProviderError;
    return Stop{ToError(error, ErrorCode::kProviderError,
                        "the provider's quota is spent, so waiting will not help: " + Describe(error))};
  }
  if (error.should_retry.value_or(error.retryable)) return std::nullopt;
  attempt.kind = AttemptKind::kProviderError;
  const ResponseFormat& format = request.response_format;
  if (format.kind != ResponseFormat::Kind::kNone && NamesResponseFormat(error, format)) {
    attempt.kind = AttemptKind::kDowngrade;
    attempt.errors = {{"", "the model does not support " + std::string(StructuredModeName(request.response_format)) +
                               " output; continuing with the validation loop: " + Describe(error)}};
    Error out = ToError(error, ErrorCode::kProviderError, "the provider refused the request: " + Describe(error));
    out.details["unsupported_response_format"] = true;
    return Stop{std::move(out)};
  }
  return Stop{ToError(error, ErrorCode::kProviderError,
                      error.kind == ProviderError::Kind::kProtocol
                          ? "the provider's answer could not be understood: " + error.message
                          : "the provider refused the request: " + Describe(error))};
}

// Where a failed request stands with its budget: how many retries of its
// kind were made, and how many are allowed.
struct Budget {
  bool rate_limited = false;
  int used = 0;
  int allowed = 0;
};

// The wait before the next try, or why there is none.
std::variant<milliseconds, Stop> NextDelay(const ProviderError& error, const TransientRetryPolicy& policy,
                                           const Budget& budget, double u, double spread,
                                           const InvocationContext& ctx) {
  if (budget.used >= budget.allowed) {
    const std::string still = budget.rate_limited ? "still rate limiting" : "still failing";
    return Stop{ToError(error, ErrorCode::kProviderUnavailable,
                        "the provider is " + still + " after " + std::to_string(budget.used) + " retr" +
                            (budget.used == 1 ? "y" : "ies") + ": " + Describe(error))};
  }
  milliseconds delay = RetryingProvider::Backoff(policy, budget.used, u);
  if (error.retry_after) {
    if (*error.retry_after > policy.max_server_delay) {
      return Stop{ToError(error, ErrorCode::kProviderUnavailable,
                          "the provider asked to retry after " + std::to_string(error.retry_after->count()) +
                              " ms, more than max_server_delay_ms (" + std::to_string(policy.max_server_delay.count()) +
                              "): " + Describe(error))};
    }
    delay = *error.retry_after;
  }
  // The server's delay is a floor (design.md §5.2): coming back sooner earns another refusal and
  // spends the quota it asked to be left alone. The spread that keeps the callers it sent away from
  // returning in one instant goes on top of it: up to a quarter of it, a second at most. A
  // rate limit without a delay takes the computed backoff plus up to a second.
  if (error.retry_after) {
    const double most = std::min(1000.0, static_cast<double>(delay.count()) / 4.0);
    delay += milliseconds(static_cast<std::int64_t>(spread * most));
  } else if (budget.rate_limited) {
    delay += milliseconds(static_cast<std::int64_t>(spread * 1000.0));
  }
  if (ctx.clock().Now() + delay >= ctx.deadline() && budget.rate_limited) {
    // The provider's next slot falls after the deadline: overloaded, at once.
    Error overloaded = ToError(error, ErrorCode::kOverloaded,
                               "the provider is rate limiting (" + Describe(error) + ") and its next slot, in " +
                                   std::to_string(delay.count()) + " ms, falls after the invocation deadline");
    overloaded.details["retry_after_ms"] = delay.count();
    return Stop{std::move(overloaded)};
  }
  if (ctx.clock().Now() + delay >= ctx.deadline()) {
    // As every TIMEOUT says it, then the provider's failure that left no time to retry.
    const auto limit = std::chrono::round<milliseconds>(ctx.deadline() - ctx.started());
    Error timed_out = ToError(error, ErrorCode::kTimeout,
                              "invocation timed out after " + std::to_string(limit.count()) +
                                  " ms: the provider failed (" + Describe(error) + ") with no time left to retry");
    timed_out.details["timeout_ms"] = limit.count();
    return Stop{std::move(timed_out)};
  }
  return delay;
}

// design.md §9.4: a call whose worst case (its input estimated, plus the whole
// output budget, at the model's price) could overrun what is left of the
// invocation's max_cost_usd is not made. Unpriced models are not counted.
std::optional<Error> OverBudget(const ChatRequest& request, const InvocationContext& ctx) {
  const auto& budget = ctx.options().max_cost_usd;
  const auto& price = request.metadata.price;
  if (!budget || !price) return std::nullopt;
  const Usage estimate = EstimatedUsage(request, "");
  const double worst = CostUsd(*price, estimate.input_tokens, 0, 0, request.max_output_tokens);
  const double spent = ctx.metrics().cost_usd.value_or(0);
  if (spent + worst <= *budget) return std::nullopt;
  char text[256];
  std::snprintf(text, sizeof text,
                "the next request to %s could cost up to $%.6f (about %lld input tokens and max_output_tokens %d), "
                "and $%.6f of max_cost_usd $%.6f is left",
                request.model.c_str(), worst, static_cast<long long>(estimate.input_tokens), request.max_output_tokens,
                std::max(0.0, *budget - spent), *budget);
  Error error{ErrorCode::kBudgetExceeded, text, {}, {}};
  error.details["max_cost_usd"] = *budget;
  error.details["spent_usd"] = spent;
  error.details["next_call_worst_usd"] = worst;
  return error;
}

// Readies `request` for its next try: the deadline and the budget still
// allow it, its number and trace parent; `span` starts. The error when not.
std::optional<Error> BeforeRequest(ChatRequest& request, AttemptSpan& span, InvocationContext& ctx) {
  const auto started = ctx.clock().Now();
  if (started >= ctx.deadline()) {
    return Error{ErrorCode::kTimeout, "the invocation deadline passed before the provider answered", {}, {}};
  }
  request.timeout = std::min(request.timeout, std::chrono::duration_cast<milliseconds>(ctx.deadline() - started));
  if (auto over = OverBudget(request, ctx)) return over;
  request.metadata.attempt = ctx.NextRequestNumber();
  span = AttemptSpan{};
  span.started = started;
  span.validation_retry = request.metadata.validation_retry;
  if (const auto& trace = ctx.trace()) {
    span.span_id = NewSpanId();
    request.metadata.traceparent = FormatTraceparent({trace->trace_id, span.span_id, "", trace->sampled});
  }
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("skill {}: request {} to {} ({}): {}", ctx.skill_id(), request.metadata.attempt,
                  request.metadata.provider, request.model, CompactJson(RequestForDisplay(request)));
  }
  return std::nullopt;
}

// An answer: its timing (the rate-limit queue is part of the wait before the
// request, not of its time) and span.
void Answered(ChatResponse& response, AttemptSpan span, InvocationContext& ctx) {
  response.timing = ctx.TimeRequest(span.started + milliseconds(response.queued_ms), span.ended);
  response.span = std::move(span);
  response.span.response_model = response.model;
  response.span.finish_reason = FinishReasonName(response.finish_reason);
}

// The rare error, boxed: a coroutine's locals are all in its frame, held
// for as long as the request is in flight.
std::unique_ptr<Error> Boxed(std::optional<Error> error) {
  return error ? std::make_unique<Error>(std::move(*error)) : nullptr;
}

// The error to end with, or null with `wait` set to the wait before the next try.
std::unique_ptr<Error> Boxed(std::variant<milliseconds, Error> next, milliseconds& wait) {
  if (auto* error = std::get_if<Error>(&next)) return std::make_unique<Error>(std::move(*error));
  wait = std::get<milliseconds>(next);
  return nullptr;
}

}  // namespace

Error ToError(const ProviderError& error, ErrorCode code, std::string message) {
  Error out{code, std::move(message), {}, {}};
  if (error.http_status > 0) out.details["http_status"] = error.http_status;
  if (!error.type.empty()) out.details["provider_type"] = error.type;
  if (!error.request_id.empty()) out.details["request_id"] = error.request_id;
  if (error.retry_after) out.details["retry_after_ms"] = error.retry_after->count();
  if (!error.param.empty()) out.details["provider_param"] = error.param;
  return out;
}

bool IsUnsupportedResponseFormat(const Error& error) {
  const auto* flag = error.details.if_contains("unsupported_response_format");
  return flag != nullptr && flag->is_bool() && flag->get_bool();
}

RetryingProvider::RetryingProvider(Provider& inner, RetryingProviderOptions options)
    : inner_(inner), options_(std::move(options)) {
  if (!options_.random) options_.random = DefaultRandom;
  if (!options_.spread) options_.spread = DefaultRandom;
}

milliseconds RetryingProvider::Backoff(const TransientRetryPolicy& policy, int retry, double u) {
  double base = static_cast<double>(policy.initial_delay.count()) * std::pow(policy.multiplier, retry);
  base = std::min(base, static_cast<double>(policy.max_delay.count()));
  return milliseconds(static_cast<std::int64_t>(std::llround(base * (1.0 - 0.25 * u))));
}

// The coroutine keeps only what crosses a request (its frame is part of
// every invocation in flight); the rest is done in plain functions.
boost::asio::awaitable<BoxedExpected<ChatResponse, Error>> RetryingProvider::Chat(ChatRequest& request,
                                                                                  const TransientRetryPolicy& policy,
                                                                                  InvocationContext& ctx) {
  Spent spent;
  AttemptSpan span;
  for (;;) {
    if (auto refused = Boxed(BeforeRequest(request, span, ctx))) co_return std::unexpected(std::move(*refused));
    auto response = co_await inner_.Chat(request);
    span.ended = ctx.clock().Now();
    if (response) {
      Answered(*response, std::move(span), ctx);
      co_return std::move(*response);
    }
    milliseconds wait{};
    if (auto error = Boxed(AfterFailure(response.error(), request, policy, spent, span, ctx), wait)) {
      co_return std::unexpected(std::move(*error));
    }
    if (!co_await ctx.clock().Sleep(wait)) {
      co_return Fail(ErrorCode::kCancelled, "cancelled");
    }
  }
}

std::variant<milliseconds, Error> RetryingProvider::AfterFailure(const ProviderError& error, const ChatRequest& request,
                                                                 const TransientRetryPolicy& policy, Spent& spent,
                                                                 const AttemptSpan& span, InvocationContext& ctx) {
  const RequestTiming timing = ctx.TimeRequest(span.started + milliseconds(error.queued_ms), span.ended);
  Attempt attempt = FailedAttempt(request, error, timing);
  attempt.span = span;
  if (ctx.options().show_request) attempt.request = RequestForDisplay(request);
  std::optional<Stop> stop = EndedByDeadline(error, request, span, ctx, attempt);
  if (!stop) stop = Permanent(error, request, attempt);
  if (!stop) {
    const bool rate_limited = RateLimited(error);
    int& used = rate_limited ? spent.rate_limit_retries : spent.retries;
    Budget budget{rate_limited, used, rate_limited ? policy.max_rate_limit_retries : policy.max_retries};
    auto next = NextDelay(error, policy, budget, options_.random(), options_.spread(), ctx);
    if (auto* delay = std::get_if<milliseconds>(&next)) {
      ++used;
      attempt.delay_ms = delay->count();
      spdlog::info("skill {}: provider request failed ({}); retry {} of {} in {} ms", ctx.skill_id(), Describe(error),
                   used, budget.allowed, delay->count());
      ctx.AddAttempt(std::move(attempt));
      ++ctx.metrics().transient_retries;
      return *delay;
    }
    stop = std::move(std::get<Stop>(next));
  }
  if (stop->record) ctx.AddAttempt(std::move(attempt));
  return std::move(stop->error);
}

}  // namespace skillrunner::providers
