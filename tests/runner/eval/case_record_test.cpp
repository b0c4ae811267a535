// design.md §12.3: the case record as a type: one parse and one serialize,
// round-tripped and held against schemas/eval/case-record.schema.json; the
// failed gates every output takes its story from; redaction and the 64 KiB cut.
#include "runner/eval/records/case_record.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "tests/docs/protocol_schemas.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;

constexpr std::string_view kSchema = "eval/case-record.schema.json";

// A record with every member a case can have: a candidate's repeat that failed its expected value,
// a fuzzy check and its review.
json::object FullRecord() {
  return json::parse(R"J({"skill":"extract","case":"item_14","version":2,"repeat":3,"record_schema":2,
    "input":{"text":"Call Ada on 555-0100","lang":"en"},"tags":["nightly"],"human":{"faithful":"pass"},
    "rejudged_from":"20250101T000000Z-abc123",
    "result":{"skill":"extract","output":{"name":"Bob","summary":"long"},
              "attempts":[{"n":1,"kind":"ok","raw":"{\"name\":\"Bob\",\"summary\":\"long\"}"}],
              "metrics":{"attempts":1,"duration_ms":250}},
    "expected_match":false,"expected_mismatches":[{"path":"/name","message":"expected \"Ada\", got \"Bob\""}],
    "checks":[{"pointer":"/name","op":"equals","pass":true,"expected":"Bob","actual":"Bob"},
              {"pointer":"/summary","op":"fuzzy","negate":true,"pass":false,"expected":"a short summary",
               "actual":"long","score":0.478,"message":"passes the check it must fail (negate)"},
              {"op":"exec","pass":false,"expected":1.0,"actual":0.5,"score":0.5,
               "message":"score 0.5 is under the pass threshold 1.0"}],
    "check_pass":false,"rubric":"quality",
    "review":{"pass":false,"issues":["phone number invented"],"suggested_fixes":[],
              "criteria_results":[{"criterion_id":"faithful","verdict":"fail","reasoning":"no phone in text"}]},
    "rejudges":[{"pass":false}],
    "judge_usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5,"cost_usd":0.25},
    "duration_ms":300})J")
      .as_object();
}

TEST(CaseRecordTest, EveryMemberRoundTripsAndTheRecordMatchesItsSchema) {
  const json::object record = FullRecord();
  EXPECT_EQ(testing::SchemaViolations(std::string(kSchema), record), "");
  const CaseRecord typed = CaseRecord::FromJson(record);
  EXPECT_EQ(typed.Key(), "extract@2/item_14#3");
  EXPECT_EQ(typed.checks.size(), 3u);
  EXPECT_EQ(typed.checks[1].score, 0.478);
  EXPECT_EQ(json::serialize(typed.ToJson()), json::serialize(record));

  json::object errored = json::parse(R"({"skill":"s","case":"c","record_schema":2,"input":[1,2],
    "error":{"code":"REFUSED","message":"the model refused to answer"},"duration_ms":3})")
                             .as_object();
  EXPECT_EQ(testing::SchemaViolations(std::string(kSchema), errored), "");
  EXPECT_EQ(json::serialize(CaseRecord::FromJson(errored).ToJson()), json::serialize(errored));

  // Both an answer and an error is no record; a check op the checks do not have is none either.
  json::object both = errored;
  both["result"] = json::object{{"output", 1}};
  EXPECT_NE(testing::SchemaViolations(std::string(kSchema), both), "");
}

// Older rows (before record_schema) parse: no input, checks without expected and actual; a member
// this build does not know is kept, in place at the end.
TEST(CaseRecordTest, OlderAndNewerRecordsParseTolerantly) {
  const json::object old = json::parse(R"({"skill":"s","case":"c","result":{"output":{}},
    "checks":[{"pointer":"/a","op":"equals","pass":false,"message":"is 1, not 2"}],"check_pass":false,
    "from_the_future":{"x":1}})")
                               .as_object();
  const CaseRecord typed = CaseRecord::FromJson(old);
  EXPECT_EQ(typed.record_schema, 1);
  EXPECT_FALSE(typed.input.has_value());
  EXPECT_FALSE(typed.checks.at(0).expected.has_value());
  EXPECT_EQ(typed.other.at("from_the_future"), json::parse(R"({"x":1})"));
  EXPECT_EQ(typed.Outcome(), CaseOutcome::kFail);
  EXPECT_EQ(typed.ToJson().at("from_the_future"), json::parse(R"({"x":1})"));
}

