#include "services/telemetry/otlp_json.h"

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>

namespace skillrunner::telemetry {
namespace json = boost::json;

namespace {

json::object AnyValue(const AttributeValue& value) {
  struct Visitor {
    json::object operator()(const std::string& s) const { return {{"stringValue", s}}; }
    json::object operator()(std::int64_t n) const { return {{"intValue", std::to_string(n)}}; }
    json::object operator()(double d) const { return {{"doubleValue", d}}; }
    json::object operator()(bool b) const { return {{"boolValue", b}}; }
    json::object operator()(const std::vector<std::string>& list) const {
      json::array values;
      for (const std::string& s : list) values.push_back(json::object{{"stringValue", s}});
      return {{"arrayValue", json::object{{"values", std::move(values)}}}};
    }
  };
  return std::visit(Visitor{}, value);
}

json::array Attributes(const std::vector<Attribute>& attributes) {
  json::array out;
  for (const Attribute& a : attributes) out.push_back(json::object{{"key", a.key}, {"value", AnyValue(a.value)}});
  return out;
}

json::object SpanJson(const Span& span) {
  json::object out{{"traceId", span.trace_id},
                   {"spanId", span.span_id},
                   {"name", span.name},
                   {"kind", static_cast<int>(span.kind)},
                   {"startTimeUnixNano", std::to_string(span.start_unix_nano)},
                   {"endTimeUnixNano", std::to_string(span.end_unix_nano)},
                   {"attributes", Attributes(span.attributes)}};
  if (!span.parent_span_id.empty()) out["parentSpanId"] = span.parent_span_id;
  json::object status;
  if (span.status != SpanStatus::kUnset) status["code"] = static_cast<int>(span.status);
  if (!span.status_message.empty()) status["message"] = span.status_message;
  out["status"] = std::move(status);
  return out;
}

}  // namespace

std::string EncodeOtlpJson(const Resource& resource, const std::vector<Span>& spans) {
  json::array encoded;
  for (const Span& span : spans) encoded.push_back(SpanJson(span));
  json::object scope{{"name", resource.scope_name}};
  if (!resource.scope_version.empty()) scope["version"] = resource.scope_version;
  json::object resource_json{
      {"attributes", Attributes({{"service.name", resource.service_name}})}};
  json::object scope_spans{{"scope", std::move(scope)}, {"spans", std::move(encoded)}};
  json::object resource_spans{{"resource", std::move(resource_json)},
                              {"scopeSpans", json::array{std::move(scope_spans)}}};
  return json::serialize(json::object{{"resourceSpans", json::array{std::move(resource_spans)}}});
}

}  // namespace skillrunner::telemetry
