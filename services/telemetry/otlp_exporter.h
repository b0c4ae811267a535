#pragma once

// design.md §9.4: spans to an OTLP/HTTP collector (JSON bodies), batched on a
// bounded queue by a thread of its own, so that a slow, hanging or absent
// collector never slows an invocation: when the queue is full, spans are
// dropped and counted.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <expected>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "services/common/env.h"
#include "services/common/error.h"
#include "services/telemetry/otlp_json.h"
#include "services/telemetry/span.h"

namespace skillrunner::telemetry {

struct OtlpExporterOptions {
  std::string endpoint;                                      // the whole URL spans are POSTed to (…/v1/traces)
  std::vector<std::pair<std::string, std::string>> headers;  // OTEL_EXPORTER_OTLP_HEADERS; never logged
  Resource resource;
  std::size_t max_queue_spans = 2048;                // OTEL_BSP_MAX_QUEUE_SIZE
  std::size_t max_batch_spans = 512;                 // OTEL_BSP_MAX_EXPORT_BATCH_SIZE
  std::chrono::milliseconds schedule_delay{5000};    // OTEL_BSP_SCHEDULE_DELAY
  std::chrono::milliseconds export_timeout{10000};   // OTEL_EXPORTER_OTLP_TIMEOUT
  std::chrono::milliseconds shutdown_timeout{5000};  // the most Shutdown waits to flush
  // After a failed export, the least wait before the next (spans that come
  // meanwhile queue, and drop when the queue is full).
  std::chrono::milliseconds retry_delay{1000};
};

struct ExporterStats {
  std::uint64_t exported_spans = 0;  // accepted by the collector (2xx)
  std::uint64_t dropped_spans = 0;   // never delivered: the queue was full, or their export failed
  std::uint64_t failed_exports = 0;  // batches the collector did not take
  std::uint64_t queued_spans = 0;    // waiting now
};

class OtlpExporter : public SpanSink {
 public:
  explicit OtlpExporter(OtlpExporterOptions options);
  ~OtlpExporter() override;  // Shutdown()
  OtlpExporter(const OtlpExporter&) = delete;
  OtlpExporter& operator=(const OtlpExporter&) = delete;

  void Export(std::vector<Span> spans) override;
  bool HasRoom(std::size_t count) const override;
  void Drop(std::size_t count) override;
  // Sends what is queued (within shutdown_timeout; what is left is dropped)
  // and stops the thread. Idempotent.
  void Shutdown();
  ExporterStats Stats() const;
  const OtlpExporterOptions& options() const { return options_; }

 private:
  struct Worker;
  OtlpExporterOptions options_;
  std::unique_ptr<Worker> worker_;
};

// The OTEL_* variables (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given, else
// OTEL_EXPORTER_OTLP_ENDPOINT + "/v1/traces"; OTEL_SERVICE_NAME;
// OTEL_EXPORTER_OTLP_HEADERS; OTEL_BSP_MAX_QUEUE_SIZE,
// OTEL_BSP_MAX_EXPORT_BATCH_SIZE, OTEL_BSP_SCHEDULE_DELAY;
// OTEL_EXPORTER_OTLP_TIMEOUT) applied to `options`; settings already made
// (from the config file) win for the endpoint and the service name. An error
// names the variable, never its value.
Result<void> ApplyOtelEnvironment(OtlpExporterOptions& options, const EnvLookup& env);

// "http://host:4318" -> "http://host:4318/v1/traces" (a base endpoint, as
// OTEL_EXPORTER_OTLP_ENDPOINT and `telemetry.otlp_endpoint` give it).
std::string TracesUrl(std::string base_endpoint);
// OTEL_EXPORTER_OTLP_HEADERS: "k1=v1,k2=v2" with percent-encoded values;
// an error message (naming no value) for a pair without "=".
Result<std::vector<std::pair<std::string, std::string>>> ParseOtlpHeaders(std::string_view text);

}  // namespace skillrunner::telemetry