TEST(CaseRecordTest, FailedGatesComeInTheFixedOrderEachWithItsOwnMessage) {
  const std::vector<GateFailure> gates = CaseRecord::FromJson(FullRecord()).FailedGates();
  ASSERT_EQ(gates.size(), 3u);
  EXPECT_EQ(GateType(gates[0].gate), "EXPECTED_MISMATCH");
  EXPECT_EQ(gates[0].message, "expected /name: expected \"Ada\", got \"Bob\"");
  EXPECT_EQ(GateType(gates[1].gate), "CHECK_FAILED");
  EXPECT_EQ(gates[1].lines,
            (std::vector<std::string>{"check not fuzzy /summary: passes the check it must fail (negate)",
                                      "check exec: score 0.5 is under the pass threshold 1.0"}));
  EXPECT_EQ(gates[1].message,
            "check not fuzzy /summary: passes the check it must fail (negate); check exec: score 0.5 is under the "
            "pass threshold 1.0");
  EXPECT_EQ(GateType(gates[2].gate), "REVIEW_FAILED");
  EXPECT_EQ(gates[2].message, "phone number invented; criterion faithful failed: no phone in text");

  const json::object schema = json::parse(R"({"skill":"s","case":"c","error":{"code":"MAX_RETRIES_EXCEEDED",
    "message":"output invalid after 2 attempts","errors":[{"path":"/email","message":"does not match format email"}]}})")
                                  .as_object();
  const std::vector<GateFailure> invalid = CaseRecord::FromJson(schema).FailedGates();
  ASSERT_EQ(invalid.size(), 1u);
  EXPECT_EQ(GateType(invalid[0].gate), "SCHEMA_INVALID");
  EXPECT_EQ(invalid[0].lines,
            (std::vector<std::string>{"output invalid after 2 attempts", "/email: does not match format email"}));

  // A provider's failure fails no gate: it is an error, not a verdict on the output.
  const json::object unavailable =
      json::parse(R"({"skill":"s","case":"c","error":{"code":"PROVIDER_UNAVAILABLE","message":"503"}})").as_object();
  EXPECT_TRUE(CaseRecord::FromJson(unavailable).FailedGates().empty());
}

TEST(CaseRecordTest, RedactMasksTheFieldsAndEveryTraceOfAnOutputField) {
  CaseRecord typed = CaseRecord::FromJson(FullRecord());
  typed.Redact({"/input/text", "/output/summary", "/output/name"});
  const json::object out = typed.ToJson();
  EXPECT_EQ(out.at("input"), json::parse(R"({"text":"[redacted]","lang":"en"})"));
  EXPECT_EQ(out.at("result").at("output"), json::parse(R"({"name":"[redacted]","summary":"[redacted]"})"));
  EXPECT_EQ(out.at("result").at("attempts").at(0).at("raw"), "[redacted]");
  EXPECT_EQ(out.at("checks").at(1).at("actual"), "[redacted]");
  EXPECT_EQ(out.at("checks").at(1).at("message"), "[redacted]");
  EXPECT_EQ(out.at("checks").at(1).at("expected"), "a short summary");  // the dataset's, not the output's
  EXPECT_EQ(out.at("checks").at(2).at("actual"), 0.5);                  // an exec score is no field
  EXPECT_EQ(out.at("expected_mismatches").at(0).at("message"), "[redacted]");
  EXPECT_EQ(json::serialize(out).find("555-0100"), std::string::npos);
  EXPECT_EQ(out.at("checks").at(0).at("actual"), "[redacted]");
  EXPECT_EQ(out.at("checks").at(0).at("expected"), "Bob");  // the check's own value is the dataset's
  EXPECT_EQ(json::serialize(out).find("\"actual\":\"Bob\""), std::string::npos);
  EXPECT_EQ(testing::SchemaViolations(std::string(kSchema), out), "");
}

// schemas/eval/summary.schema.json is applied, not only parsed: a baseline status CI scripts do not
// know, or a skipped gate without its reason, is refused (the CLI tests hold real summaries to it).
TEST(CaseRecordTest, TheSummarySchemaRefusesABaselineItDoesNotDescribe) {
  json::object summary = json::parse(R"({"run_id":"r","suite":"s","started_at":"","finished_at":"","duration_ms":1,
    "concurrency":1,"skills":{},"thresholds":{},"status":"pass","breaches":[],"fail_on":"any","out":"/o",
    "totals":{"cases":0,"schema_compliance":null,"schema_checked":0,"case_pass_rate":null,"first_try_rate":null,
    "retry_rate":null,"transient_retries":0,"truncations":0,"refusals":0,"refused":0,"refusal_rate":null,"errors":{},
    "judged":0,"judge_errors":0,"judge_error_rate":null,"decided":0,"rubric_pass_rate":null,"indeterminate":0,
    "indeterminate_rate":null,"expected_match":null,"check_pass_rate":null,"input_tokens":0,"cached_input_tokens":0,
    "output_tokens":0,"judge_input_tokens":0,"judge_output_tokens":0,"cost_usd":null,"judge_cost_usd":null,
    "latency_ms":{"p50":null,"p95":null,"p99":null},"attempts_histogram":{}}})")
                             .as_object();
  const std::string name = "eval/summary.schema.json";
  EXPECT_EQ(testing::SchemaViolations(name, summary), "");
  summary["baseline"] = json::parse(R"({"status":"skipped","reason":"history: cannot open eval history h.sqlite"})");
  EXPECT_EQ(testing::SchemaViolations(name, summary), "");
  summary["baseline"] = json::parse(R"({"status":"skipped"})");
  EXPECT_NE(testing::SchemaViolations(name, summary), "");
  summary["baseline"] = json::parse(R"({"status":"lost","reason":"?"})");
  EXPECT_NE(testing::SchemaViolations(name, summary), "");
}

TEST(CaseRecordTest, StringsOverSixtyFourKibAreCutWithTheirLengthStated) {
  const std::string big(70000, 'x');
  const json::value kept = KeptValue(json::parse(R"({"a":[")" + big + R"("],"b":"short","n":5})"));
  const std::string cut(kept.at("a").at(0).as_string());
  EXPECT_EQ(cut.size(), kKeptStringBytes + std::string("… [cut: 70000 bytes]").size());
  EXPECT_TRUE(cut.ends_with("x… [cut: 70000 bytes]"));
  EXPECT_EQ(kept.at("b"), "short");
  EXPECT_EQ(kept.at("n"), 5);
}

}  // namespace
}  // namespace skillrunner::eval
