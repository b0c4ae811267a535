// design.md §9.4: the spans of a retried, reviewed invocation as a collector
// receives them (a loopback OTLP/HTTP receiver decodes every body), the
// traceparent each provider request carries, content kept out of spans
// unless asked for, and an exporter whose collector is down or hanging.

#include "runner/tracing.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <regex>

#include "services/telemetry/otlp_exporter.h"
#include "tests/support/child_process.h"
#include "tests/support/cli_runner.h"
#include "tests/support/llm_test_bed.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using test_support::LlmTestBed;
using test_support::LoopbackServer;
using test_support::OpenAiAnswer;

constexpr const char* kCallerTrace = "0af7651916cd43dd8448eb211c80319c";
constexpr const char* kCallerSpan = "b7ad6b7169203331";

std::string Verdict(const std::string& verdict) {
  return R"({"criteria_results":[{"criterion_id":"short","reasoning":"One sentence.","verdict":")" + verdict +
         R"(","confidence":90}],"issues":[],"suggested_fixes":[]})";
}

// One decoded span: its fields, and its attributes by key as OTLP AnyValues.
struct ReceivedSpan {
  json::object span;
  std::map<std::string, json::value> attributes;
  const json::value& Attr(const std::string& key) const {
    static const json::value missing;
    auto it = attributes.find(key);
    return it == attributes.end() ? missing : it->second;
  }
  std::string Str(const char* field) const { return std::string(span.at(field).as_string()); }
};

json::value Int(std::int64_t n) { return json::object{{"intValue", std::to_string(n)}}; }
json::value Text(const std::string& s) { return json::object{{"stringValue", s}}; }

// Every span the receiver got, checking the envelope of each body on the way.
std::vector<ReceivedSpan> Received(const LoopbackServer& receiver, const std::string& service) {
  std::vector<ReceivedSpan> out;
  for (const auto& request : receiver.requests()) {
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.target, "/v1/traces");
    EXPECT_EQ(request.Header("content-type"), "application/json");
    json::value body = json::parse(request.body);
    const json::object& resource_spans = body.at("resourceSpans").at(0).as_object();
    EXPECT_EQ(resource_spans.at("resource").at("attributes"),
              json::parse(R"([{"key":"service.name","value":{"stringValue":")" + service + R"("}}])"));
    const json::object& scope_spans = resource_spans.at("scopeSpans").at(0).as_object();
    EXPECT_EQ(scope_spans.at("scope").at("name"), "skillrunner");
    for (const auto& span : scope_spans.at("spans").as_array()) {
      ReceivedSpan received{span.as_object(), {}};
      for (const auto& a : span.at("attributes").as_array()) {
        received.attributes[std::string(a.at("key").as_string())] = a.at("value");
      }
      out.push_back(std::move(received));
    }
  }
  return out;
}

class TracingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    receiver_.SetDefault({.body = "{}"});
    bed_.tree().Write("rubrics/brevity.yaml",
                      "id: brevity\ncriteria:\n  - { id: short, description: One sentence., required: true }\n");
    bed_.AddSkill("summarize",
                  "id: summarize\ntemplate_type: LLM_JSON_GENERATION\nmodel: m-priced\ntemperature: 0.7\n"
                  "prompt: { system: \"You summarize.\", user: \"Text: {{input.text}}\" }\n"
                  "input_schema: { type: object, required: [text], properties: { text: { type: string } } }\n"
                  "output_schema: { type: object, required: [summary], additionalProperties: false, "
                  "properties: { summary: { type: string } } }\n"
                  "review: { rubric: brevity, model: m-priced }\n");
    bed_.Start("openai", "  m-priced: { provider: llm, structured_output: none, price: { input: 2, output: 10 } }\n");
  }

  std::shared_ptr<telemetry::OtlpExporter> Exporter(std::string endpoint, bool capture = false) {
    telemetry::OtlpExporterOptions options;
    options.endpoint = std::move(endpoint);
    options.resource.service_name = "checkout-skills";
    options.schedule_delay = std::chrono::milliseconds(20);
    options.export_timeout = std::chrono::milliseconds(300);
    auto exporter = std::make_shared<telemetry::OtlpExporter>(std::move(options));
    bed_.runner().SetTracing(TraceSettings{exporter, capture, {{"llm", "openai"}}});
    return exporter;
  }

  // An invalid answer, a 500 on its retry, the retry again (valid), the judge's pass.
  void ScriptRetriedAndReviewed() {
    bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary": 5})")});
    bed_.server().Enqueue({.status = 500, .body = test_support::OpenAiError("upstream hiccup", "server_error")});
    bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"Cold rain: take a coat."})")});
    bed_.server().Enqueue({.body = OpenAiAnswer(Verdict("pass"))});
  }

  static InvocationOptions FromCaller() {
    InvocationOptions options;
    options.traceparent = ParseTraceparent(std::string("00-") + kCallerTrace + "-" + kCallerSpan + "-01");
    return options;
  }

  // The chat spans of `spans`, in attempt order.
  static std::vector<ReceivedSpan> ChatsByAttempt(const std::vector<ReceivedSpan>& spans) {
    std::vector<ReceivedSpan> chats;
    for (const auto& s : spans) {
      if (s.Str("name") != "invoke_skill summarize") chats.push_back(s);
    }
    std::sort(chats.begin(), chats.end(), [](const auto& a, const auto& b) {
      return a.Attr("skillrunner.attempt.n").at("intValue").as_string() <
             b.Attr("skillrunner.attempt.n").at("intValue").as_string();
    });
    return chats;
  }

  // Attempt `n`'s chat span: a client span of the invoke span, inside it in
  // time, with the GenAI request attributes.
  static void ExpectChatSpanUnder(const ReceivedSpan& invoke, const ReceivedSpan& chat, std::size_t n) {
    const std::regex span_id("[0-9a-f]{16}"), nanos("[1-9][0-9]{18}");
    EXPECT_EQ(chat.Str("name"), "chat m-priced");
    EXPECT_EQ(chat.Str("traceId"), kCallerTrace);
    EXPECT_EQ(chat.Str("parentSpanId"), invoke.Str("spanId"));
    EXPECT_TRUE(std::regex_match(chat.Str("spanId"), span_id)) << chat.Str("spanId");
    EXPECT_EQ(chat.span.at("kind"), 3);
    const std::string start = chat.Str("startTimeUnixNano"), end = chat.Str("endTimeUnixNano");
    EXPECT_TRUE(std::regex_match(start, nanos) && std::regex_match(end, nanos)) << start << " " << end;
    EXPECT_TRUE(invoke.Str("startTimeUnixNano") <= start && start <= end && end <= invoke.Str("endTimeUnixNano")) << n;
    EXPECT_EQ(chat.Attr("gen_ai.operation.name"), Text("chat"));
    EXPECT_EQ(chat.Attr("gen_ai.provider.name"), Text("openai"));
    EXPECT_EQ(chat.Attr("gen_ai.request.model"), Text("m-priced"));
    EXPECT_EQ(chat.Attr("skillrunner.attempt.n"), Int(static_cast<std::int64_t>(n)));
  }

  // No input, output or prompt text in anything the collector received.
  void ExpectNoContentSent() {
    for (const auto& request : receiver_.requests()) {
      for (const char* text : {"Rain all day", "Cold rain", "You summarize", "One sentence"}) {
        EXPECT_EQ(request.body.find(text), std::string::npos) << text;
      }
    }
  }

  LoopbackServer receiver_;
  LlmTestBed bed_;
};

// The invoke span of a reviewed invocation retried once for its answer and
// once for a 500, under the caller's span.
void ExpectRetriedReviewedInvokeSpan(const ReceivedSpan& invoke) {
  EXPECT_EQ(invoke.Str("traceId"), kCallerTrace);
  EXPECT_EQ(invoke.Str("parentSpanId"), kCallerSpan);
  EXPECT_EQ(invoke.span.at("kind"), 1);
  EXPECT_EQ(invoke.span.at("status"), json::parse(R"({"code":1})"));
  EXPECT_EQ(invoke.Attr("skillrunner.skill"), Text("summarize"));
  EXPECT_EQ(invoke.Attr("skillrunner.attempts"), Int(4));
  EXPECT_EQ(invoke.Attr("skillrunner.validation_retries"), Int(1));
  EXPECT_EQ(invoke.Attr("skillrunner.transient_retries"), Int(1));
  EXPECT_EQ(invoke.Attr("gen_ai.usage.input_tokens"), Int(60));  // 3 answers x 20
  EXPECT_EQ(invoke.Attr("skillrunner.cost_usd"), json::parse(R"({"doubleValue":4.2E-4})"));
}

