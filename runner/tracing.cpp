#include "runner/tracing.h"

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

#include "services/common/json_pointer.h"

namespace skillrunner {
namespace json = boost::json;
using telemetry::Attribute;
using telemetry::Span;

namespace {

void Add(Span& span, std::string key, telemetry::AttributeValue value) {
  span.attributes.push_back(Attribute{std::move(key), std::move(value)});
}

void AddUsage(Span& span, std::int64_t input, std::int64_t cached, std::int64_t output,
              const std::optional<double>& cost) {
  Add(span, "gen_ai.usage.input_tokens", input);
  Add(span, "gen_ai.usage.output_tokens", output);
  if (cached > 0) Add(span, "gen_ai.usage.cache_read.input_tokens", cached);
  if (cost) Add(span, "skillrunner.cost_usd", *cost);
}

// GenAI's structured messages: [{role, parts: [{type: text, content}]}].
std::string InputMessages(const json::value& request) {
  json::array out;
  if (const auto* messages = request.is_object() ? request.as_object().if_contains("messages") : nullptr) {
    for (const auto& m : messages->as_array()) {
      const json::object& message = m.as_object();
      json::array parts{json::object{{"type", "text"}, {"content", message.at("content")}}};
      out.push_back(json::object{{"role", message.at("role")}, {"parts", std::move(parts)}});
    }
  }
  return json::serialize(out);
}

std::string OutputMessages(const Attempt& attempt) {
  json::array parts{json::object{{"type", "text"}, {"content", attempt.raw}}};
  json::object message{{"role", "assistant"}, {"parts", std::move(parts)}};
  if (!attempt.span.finish_reason.empty()) message["finish_reason"] = attempt.span.finish_reason;
  return json::serialize(json::array{std::move(message)});
}

bool Redacts(const InvocationTrace& trace) { return trace.eval && !trace.eval->redact.empty(); }

// `value` with the eval's `redact:` fields under `root` ("/input" or "/output") masked.
json::value Masked(const json::value& value, const InvocationTrace& trace, std::string_view root) {
  if (!Redacts(trace)) return value;
  json::value copy = value;
  for (const std::string& pointer : trace.eval->redact) {
    if (auto under = PointerUnder(pointer, root)) MaskAt(copy, *under, "[redacted]");
  }
  return copy;
}

Span ChatSpan(const InvocationTrace& trace, const Attempt& attempt, const TraceSettings& settings, const Clock& clock) {
  Span span{trace.ids.trace_id,
            attempt.span.span_id,
            trace.ids.span_id,
            "chat " + attempt.model,
            telemetry::SpanKind::kClient,
            clock.UnixNanos(attempt.span.started),
            clock.UnixNanos(attempt.span.ended),
            {},
            telemetry::SpanStatus::kUnset,
            ""};
  Add(span, "gen_ai.operation.name", std::string("chat"));
  auto system = settings.provider_systems.find(attempt.provider);
  Add(span, "gen_ai.provider.name", system != settings.provider_systems.end() ? system->second : attempt.provider);
  Add(span, "gen_ai.request.model", attempt.model);
  if (attempt.temperature) Add(span, "gen_ai.request.temperature", *attempt.temperature);
  if (!attempt.span.response_model.empty()) Add(span, "gen_ai.response.model", attempt.span.response_model);
  if (!attempt.span.finish_reason.empty()) {
    Add(span, "gen_ai.response.finish_reasons", std::vector<std::string>{attempt.span.finish_reason});
    AddUsage(span, attempt.input_tokens, attempt.cached_input_tokens, attempt.output_tokens, attempt.cost_usd);
  }
  if (attempt.http_status) Add(span, "http.response.status_code", std::int64_t{*attempt.http_status});
  Add(span, "skillrunner.provider", attempt.provider);
  Add(span, "skillrunner.attempt.n", std::int64_t{attempt.n});
  Add(span, "skillrunner.attempt.kind", std::string(AttemptKindName(attempt.kind)));
  Add(span, "skillrunner.attempt.role", std::string(AttemptRoleName(attempt.role)));
  Add(span, "skillrunner.attempt.errors", static_cast<std::int64_t>(attempt.errors.size()));
  if (!attempt.errors.empty()) {
    std::vector<std::string> paths;
    for (const FieldError& error : attempt.errors) paths.push_back(error.path);
    Add(span, "skillrunner.attempt.error_paths", std::move(paths));
  }
  Add(span, "skillrunner.validation_retry", attempt.span.validation_retry);
  if (attempt.queued_ms) Add(span, "skillrunner.queued_ms", *attempt.queued_ms);
  if (attempt.delay_ms) Add(span, "skillrunner.retry_delay_ms", *attempt.delay_ms);
  if (attempt.kind != AttemptKind::kOk) {
    span.status = telemetry::SpanStatus::kError;
    span.status_message = std::string(AttemptKindName(attempt.kind));
    Add(span, "error.type", std::string(AttemptKindName(attempt.kind)));
  }
  if (settings.capture_content && Redacts(trace)) {
    Add(span, "skillrunner.content_redacted", true);  // the texts hold the masked fields: left out
  } else if (settings.capture_content) {
    if (attempt.request) Add(span, "gen_ai.input.messages", InputMessages(*attempt.request));
    if (!attempt.span.finish_reason.empty()) Add(span, "gen_ai.output.messages", OutputMessages(attempt));
  }
  return span;
}

Span InvokeSpan(const InvocationTrace& trace, const InvocationOutcome& outcome, const TraceSettings& settings,
                const Clock& clock) {
  Span span{trace.ids.trace_id,
            trace.ids.span_id,
            trace.ids.parent_span_id,
            "invoke_skill " + trace.skill,
            telemetry::SpanKind::kInternal,
            clock.UnixNanos(trace.started),
            clock.UnixNanos(trace.ended),
            {},
            telemetry::SpanStatus::kOk,
            ""};
  const Metrics& metrics = outcome ? outcome->metrics : outcome.error().metrics;
  Add(span, "skillrunner.skill", trace.skill);
  Add(span, "skillrunner.invocation_id", trace.invocation_id);
  if (metrics.mode != RunMode::kUnset) Add(span, "skillrunner.mode", std::string(RunModeName(metrics.mode)));
  Add(span, "skillrunner.attempts", std::int64_t{metrics.attempts});
  Add(span, "skillrunner.validation_retries", std::int64_t{metrics.validation_retries});
  Add(span, "skillrunner.transient_retries", std::int64_t{metrics.transient_retries});
  if (metrics.fallbacks > 0) Add(span, "skillrunner.fallbacks", std::int64_t{metrics.fallbacks});
  if (metrics.escalated) Add(span, "skillrunner.escalated", true);
  AddUsage(span, metrics.input_tokens, metrics.cached_input_tokens, metrics.output_tokens, metrics.cost_usd);
  if (!outcome) {
    span.status = telemetry::SpanStatus::kError;
    span.status_message = outcome.error().error.message;
    Add(span, "error.type", std::string(ErrorCodeName(outcome.error().error.code)));
  }
  if (settings.capture_content) {
    if (trace.input != nullptr) Add(span, "skillrunner.input", json::serialize(Masked(*trace.input, trace, "/input")));
    if (outcome) Add(span, "skillrunner.output", json::serialize(Masked(outcome->output, trace, "/output")));
  }
  return span;
}

}  // namespace

std::optional<TraceContext> StartTrace(const TraceSettings& settings, const std::optional<TraceContext>& caller) {
  if (caller) return TraceContext{caller->trace_id, NewSpanId(), caller->span_id, caller->sampled};
  if (!settings.sink) return std::nullopt;
  return TraceContext{NewTraceId(), NewSpanId(), "", true};
}

std::size_t SpanCount(const InvocationOutcome& outcome) {
  const std::vector<Attempt>& attempts = outcome ? outcome->attempts : outcome.error().attempts;
  return 1 + static_cast<std::size_t>(std::count_if(attempts.begin(), attempts.end(),
                                                    [](const Attempt& a) { return !a.span.span_id.empty(); }));
}

std::vector<Span> InvocationSpans(const InvocationTrace& trace, const InvocationOutcome& outcome,
                                  const TraceSettings& settings, const Clock& clock) {
  std::vector<Span> spans{InvokeSpan(trace, outcome, settings, clock)};
  const std::vector<Attempt>& attempts = outcome ? outcome->attempts : outcome.error().attempts;
  for (const Attempt& attempt : attempts) {
    if (!attempt.span.span_id.empty()) spans.push_back(ChatSpan(trace, attempt, settings, clock));
  }
  return spans;
}

}  // namespace skillrunner
