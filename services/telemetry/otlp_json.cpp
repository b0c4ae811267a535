#include "services/telemetry/otlp_json.h"

#include <boost/json/serialize.hpp>
#include <boost/json/string_view.hpp>
#include <charconv>
#include <cmath>

namespace skillrunner::telemetry {

// Written straight into one string: spans are encoded at every invocation's
// pace, and building a boost::json tree first cost more (allocations) than
// the rest of an invocation's tracing together.
namespace {

void Quoted(std::string& out, std::string_view text) {
  bool plain = true;
  for (char c : text) {
    if (c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20) {
      plain = false;
      break;
    }
  }
  if (plain) {
    out += '"';
    out += text;
    out += '"';
  } else {
    out += boost::json::serialize(boost::json::string_view(text.data(), text.size()));
  }
}

void Double(std::string& out, double d) {
  if (!std::isfinite(d)) {  // the proto3 JSON mapping's words
    out += std::isnan(d) ? "\"NaN\"" : (d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  char buffer[32];
  auto end = std::to_chars(buffer, buffer + sizeof buffer, d).ptr;
  out.append(buffer, end);
}

void Value(std::string& out, const AttributeValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) {
    out += "{\"stringValue\":";
    Quoted(out, *s);
  } else if (const auto* n = std::get_if<std::int64_t>(&value)) {
    out += "{\"intValue\":\"" + std::to_string(*n) + "\"";
  } else if (const auto* d = std::get_if<double>(&value)) {
    out += "{\"doubleValue\":";
    Double(out, *d);
  } else if (const auto* b = std::get_if<bool>(&value)) {
    out += *b ? "{\"boolValue\":true" : "{\"boolValue\":false";
  } else {
    out += "{\"arrayValue\":{\"values\":[";
    const auto& list = std::get<std::vector<std::string>>(value);
    for (std::size_t i = 0; i < list.size(); ++i) {
      out += i ? ",{\"stringValue\":" : "{\"stringValue\":";
      Quoted(out, list[i]);
      out += '}';
    }
    out += "]}";
  }
  out += '}';
}

void Attributes(std::string& out, const std::vector<Attribute>& attributes) {
  out += '[';
  for (std::size_t i = 0; i < attributes.size(); ++i) {
    out += i ? ",{\"key\":" : "{\"key\":";
    Quoted(out, attributes[i].key);
    out += ",\"value\":";
    Value(out, attributes[i].value);
    out += '}';
  }
  out += ']';
}

void SpanJson(std::string& out, const Span& span) {
  out += "{\"traceId\":";
  Quoted(out, span.trace_id);
  out += ",\"spanId\":";
  Quoted(out, span.span_id);
  if (!span.parent_span_id.empty()) {
    out += ",\"parentSpanId\":";
    Quoted(out, span.parent_span_id);
  }
  out += ",\"name\":";
  Quoted(out, span.name);
  out += ",\"kind\":" + std::to_string(static_cast<int>(span.kind));
  out += ",\"startTimeUnixNano\":\"" + std::to_string(span.start_unix_nano) + "\"";
  out += ",\"endTimeUnixNano\":\"" + std::to_string(span.end_unix_nano) + "\"";
  out += ",\"attributes\":";
  Attributes(out, span.attributes);
  out += ",\"status\":{";
  if (span.status != SpanStatus::kUnset) out += "\"code\":" + std::to_string(static_cast<int>(span.status));
  if (!span.status_message.empty()) {
    out += span.status != SpanStatus::kUnset ? ",\"message\":" : "\"message\":";
    Quoted(out, span.status_message);
  }
  out += "}}";
}

}  // namespace

std::string EncodeOtlpJson(const Resource& resource, const std::vector<Span>& spans) {
  std::string out;
  out.reserve(256 + spans.size() * 1024);
  out += "{\"resourceSpans\":[{\"resource\":{\"attributes\":";
  Attributes(out, {{"service.name", resource.service_name}});
  out += "},\"scopeSpans\":[{\"scope\":{\"name\":";
  Quoted(out, resource.scope_name);
  if (!resource.scope_version.empty()) {
    out += ",\"version\":";
    Quoted(out, resource.scope_version);
  }
  out += "},\"spans\":[";
  for (std::size_t i = 0; i < spans.size(); ++i) {
    if (i) out += ',';
    SpanJson(out, spans[i]);
  }
  out += "]}]}]}";
  return out;
}

}  // namespace skillrunner::telemetry
