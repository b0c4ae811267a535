#pragma once

// The OTLP/JSON encoding of an ExportTraceServiceRequest
// (opentelemetry-proto, JSON Protobuf mapping as OTLP/HTTP specifies it):
// ids as hex strings, 64-bit integers and nanosecond times as decimal strings,
// enums as integers, attribute values as {"stringValue": ...} and the like.

#include <string>
#include <vector>

#include "services/telemetry/span.h"

namespace skillrunner::telemetry {

struct Resource {
  std::string service_name;
  std::string scope_name = "skillrunner";
  std::string scope_version;
};

std::string EncodeOtlpJson(const Resource& resource, const std::vector<Span>& spans);

}  // namespace skillrunner::telemetry