TEST_F(TracingTest, ARetriedReviewedInvocationIsOneInvokeSpanWithAChatSpanPerRequest) {
  auto exporter = Exporter(receiver_.base_url() + "/v1/traces");
  ScriptRetriedAndReviewed();
  auto outcome = bed_.Invoke("summarize", R"({"text":"Rain all day, cold, bring a coat."})", FromCaller());
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  exporter->Shutdown();
  EXPECT_EQ(exporter->Stats().exported_spans, 5u);
  EXPECT_EQ(exporter->Stats().dropped_spans, 0u);

  std::vector<ReceivedSpan> spans = Received(receiver_, "checkout-skills");
  ASSERT_EQ(spans.size(), 5u);
  auto invoke =
      std::find_if(spans.begin(), spans.end(), [](const auto& s) { return s.Str("name") == "invoke_skill summarize"; });
  ASSERT_NE(invoke, spans.end());
  ExpectRetriedReviewedInvokeSpan(*invoke);

  std::vector<ReceivedSpan> chats = ChatsByAttempt(spans);
  ASSERT_TRUE(std::regex_match(invoke->Str("startTimeUnixNano"), std::regex("[1-9][0-9]{18}")));
  std::vector<std::string> kinds, roles, retries;
  for (std::size_t i = 0; i < chats.size(); ++i) {
    const ReceivedSpan& chat = chats[i];
    ExpectChatSpanUnder(*invoke, chat, i + 1);
    kinds.emplace_back(chat.Attr("skillrunner.attempt.kind").at("stringValue").as_string());
    roles.emplace_back(chat.Attr("skillrunner.attempt.role").at("stringValue").as_string());
    retries.push_back(json::serialize(chat.Attr("skillrunner.validation_retry")));
    // The provider request carried this span as its traceparent.
    EXPECT_EQ(bed_.server().requests()[i].Header("traceparent"),
              std::string("00-") + kCallerTrace + "-" + chat.Str("spanId") + "-01");
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{"validation", "transient", "ok", "ok"}));
  EXPECT_EQ(roles, (std::vector<std::string>{"generation", "generation", "generation", "judge"}));
  EXPECT_EQ(retries, (std::vector<std::string>{R"({"boolValue":false})", R"({"boolValue":true})",
                                               R"({"boolValue":true})", R"({"boolValue":false})"}));
  // The answered request: GenAI usage, response and cost.
  EXPECT_EQ(chats[2].Attr("gen_ai.response.model"), Text("test-model"));
  EXPECT_EQ(chats[2].Attr("gen_ai.response.finish_reasons"),
            json::parse(R"({"arrayValue":{"values":[{"stringValue":"stop"}]}})"));
  EXPECT_EQ(chats[2].Attr("gen_ai.usage.input_tokens"), Int(20));
  EXPECT_EQ(chats[2].Attr("gen_ai.usage.output_tokens"), Int(10));
  EXPECT_EQ(chats[2].Attr("skillrunner.cost_usd"), json::parse(R"({"doubleValue":1.4E-4})"));
  EXPECT_EQ(chats[2].Attr("gen_ai.request.temperature"), json::parse(R"({"doubleValue":0.2})"));  // the retry's, colder
  EXPECT_EQ(chats[2].span.at("status"), json::object());
  // The rejected answer and the failed request: errors, status, no usage for the 500.
  EXPECT_EQ(chats[0].Attr("skillrunner.attempt.errors"), Int(1));
  EXPECT_EQ(chats[0].Attr("skillrunner.attempt.error_paths"),
            json::parse(R"({"arrayValue":{"values":[{"stringValue":"/summary"}]}})"));
  EXPECT_EQ(chats[0].span.at("status"), json::parse(R"({"code":2,"message":"validation"})"));
  EXPECT_EQ(chats[1].Attr("http.response.status_code"), Int(500));
  EXPECT_EQ(chats[1].Attr("error.type"), Text("transient"));
  EXPECT_TRUE(chats[1].Attr("gen_ai.usage.input_tokens").is_null());
  ExpectNoContentSent();
}

