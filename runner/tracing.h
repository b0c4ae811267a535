#pragma once

// design.md §9.4: the spans of one finished invocation, built from its attempt
// log: `invoke_skill {skill}`, and a `chat {model}` child for every provider
// request (the judges' included) with the GenAI semantic conventions'
// attributes and skillrunner's own.

#include <boost/json/value.hpp>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "services/common/clock.h"
#include "services/common/invocation.h"
#include "services/common/trace_context.h"
#include "services/telemetry/span.h"

namespace skillrunner {

struct TraceSettings {
  // Where spans go; null: none are exported (a caller's traceparent is
  // still passed on to providers).
  std::shared_ptr<telemetry::SpanSink> sink;
  // Input, output and prompt text in spans (telemetry.capture_content).
  bool capture_content = false;
  // The config's provider names -> gen_ai.provider.name (openai, anthropic,
  // gcp.gemini, azure.ai.openai, ...).
  std::map<std::string, std::string, std::less<>> provider_systems;
};

// What the runner knows of an invocation besides its outcome.
struct InvocationTrace {
  TraceContext ids;  // span_id: the invocation's own span; parent_span_id: the caller's, if any
  std::string skill;
  std::string invocation_id;
  Clock::TimePoint started{};
  Clock::TimePoint ended{};
  const boost::json::value* input = nullptr;  // with capture_content
  std::shared_ptr<const EvalTag> eval;        // an eval case's: its `redact:` masks the content
};

// The invocation's ids: a child of the caller's traceparent, else a new
// trace; nullopt when nothing would use them (no sink and no caller).
std::optional<TraceContext> StartTrace(const TraceSettings& settings, const std::optional<TraceContext>& caller);

// How many spans InvocationSpans makes of `outcome`.
std::size_t SpanCount(const InvocationOutcome& outcome);

std::vector<telemetry::Span> InvocationSpans(const InvocationTrace& trace, const InvocationOutcome& outcome,
                                             const TraceSettings& settings, const Clock& clock);

}  // namespace skillrunner
