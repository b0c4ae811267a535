#pragma once

// Finished spans (design.md §9.4), as the exporter sends them: ids in hex, times
// in nanoseconds since the Unix epoch, attributes typed.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace skillrunner::telemetry {

using AttributeValue = std::variant<std::string, std::int64_t, double, bool, std::vector<std::string>>;

struct Attribute {
  std::string key;
  AttributeValue value;
};

enum class SpanKind { kInternal = 1, kServer = 2, kClient = 3 };  // OTLP's numbers
enum class SpanStatus { kUnset = 0, kOk = 1, kError = 2 };

struct Span {
  std::string trace_id;        // 32 hex digits
  std::string span_id;         // 16 hex digits
  std::string parent_span_id;  // empty for a root
  std::string name;
  SpanKind kind = SpanKind::kInternal;
  std::int64_t start_unix_nano = 0;
  std::int64_t end_unix_nano = 0;
  std::vector<Attribute> attributes;
  SpanStatus status = SpanStatus::kUnset;
  std::string status_message;
};

// Where finished spans go. Export never blocks on the network and never
// fails: a sink that cannot keep up drops spans and counts them.
class SpanSink {
 public:
  virtual ~SpanSink() = default;
  virtual void Export(std::vector<Span> spans) = 0;
  // Whether `count` more spans would be queued now. When not, the caller
  // need not build them: Drop counts them as dropped instead.
  virtual bool HasRoom(std::size_t count) const = 0;
  virtual void Drop(std::size_t count) = 0;
};

}  // namespace skillrunner::telemetry