TEST_F(TracingTest, CapturedContentIsInTheSpansButTheAnswerCarriesNoRequestsUnlessAsked) {
  auto exporter = Exporter(receiver_.base_url() + "/v1/traces", /*capture=*/true);
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"Cold rain."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(Verdict("pass"))});
  auto outcome = bed_.Invoke("summarize", R"({"text":"Rain."})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  for (const Attempt& attempt : outcome->attempts) EXPECT_FALSE(attempt.request.has_value());
  exporter->Shutdown();
  std::vector<ReceivedSpan> spans = Received(receiver_, "checkout-skills");
  ASSERT_EQ(spans.size(), 3u);
  const ReceivedSpan& invoke = spans[0];
  EXPECT_EQ(invoke.Str("name"), "invoke_skill summarize");
  EXPECT_FALSE(invoke.span.contains("parentSpanId"));  // no caller: a new trace
  EXPECT_EQ(invoke.Attr("skillrunner.input"), Text(R"({"text":"Rain."})"));
  EXPECT_EQ(invoke.Attr("skillrunner.output"), Text(R"({"summary":"Cold rain."})"));
  const std::string system =
      "You summarize.\n\nAnswer with one JSON value only (no prose, no Markdown code fence) that is valid against "
      "this JSON Schema:\n"
      R"({"type":"object","required":["summary"],"additionalProperties":false,"properties":{"summary":{"type":"string"}}})";
  EXPECT_EQ(
      spans[1].Attr("gen_ai.input.messages"),
      Text(json::serialize(json::array{
          json::object{{"role", "system"}, {"parts", json::array{json::object{{"type", "text"}, {"content", system}}}}},
          json::object{{"role", "user"},
                       {"parts", json::array{json::object{{"type", "text"}, {"content", "Text: Rain."}}}}}})));
  EXPECT_EQ(spans[1].Attr("gen_ai.output.messages"),
            Text(R"([{"role":"assistant","parts":[{"type":"text","content":"{\"summary\":\"Cold rain.\"}"}],)"
                 R"("finish_reason":"stop"}])"));
}

// design.md §12.3: an eval case's `redact:` fields are masked in the captured input and output, and the
// prompt and answer texts (which hold them) are left out of the chat spans, which say so.
TEST_F(TracingTest, AnEvalCasesRedactedFieldsAreMaskedInTheCapturedContent) {
  auto exporter = Exporter(receiver_.base_url() + "/v1/traces", /*capture=*/true);
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"Cold rain at 12 Elm St."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(Verdict("pass"))});
  InvocationOptions options;
  options.eval = std::make_shared<const EvalTag>(EvalTag{"c1", 0, {"/input/text", "/output/summary"}});
  auto outcome = bed_.Invoke("summarize", R"({"text":"Rain at 12 Elm St."})", std::move(options));
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(outcome->output.at("summary"), "Cold rain at 12 Elm St.");  // the caller's answer is whole
  exporter->Shutdown();
  std::vector<ReceivedSpan> spans = Received(receiver_, "checkout-skills");
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].Attr("skillrunner.input"), Text(R"({"text":"[redacted]"})"));
  EXPECT_EQ(spans[0].Attr("skillrunner.output"), Text(R"({"summary":"[redacted]"})"));
  for (std::size_t i = 1; i < spans.size(); ++i) {
    EXPECT_FALSE(spans[i].attributes.contains("gen_ai.input.messages")) << i;
    EXPECT_FALSE(spans[i].attributes.contains("gen_ai.output.messages")) << i;
    EXPECT_EQ(spans[i].Attr("skillrunner.content_redacted"), json::parse(R"({"boolValue":true})")) << i;
  }
  for (const ReceivedSpan& span : spans) EXPECT_EQ(json::serialize(span.span).find("Elm St"), std::string::npos);
}

