// The pieces under the exporter: W3C traceparent, the OTLP/JSON encoding,
// and the OTEL_* variables.

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "services/common/trace_context.h"
#include "services/telemetry/otlp_exporter.h"
#include "services/telemetry/otlp_json.h"

namespace skillrunner::telemetry {
namespace {
namespace json = boost::json;

TEST(TraceparentTest, ParsesTheW3cExampleAndFormatsItBack) {
  auto parsed = ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(parsed->span_id, "00f067aa0ba902b7");
  EXPECT_TRUE(parsed->sampled);
  EXPECT_EQ(FormatTraceparent(*parsed), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  EXPECT_FALSE(ParseTraceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00")->sampled);
  // A later version may append fields.
  EXPECT_TRUE(ParseTraceparent("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-extra"));
}

TEST(TraceparentTest, RejectsWhatW3cSaysToIgnoreAndSaysWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",
       "expected 00-<32 hex digits>-<16 hex digits>-<2 hex digits>"},
      {"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "the ids must be lower-case hex digits"},
      {"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "the trace id is all zeros"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", "the parent id is all zeros"},
      {"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "version ff is invalid"},
      {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", "version 00 has exactly 55 characters"},
  };
  for (const auto& [header, why] : cases) {
    std::string said;
    EXPECT_FALSE(ParseTraceparent(header, &said)) << header;
    EXPECT_EQ(said, why) << header;
  }
}

TEST(TraceparentTest, NewIdsAreLowerCaseHexOfTheRightLengthAndDiffer) {
  const std::string trace = NewTraceId(), span = NewSpanId();
  EXPECT_EQ(trace.size(), 32u);
  EXPECT_EQ(span.size(), 16u);
  EXPECT_EQ(trace.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(NewSpanId(), span);
}

TEST(OtlpJsonTest, EncodesAnExportTraceServiceRequestAsTheJsonMappingSays) {
  Span span{"4bf92f3577b34da6a3ce929d0e0e4736",
            "00f067aa0ba902b7",
            "b7ad6b7169203331",
            "chat gpt-4o-mini",
            SpanKind::kClient,
            1767225600000000001,
            1767225600250000000,
            {{"gen_ai.request.model", std::string("gpt-4o-mini")},
             {"gen_ai.usage.input_tokens", std::int64_t{1200}},
             {"skillrunner.cost_usd", 0.00042},
             {"skillrunner.validation_retry", true},
             {"gen_ai.response.finish_reasons", std::vector<std::string>{"stop"}}},
            SpanStatus::kError,
            "validation"};
  Span root{"4bf92f3577b34da6a3ce929d0e0e4736",
            "b7ad6b7169203331",
            "",
            "invoke_skill triage",
            SpanKind::kInternal,
            5,
            6,
            {},
            SpanStatus::kUnset,
            ""};
  EXPECT_EQ(json::parse(EncodeOtlpJson({"checkout", "skillrunner", "1.2.3"}, {span, root})), json::parse(R"({
    "resourceSpans": [{
      "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "checkout"}}]},
      "scopeSpans": [{
        "scope": {"name": "skillrunner", "version": "1.2.3"},
        "spans": [
          {"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "00f067aa0ba902b7",
           "parentSpanId": "b7ad6b7169203331", "name": "chat gpt-4o-mini", "kind": 3,
           "startTimeUnixNano": "1767225600000000001", "endTimeUnixNano": "1767225600250000000",
           "attributes": [
             {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o-mini"}},
             {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "1200"}},
             {"key": "skillrunner.cost_usd", "value": {"doubleValue": 0.00042}},
             {"key": "skillrunner.validation_retry", "value": {"boolValue": true}},
             {"key": "gen_ai.response.finish_reasons",
              "value": {"arrayValue": {"values": [{"stringValue": "stop"}]}}}],
           "status": {"code": 2, "message": "validation"}},
          {"traceId": "4bf92f3577b34da6a3ce929d0e0e4736", "spanId": "b7ad6b7169203331",
           "name": "invoke_skill triage", "kind": 1, "startTimeUnixNano": "5", "endTimeUnixNano": "6",
           "attributes": [], "status": {}}]}]}]})"));
}

EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(OtelEnvironmentTest, TheStandardVariablesApplyAndTheConfigFileWins) {
  OtlpExporterOptions options;
  ASSERT_TRUE(ApplyOtelEnvironment(
      options, Env({{"OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"},
                    {"OTEL_SERVICE_NAME", "checkout"},
                    {"OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic%20cGs6c2s=, x-tenant = a%2Cb"},
                    {"OTEL_BSP_MAX_QUEUE_SIZE", "100"},
                    {"OTEL_BSP_MAX_EXPORT_BATCH_SIZE", "500"},
                    {"OTEL_BSP_SCHEDULE_DELAY", "250"},
                    {"OTEL_EXPORTER_OTLP_TIMEOUT", "3000"}})));
  EXPECT_EQ(options.endpoint, "http://collector:4318/v1/traces");
  EXPECT_EQ(options.resource.service_name, "checkout");
  EXPECT_EQ(options.headers, (std::vector<std::pair<std::string, std::string>>{{"Authorization", "Basic cGs6c2s="},
                                                                               {"x-tenant", "a,b"}}));
  EXPECT_EQ(options.max_queue_spans, 100u);
  EXPECT_EQ(options.max_batch_spans, 100u);  // never more than the queue
  EXPECT_EQ(options.schedule_delay, std::chrono::milliseconds(250));
  EXPECT_EQ(options.export_timeout, std::chrono::milliseconds(3000));

  OtlpExporterOptions configured;
  configured.endpoint = "http://tempo:4318/v1/traces";
  configured.resource.service_name = "from-config";
  ASSERT_TRUE(ApplyOtelEnvironment(configured, Env({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://other/v1/traces"},
                                                    {"OTEL_SERVICE_NAME", "checkout"}})));
  EXPECT_EQ(configured.endpoint, "http://tempo:4318/v1/traces");
  EXPECT_EQ(configured.resource.service_name, "from-config");

  OtlpExporterOptions traces_only;
  ASSERT_TRUE(ApplyOtelEnvironment(traces_only, Env({{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://c:4318/traces"},
                                                     {"OTEL_EXPORTER_OTLP_ENDPOINT", "http://ignored:4318"}})));
  EXPECT_EQ(traces_only.endpoint, "http://c:4318/traces");  // taken as given
  EXPECT_EQ(traces_only.resource.service_name, "skillrunner");
}

TEST(OtelEnvironmentTest, ABadValueNamesTheVariableButNeverTheSecret) {
  OtlpExporterOptions options;
  auto bad = ApplyOtelEnvironment(options, Env({{"OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Bearer x,sk-live-123"}}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(bad.error().message, "OTEL_EXPORTER_OTLP_HEADERS: entry 2 is not key=value");
  bad = ApplyOtelEnvironment(options, Env({{"OTEL_EXPORTER_OTLP_HEADERS", "Authorization=Basic%zz"}}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "OTEL_EXPORTER_OTLP_HEADERS: entry 1 has a broken %-escape");
  bad = ApplyOtelEnvironment(options, Env({{"OTEL_BSP_SCHEDULE_DELAY", "soon"}}));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message, "OTEL_BSP_SCHEDULE_DELAY: expected a whole number of at least 0");
}

}  // namespace
}  // namespace skillrunner::telemetry
