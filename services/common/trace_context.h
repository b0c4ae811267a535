#pragma once

// W3C Trace Context (design.md §9.4): where an invocation sits in a caller's
// trace, and the `traceparent` header that carries it.

#include <optional>
#include <string>
#include <string_view>

namespace skillrunner {

// The ids of one span: 32 and 16 lower-case hex digits, never all zero.
struct TraceContext {
  std::string trace_id;
  std::string span_id;
  std::string parent_span_id;  // empty for a trace's root
  bool sampled = true;         // the caller's sampled flag: unsampled traces are passed on, not exported
};

// `00-<trace-id>-<parent-id>-<flags>` as a TraceContext whose span_id is the
// caller's span; nullopt (with `why`) for anything W3C says to ignore.
std::optional<TraceContext> ParseTraceparent(std::string_view header, std::string* why = nullptr);
std::string FormatTraceparent(const TraceContext& trace);

std::string NewTraceId();
std::string NewSpanId();

}  // namespace skillrunner