TEST_F(TracingTest, WithoutAnExporterACallersTraceparentStillReachesTheProvider) {
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"Cold rain."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(Verdict("pass"))});
  ASSERT_TRUE(bed_.Invoke("summarize", R"({"text":"Rain."})", FromCaller()));
  const std::string sent = bed_.server().requests()[0].Header("traceparent");
  EXPECT_TRUE(std::regex_match(sent, std::regex(std::string("00-") + kCallerTrace + "-[0-9a-f]{16}-01"))) << sent;
  EXPECT_EQ(sent.find(kCallerSpan), std::string::npos);  // a span of ours, the caller's child's child

  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"Cold rain."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(Verdict("pass"))});
  ASSERT_TRUE(bed_.Invoke("summarize", R"({"text":"Rain."})"));
  EXPECT_EQ(bed_.server().requests()[2].Header("traceparent"), "");  // nothing to trace, nothing sent
}

TEST_F(TracingTest, AnUnsampledCallerIsPassedOnButNotExported) {
  auto exporter = Exporter(receiver_.base_url() + "/v1/traces");
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"Cold rain."})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(Verdict("pass"))});
  InvocationOptions options;
  options.traceparent = ParseTraceparent(std::string("00-") + kCallerTrace + "-" + kCallerSpan + "-00");
  ASSERT_TRUE(bed_.Invoke("summarize", R"({"text":"Rain."})", options));
  exporter->Shutdown();
  EXPECT_TRUE(bed_.server().requests()[0].Header("traceparent").ends_with("-00"));
  EXPECT_EQ(receiver_.request_count(), 0u);
}

