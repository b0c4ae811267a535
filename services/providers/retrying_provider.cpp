#include "services/providers/retrying_provider.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <variant>

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

// A 400 that names response_format: the model cannot take structured output.
bool NamesResponseFormat(const ProviderError& error) {
  if (error.http_status != 400) return false;
  if (error.param.starts_with("response_format")) return true;
  return error.message.find("response_format") != std::string::npos;
}

std::string_view StructuredModeName(const ResponseFormat& format) {
  return format.kind == ResponseFormat::Kind::kJsonSchema ? "native_strict" : "json_object";
}

// The attempt that records one failed request.
Attempt FailedAttempt(const ChatRequest& request, const ProviderError& error, std::int64_t duration_ms) {
  Attempt attempt;
  attempt.kind = AttemptKind::kTransient;
  attempt.role = request.metadata.role;
  attempt.model = request.model;
  attempt.provider = request.metadata.provider;
  attempt.temperature = request.temperature;
  attempt.raw = error.raw_body.empty() ? error.message : error.raw_body;
  attempt.errors.push_back({"", Describe(error)});
  if (error.http_status > 0) attempt.http_status = error.http_status;
  attempt.duration_ms = duration_ms;
  return attempt;
}

// How a failed request ends the call: the error, and whether its attempt
// goes into the log (a missing key or a cancellation made no real try).
struct Stop {
  Error error;
  bool record = true;
};

// A failure that is not retried, or nullopt for a retryable one.
std::optional<Stop> Permanent(const ProviderError& error, const ChatRequest& request, Attempt& attempt) {
  if (error.kind == ProviderError::Kind::kConfig) {
    return Stop{ToError(error, ErrorCode::kConfigInvalid, error.message), false};
  }
  if (error.kind == ProviderError::Kind::kCancelled) {
    return Stop{ToError(error, ErrorCode::kCancelled, "cancelled"), false};
  }
  if (error.should_retry.value_or(error.retryable)) return std::nullopt;
  attempt.kind = AttemptKind::kProviderError;
  if (request.response_format.kind != ResponseFormat::Kind::kNone && NamesResponseFormat(error)) {
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

// The wait before the next try, or why there is none.
std::variant<milliseconds, Stop> NextDelay(const ProviderError& error, const TransientRetryPolicy& policy,
                                           int retry, double u, const InvocationContext& ctx) {
  if (retry >= policy.max_retries) {
    return Stop{ToError(error, ErrorCode::kProviderUnavailable,
                        "the provider is still failing after " + std::to_string(retry) + " retr" +
                            (retry == 1 ? "y" : "ies") + ": " + Describe(error))};
  }
  milliseconds delay = RetryingProvider::Backoff(policy, retry, u);
  if (error.retry_after) {
    if (*error.retry_after > policy.max_server_delay) {
      return Stop{ToError(error, ErrorCode::kProviderUnavailable,
                          "the provider asked to retry after " + std::to_string(error.retry_after->count()) +
                              " ms, more than max_server_delay_ms (" +
                              std::to_string(policy.max_server_delay.count()) + "): " + Describe(error))};
    }
    delay = *error.retry_after;
  }
  if (ctx.clock().Now() + delay >= ctx.deadline()) {
    return Stop{ToError(error, ErrorCode::kTimeout,
                        "the invocation deadline leaves no time for the " + std::to_string(delay.count()) +
                            " ms wait before the next try: " + Describe(error))};
  }
  return delay;
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
}

milliseconds RetryingProvider::Backoff(const TransientRetryPolicy& policy, int retry, double u) {
  double base = static_cast<double>(policy.initial_delay.count()) * std::pow(policy.multiplier, retry);
  base = std::min(base, static_cast<double>(policy.max_delay.count()));
  return milliseconds(static_cast<std::int64_t>(std::llround(base * (1.0 - 0.25 * u))));
}

boost::asio::awaitable<Result<ChatResponse>> RetryingProvider::Chat(
    ChatRequest request, const TransientRetryPolicy& policy, InvocationContext& ctx) {
  Clock& clock = ctx.clock();
  for (int retry = 0;; ++retry) {
    auto started = clock.Now();
    if (started >= ctx.deadline()) {
      co_return Fail(ErrorCode::kTimeout, "the invocation deadline passed before the provider answered");
    }
    request.timeout = std::min(request.timeout, std::chrono::duration_cast<milliseconds>(ctx.deadline() - started));
    request.metadata.attempt = ctx.NextRequestNumber();
    if (spdlog::should_log(spdlog::level::debug)) {
      spdlog::debug("skill {}: request {} to {} ({}): {}", ctx.skill_id(), request.metadata.attempt,
                    request.metadata.provider, request.model, CompactJson(RequestForDisplay(request)));
    }
    auto response = co_await inner_.Chat(request);
    if (response) co_return std::move(*response);

    const ProviderError& error = response.error();
    Attempt attempt = FailedAttempt(request, error, clock.ElapsedMs(started));
    if (ctx.options().show_request) attempt.request = RequestForDisplay(request);
    std::optional<Stop> stop = Permanent(error, request, attempt);
    if (!stop) {
      auto next = NextDelay(error, policy, retry, options_.random(), ctx);
      if (auto* delay = std::get_if<milliseconds>(&next)) {
        attempt.delay_ms = delay->count();
        spdlog::info("skill {}: provider request failed ({}); retry {} of {} in {} ms", ctx.skill_id(),
                     Describe(error), retry + 1, policy.max_retries, delay->count());
        ctx.AddAttempt(std::move(attempt));
        ++ctx.metrics().transient_retries;
        if (!co_await clock.Sleep(*delay)) co_return Fail(ErrorCode::kCancelled, "cancelled");
        continue;
      }
      stop = std::move(std::get<Stop>(next));
    }
    if (stop->record) ctx.AddAttempt(std::move(attempt));
    co_return std::unexpected(std::move(stop->error));
  }
}

}  // namespace skillrunner::providers