TEST_F(TracingTest, ACollectorThatIsDownOrHangsCostsTheInvocationsNothingAndItsDropsAreCounted) {
  for (bool hanging : {false, true}) {
    SCOPED_TRACE(hanging ? "hanging" : "down");
    LoopbackServer slow;
    slow.SetDefault({.body = "{}", .delay = std::chrono::milliseconds(10'000)});
    const std::string endpoint =
        hanging ? slow.base_url() + "/v1/traces"
                : "http://127.0.0.1:" + std::to_string(test_support::FreeLoopbackPort()) + "/v1/traces";
    auto exporter = Exporter(endpoint);
    for (int i = 0; i < 3; ++i) {
      bed_.server().Enqueue({.body = OpenAiAnswer(R"({"summary":"Cold rain."})")});
      bed_.server().Enqueue({.body = OpenAiAnswer(Verdict("pass"))});
      auto outcome = bed_.Invoke("summarize", R"({"text":"Rain."})");
      ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
    }
    exporter->Shutdown();
    const telemetry::ExporterStats stats = exporter->Stats();
    EXPECT_EQ(stats.exported_spans, 0u);
    EXPECT_EQ(stats.dropped_spans, 9u);  // 3 invocations x (invoke_skill + 2 chats)
    EXPECT_GE(stats.failed_exports, 1u);
    EXPECT_EQ(stats.queued_spans, 0u);
  }
}

// A sink with no room gets the count of the spans it would have had, and no spans.
class FullSink : public telemetry::SpanSink {
 public:
  void Export(std::vector<telemetry::Span> spans) override { exported += spans.size(); }
  bool HasRoom(std::size_t count) const override {
    asked.push_back(count);
    return false;
  }
  void Drop(std::size_t count) override { dropped += count; }
  std::size_t exported = 0, dropped = 0;
  mutable std::vector<std::size_t> asked;
};

TEST_F(TracingTest, AFullSinkIsToldHowManySpansItMissedAndNoneAreBuilt) {
  auto sink = std::make_shared<FullSink>();
  bed_.runner().SetTracing(TraceSettings{sink, false, {}});
  ScriptRetriedAndReviewed();
  ASSERT_TRUE(bed_.Invoke("summarize", R"({"text":"Rain."})"));
  EXPECT_EQ(sink->asked, (std::vector<std::size_t>{5}));
  EXPECT_EQ(sink->dropped, 5u);
  EXPECT_EQ(sink->exported, 0u);
  // Still traced: the provider requests carried a traceparent.
  EXPECT_TRUE(bed_.server().requests()[0].Header("traceparent").starts_with("00-"));
}

TEST(OtlpExporterTest, AFullQueueDropsAndCountsInsteadOfWaiting) {
  telemetry::OtlpExporterOptions options;
  options.endpoint = "http://127.0.0.1:" + std::to_string(test_support::FreeLoopbackPort()) + "/v1/traces";
  options.max_queue_spans = 2;
  options.max_batch_spans = 2;
  options.schedule_delay = std::chrono::milliseconds(60'000);
  options.shutdown_timeout = std::chrono::milliseconds(2'000);
  telemetry::OtlpExporter exporter(options);
  std::vector<telemetry::Span> spans(5);
  for (auto& span : spans) span = telemetry::Span{NewTraceId(), NewSpanId(), "", "x", {}, 1, 2, {}, {}, ""};
  exporter.Export(spans);
  EXPECT_GE(exporter.Stats().dropped_spans, 3u);
  exporter.Shutdown();
  EXPECT_EQ(exporter.Stats().dropped_spans, 5u);
  exporter.Export(spans);  // after Shutdown: dropped, never queued
  EXPECT_EQ(exporter.Stats().dropped_spans, 10u);
}

}  // namespace
}  // namespace skillrunner

namespace skillrunner {
namespace {

// The real program: OTEL_* variables honoured, the caller's traceparent
// kept, and the spans flushed before `run` exits (the batch delay is a
// minute, so only the flush at shutdown can have sent them).
TEST(TracingCliTest, RunExportsItsSpansBeforeItExits) {
  testing::TempTree tree;
  tree.Write("skills/triage/skill.yaml", R"(id: triage
template_type: LLM_JSON_GENERATION
model: sim-model
prompt: { user: "Triage {{input.text}}" }
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema: { type: object, required: [priority], properties: { priority: { enum: [low, high] } } }
)");
  LoopbackServer receiver;
  receiver.SetDefault({.body = "{}"});
  auto result =
      test_support::Skillrunner(tree.root(),
                                std::string("run triage --input '{\"text\":\"disk full\"}' --traceparent 00-") +
                                    kCallerTrace + "-" + kCallerSpan + "-01",
                                "2>/dev/null",
                                "OTEL_EXPORTER_OTLP_ENDPOINT=" + receiver.base_url() +
                                    " OTEL_SERVICE_NAME=night-shift OTEL_BSP_SCHEDULE_DELAY=60000");
  EXPECT_EQ(result.status, 0) << result.out;
  std::vector<ReceivedSpan> spans = Received(receiver, "night-shift");
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].Str("name"), "invoke_skill triage");
  EXPECT_EQ(spans[0].Str("traceId"), kCallerTrace);
  EXPECT_EQ(spans[0].Str("parentSpanId"), kCallerSpan);
  EXPECT_EQ(spans[1].Str("name"), "chat sim-model");
  EXPECT_EQ(spans[1].Attr("gen_ai.provider.name"), Text("skillrunner.simulated"));
  EXPECT_EQ(spans[1].Str("parentSpanId"), spans[0].Str("spanId"));
}

TEST(TracingCliTest, AnOtlpEndpointThatIsNotHttpIsAConfigError) {
  testing::TempTree tree;
  tree.Write("skills/good/skill.yaml", "id: good\nhandler: echo\ninput_schema: {}\noutput_schema: {}\n");
  auto result = test_support::Skillrunner(tree.root(), "run good --input '{}'", "2>/dev/null",
                                          "OTEL_EXPORTER_OTLP_ENDPOINT=ftp://collector:4318");
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(boost::json::parse(result.out).at("error").at("code"), "CONFIG_INVALID");
  EXPECT_EQ(boost::json::parse(result.out).at("error").at("message"),
            "the OTLP endpoint must be an http:// or https:// URL");
}

TEST(TracingCliTest, ABadTraceparentIsAUsageError) {
  testing::TempTree tree;
  tree.Write("skills/good/skill.yaml", "id: good\nhandler: echo\ninput_schema: {}\noutput_schema: {}\n");
  auto result = test_support::Skillrunner(tree.root(), "run good --input '{}' --traceparent 00-abc-01", "2>&1");
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.out.find("--traceparent: not a W3C traceparent: expected 00-<32 hex digits>-<16 hex digits>-<2 hex "
                            "digits>"),
            std::string::npos)
      << result.out;
}

}  // namespace
}  // namespace skillrunner
