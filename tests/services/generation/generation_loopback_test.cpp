// LLM_JSON_GENERATION end to end: SkillRunner -> LlmGenerationService ->
// RetryingProvider -> OpenAiProvider -> HttpClient -> a loopback server.
// Exact request bodies are asserted.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "tests/support/llm_test_bed.h"
#include "tests/support/openai_spec.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using test_support::LlmTestBed;
using test_support::OpenAiAnswer;

constexpr const char* kSchema =
    R"({"type":"object","required":["priority","category"],"additionalProperties":false,)"
    R"("properties":{"priority":{"type":"integer","minimum":1,"maximum":4},"category":{"enum":["bug","billing"]},)"
    R"("note":{"type":"string"}}})";

std::string TriageSkill(const std::string& model, const std::string& extra = "") {
  return "id: triage\ntemplate_type: LLM_JSON_GENERATION\nmodel: " + model +
         "\ntemperature: 0.7\nmax_output_tokens: 300\n"
         "prompt: { system: \"You triage tickets.\", user: \"Ticket: {{input.text}}\" }\n"
         "input_schema: { type: object, required: [text], properties: { text: { type: string } } }\n"
         "output_schema: " +
         std::string(kSchema) + "\n" + extra;
}

std::string SchemaInstruction() {
  return "Answer with one JSON value only (no prose, no Markdown code fence) that is valid against "
         "this JSON Schema:\n" +
         json::serialize(json::parse(kSchema));
}

// The first request of the triage skill on m-loop for the ticket "login broken".
json::value FirstLoopRequest() {
  json::value request = json::parse(R"({"model":"m-loop","messages":[
      {"role":"system","content":""},{"role":"user","content":"Ticket: login broken"}],
      "temperature":0.7,"max_completion_tokens":300})");
  request.at("messages").at(0).as_object()["content"] = "You triage tickets.\n\n" + SchemaInstruction();
  return request;
}

// `request` continued after `answer` with the feedback `turn`, colder: the
// continuation retry of design.md §5.1.
json::value Continued(json::value request, const std::string& answer, const std::string& turn) {
  auto& messages = request.at("messages").as_array();
  messages.push_back(json::object{{"role", "assistant"}, {"content", answer}});
  messages.push_back(json::object{{"role", "user"}, {"content", turn}});
  request.at("temperature") = 0.2;
  return request;
}

constexpr const char* kAnswerAgain =
    "Answer again with the corrected JSON only: one JSON value, no prose, no code fence.";

void ExpectValidAgainstSpec(const LlmTestBed& bed) {
  ASSERT_NE(test_support::OpenAiRequestSchema(), nullptr) << test_support::OpenAiSpecDir();
  for (const auto& body : bed.Bodies()) {
    for (const auto& e : test_support::OpenAiRequestSchema()->Validate(body)) {
      ADD_FAILURE() << "request not valid against the OpenAI spec: " << e.path << ": " << e.message;
    }
  }
}

class GenerationLoopbackTest : public ::testing::Test {
 protected:
  LlmTestBed bed_;
};

TEST_F(GenerationLoopbackTest, LoopModelRetriesOnceColderWithEveryErrorFedBack) {
  bed_.AddSkill("triage", TriageSkill("m-loop"));
  bed_.Start();
  const std::string first = "Sure:\n```json\n{\"priority\": \"high\", \"category\": \"bug\"}\n```";
  bed_.server().Enqueue({.body = OpenAiAnswer(first, "stop", 120, 30)});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})", "stop", 170, 12)});

  auto outcome = bed_.Invoke("triage", R"({"text":"login broken"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"({"priority":1,"category":"bug"})");

  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  json::value first_request = FirstLoopRequest();
  EXPECT_EQ(bodies[0], first_request);

  EXPECT_EQ(bodies[1], Continued(first_request, first,
                                 "Your answer does not match the JSON Schema. Every error, by JSON pointer:\n"
                                 "- /priority: expected integer, found string \"high\"\n" +
                                     std::string(kAnswerAgain)));

  EXPECT_EQ(outcome->metrics.mode, RunMode::kValidationLoop);
  EXPECT_EQ(outcome->metrics.attempts, 2);
  EXPECT_EQ(outcome->metrics.validation_retries, 1);
  EXPECT_EQ(outcome->metrics.input_tokens, 290);
  EXPECT_EQ(outcome->metrics.output_tokens, 42);
  ASSERT_EQ(outcome->attempts.size(), 2u);
  EXPECT_EQ(outcome->attempts[0].kind, AttemptKind::kValidation);
  EXPECT_EQ(outcome->attempts[0].repair, "fence");
  EXPECT_EQ(outcome->attempts[0].raw, first);
  EXPECT_EQ(outcome->attempts[0].temperature, 0.7);
  EXPECT_EQ(outcome->attempts[1].kind, AttemptKind::kOk);
  EXPECT_EQ(outcome->attempts[1].temperature, 0.2);
  ExpectValidAgainstSpec(bed_);
}

TEST_F(GenerationLoopbackTest, FreshRetriesRepeatTheOriginalMessagesWithEveryErrorAndNoAssistantTurn) {
  bed_.AddSkill("triage", TriageSkill("m-loop", "retry: { strategy: fresh, validation_retries: 2 }\n"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": "high", "category": "bug"})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 9, "category": "crash"})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})")});

  auto outcome = bed_.Invoke("triage", R"({"text":"login broken"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"({"priority":1,"category":"bug"})");

  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 3u);
  json::value first_request = FirstLoopRequest();
  EXPECT_EQ(bodies[0], first_request);
  // Each retry: the original messages (the schema in them, on the loop path) and one user
  // turn with every error of the answer before it; never the invalid answer.
  auto retry = [&](const std::string& errors) {
    json::value request = first_request;
    request.at("messages")
        .as_array()
        .push_back(json::object{
            {"role", "user"},
            {"content",
             "An earlier answer to this request did not match the JSON Schema. Every error, by JSON pointer:\n" +
                 errors + "\nAnswer again with the corrected JSON only: one JSON value, no prose, no code fence."}});
    request.at("temperature") = 0.2;
    return request;
  };
  EXPECT_EQ(bodies[1], retry("- /priority: expected integer, found string \"high\""));
  EXPECT_EQ(bodies[2], retry("- /category: expected one of [\"bug\",\"billing\"], found \"crash\"\n"
                             "- /priority: expected at most 4, found 9"));
  ASSERT_EQ(outcome->attempts.size(), 3u);
  EXPECT_EQ(outcome->attempts[0].kind, AttemptKind::kValidation);
  EXPECT_EQ(outcome->attempts[1].kind, AttemptKind::kValidation);
  EXPECT_EQ(outcome->attempts[2].kind, AttemptKind::kOk);
  EXPECT_EQ(outcome->metrics.validation_retries, 2);
  ExpectValidAgainstSpec(bed_);
}

TEST_F(GenerationLoopbackTest, AFreshRetryOnANativeModelKeepsItsResponseFormat) {
  bed_.AddSkill("triage", TriageSkill("m-native", "retry: { strategy: fresh }\n"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 7, "category": "bug", "note": null})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 2, "category": "bug", "note": null})")});

  auto outcome = bed_.Invoke("triage", R"({"text":"login broken"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  json::value expected = bodies[0];
  expected.at("messages")
      .as_array()
      .push_back(json::object{
          {"role", "user"},
          {"content",
           "An earlier answer to this request did not match the JSON Schema. Every error, by JSON pointer:\n"
           "- /priority: expected at most 4, found 7\n"
           "Answer again with the corrected JSON only: one JSON value, no prose, no code fence."}});
  expected.at("temperature") = 0.2;
  EXPECT_EQ(bodies[1], expected);
  EXPECT_EQ(bodies[0].at("messages").as_array().size(), 2u);  // system (no schema: it is native) and user
  EXPECT_TRUE(bodies[1].as_object().contains("response_format"));
}

TEST_F(GenerationLoopbackTest, LaxCoercionTakesAStringIntegerInOneRequestAndRecordsIt) {
  bed_.AddSkill("triage", TriageSkill("m-loop", "coercion: lax\n"));
  bed_.Start();
  const std::string answer = R"({"priority": "2", "category": "bug"})";
  bed_.server().Enqueue({.body = OpenAiAnswer(answer)});

  auto outcome = bed_.Invoke("triage", R"({"text":"login broken"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"({"priority":2,"category":"bug"})");
  EXPECT_EQ(bed_.Bodies().size(), 1u);
  ASSERT_EQ(outcome->attempts.size(), 1u);
  EXPECT_EQ(outcome->attempts[0].kind, AttemptKind::kOk);
  EXPECT_EQ(outcome->attempts[0].repair, "coerce");
  EXPECT_EQ(outcome->attempts[0].coerced, (std::vector<std::string>{"/priority"}));
  EXPECT_EQ(outcome->attempts[0].raw, answer);  // what the provider said, unconverted
  EXPECT_EQ(outcome->metrics.validation_retries, 0);
  json::value shown = ToJson(outcome);
  EXPECT_EQ(shown.at("attempts").at(0).at("coerced"), json::parse(R"(["/priority"])"));
}

TEST_F(GenerationLoopbackTest, StrictCoercionRetriesTheSameAnswerAndLaxNeverLosesPrecision) {
  for (const std::string extra : {"", "coercion: lax\n"}) {
    LlmTestBed bed;
    // strict (the default): "2" is a string where an integer is asked: a retry. lax: "2.5"
    // would lose its half as an integer, so it is not converted: a retry too.
    bed.AddSkill("triage", TriageSkill("m-loop", extra));
    bed.Start();
    const std::string priority = extra.empty() ? "\"2\"" : "\"2.5\"";
    bed.server().Enqueue({.body = OpenAiAnswer(R"({"priority": )" + priority + R"(, "category": "bug"})")});
    bed.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 2, "category": "bug"})")});
    auto outcome = bed.Invoke("triage", R"({"text":"login broken"})");
    ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
    ASSERT_EQ(bed.Bodies().size(), 2u) << extra;
    ASSERT_EQ(outcome->attempts.size(), 2u);
    EXPECT_EQ(outcome->attempts[0].kind, AttemptKind::kValidation);
    ASSERT_EQ(outcome->attempts[0].errors.size(), 1u);
    EXPECT_EQ(outcome->attempts[0].errors[0].message, "expected integer, found string " + priority);
    EXPECT_TRUE(outcome->attempts[0].coerced.empty());
    EXPECT_FALSE(outcome->attempts[0].repair.has_value());
  }
}

TEST_F(GenerationLoopbackTest, ASchemaValidAnswerANonEmptyRuleRejectsIsRetriedWithThePointer) {
  bed_.AddSkill("triage", TriageSkill("m-loop", "validators:\n  - non_empty: [/note]\n"));
  bed_.Start();
  const std::string first = R"({"priority": 1, "category": "bug", "note": ""})";
  bed_.server().Enqueue({.body = OpenAiAnswer(first)});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug", "note": "login"})")});

  auto outcome = bed_.Invoke("triage", R"({"text":"login broken"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[1], Continued(bodies[0], first,
                                 "Your answer matches the JSON Schema but breaks these rules, by JSON pointer:\n"
                                 "- /note: must not be empty, found an empty string\n" +
                                     std::string(kAnswerAgain)));
  ASSERT_EQ(outcome->attempts.size(), 2u);
  EXPECT_EQ(outcome->attempts[0].kind, AttemptKind::kRule);
  EXPECT_EQ(outcome->attempts[0].errors,
            (std::vector<FieldError>{{"/note", "must not be empty, found an empty string"}}));
  EXPECT_EQ(outcome->attempts[1].kind, AttemptKind::kOk);
  EXPECT_EQ(ToJson(outcome).at("attempts").at(0).at("kind"), "rule");
}

TEST_F(GenerationLoopbackTest, ARuleRejectingTwiceIsMaxRetriesExceededAndAGuardedRuleAppliesOnlyWhenItMatches) {
  bed_.AddSkill("triage", TriageSkill("m-loop",
                                      "validators:\n"
                                      "  - when: { path: /category, equals: billing }\n"
                                      "    non_empty: [/note]\n"));
  bed_.Start();
  // A bug needs no note: taken at once.
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})")});
  auto bug = bed_.Invoke("triage", R"({"text":"login broken"})");
  ASSERT_TRUE(bug) << json::serialize(ToJson(bug));
  EXPECT_EQ(bug->attempts.size(), 1u);
  // A billing ticket does, and twice without one is MAX_RETRIES_EXCEEDED with both attempts.
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 2, "category": "billing"})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 2, "category": "billing", "note": ""})")});
  auto billing = bed_.Invoke("triage", R"({"text":"refund"})");
  ASSERT_FALSE(billing);
  const auto& failure = billing.error();
  EXPECT_EQ(failure.error.code, ErrorCode::kMaxRetriesExceeded);
  EXPECT_EQ(failure.error.message, "the answer still breaks the skill's validators after 1 retry (1 error)");
  const std::vector<FieldError> absent{
      {"/note", "must not be empty, found absent (required when /category is \"billing\")"}};
  const std::vector<FieldError> empty{
      {"/note", "must not be empty, found an empty string (required when /category is \"billing\")"}};
  EXPECT_EQ(failure.error.errors, empty);
  ASSERT_EQ(failure.attempts.size(), 2u);
  EXPECT_EQ(failure.attempts[0].kind, AttemptKind::kRule);
  EXPECT_EQ(failure.attempts[0].errors, absent);
  EXPECT_EQ(failure.attempts[1].kind, AttemptKind::kRule);
}

// An exec rule in Python: a billing ticket is never above priority 2.
constexpr const char* kBillingRule = R"(import json, sys
answer = json.load(sys.stdin)
rejections = []
if answer["category"] == "billing" and answer["priority"] > 2:
    rejections.append({"path": "/priority", "message": "a billing ticket is at most priority 2"})
print(json.dumps(rejections))
)";

TEST_F(GenerationLoopbackTest, AnExecRuleRejectionIsRetriedWithItsMessageByPointer) {
  bed_.AddSkill("triage", TriageSkill("m-loop", "validators:\n  - exec: [python3, rules.py]\n"));
  bed_.tree().Write("skills/triage/rules.py", kBillingRule);
  bed_.Start();
  const std::string first = R"({"priority": 4, "category": "billing"})";
  bed_.server().Enqueue({.body = OpenAiAnswer(first)});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 2, "category": "billing"})")});

  auto outcome = bed_.Invoke("triage", R"({"text":"login broken"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"({"priority":2,"category":"billing"})");
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  json::value expected = FirstLoopRequest();
  EXPECT_EQ(bodies[0], expected);
  EXPECT_EQ(bodies[1], Continued(expected, first,
                                 "Your answer matches the JSON Schema but breaks these rules, by JSON pointer:\n"
                                 "- /priority: a billing ticket is at most priority 2\n" +
                                     std::string(kAnswerAgain)));
  ASSERT_EQ(outcome->attempts.size(), 2u);
  EXPECT_EQ(outcome->attempts[0].kind, AttemptKind::kRule);
  EXPECT_EQ(outcome->attempts[0].errors,
            (std::vector<FieldError>{{"/priority", "a billing ticket is at most priority 2"}}));
  EXPECT_EQ(outcome->attempts[1].kind, AttemptKind::kOk);
}

TEST_F(GenerationLoopbackTest, AnExecRuleRejectingTwiceIsMaxRetriesExceededAfterTheNonEmptyRulesBeforeIt) {
  bed_.AddSkill("triage",
                TriageSkill("m-loop", "validators:\n  - non_empty: [/note]\n  - exec: [python3, rules.py]\n"));
  bed_.tree().Write("skills/triage/rules.py", kBillingRule);
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 3, "category": "billing", "note": "refund"})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 4, "category": "billing"})")});

  auto outcome = bed_.Invoke("triage", R"({"text":"refund"})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(bed_.server().request_count(), 2u);
  const auto& failure = outcome.error();
  EXPECT_EQ(failure.error.code, ErrorCode::kMaxRetriesExceeded);
  EXPECT_EQ(failure.error.message, "the answer still breaks the skill's validators after 1 retry (2 errors)");
  const std::vector<FieldError> both{{"/note", "must not be empty, found absent"},
                                     {"/priority", "a billing ticket is at most priority 2"}};
  EXPECT_EQ(failure.error.errors, both);
  ASSERT_EQ(failure.attempts.size(), 2u);
  EXPECT_EQ(failure.attempts[0].kind, AttemptKind::kRule);
  EXPECT_EQ(failure.attempts[0].errors,
            (std::vector<FieldError>{{"/priority", "a billing ticket is at most priority 2"}}));
  EXPECT_EQ(failure.attempts[1].kind, AttemptKind::kRule);
  EXPECT_EQ(failure.attempts[1].errors, both);
}

// A validator that does not answer with its list fails the invocation: one
// request, the answer it was given on record as a handler attempt.
struct BrokenValidator {
  std::string rule;     // the validators: entry
  std::string name;     // details.validator
  std::string message;  // HANDLER_FAILED's message
  json::object details;
};

TEST_F(GenerationLoopbackTest, AValidatorThatCrashesHangsOrPrintsGarbageIsHandlerFailedNamingIt) {
  const std::vector<BrokenValidator> cases = {
      {"exec: [python3, -c, \"import sys; sys.stderr.write('boom'); sys.exit(3)\"]",
       "python3 -c import sys; sys.stderr.write('boom'); sys.exit(3)",
       "validator \"python3 -c import sys; sys.stderr.write('boom'); sys.exit(3)\" exited with status 3",
       {{"exit_status", 3}, {"stderr_tail", "boom"}}},
      {"exec: [sleep, \"10\"]\n    timeout_ms: 200",
       "sleep 10",
       "validator \"sleep 10\" timed out after 200 ms",
       {{"exit_status", 137}, {"stderr_tail", ""}, {"signal", 9}, {"timeout_ms", 200}}},
      {"exec: [echo, all good]",
       "echo all good",
       "validator \"echo all good\" output is not JSON: syntax error at offset 0",
       {{"exit_status", 0}, {"stderr_tail", ""}}},
      {"exec: [echo, '[{\"path\": \"priority\", \"message\": \"x\"}]']",
       "echo [{\"path\": \"priority\", \"message\": \"x\"}]",
       "validator \"echo [{\"path\": \"priority\", \"message\": \"x\"}]\" must print a list of {\"path\", "
       "\"message\"}: /0/path is not a JSON pointer",
       {{"exit_status", 0}, {"stderr_tail", ""}}},
      {"exec: [./missing.py]",
       "./missing.py",
       "validator \"./missing.py\": cannot start './missing.py': No such file or directory",
       {{"exit_status", 127}, {"stderr_tail", ""}}},
  };
  for (std::size_t i = 0; i < cases.size(); ++i) {
    bed_.AddSkill("v" + std::to_string(i), "id: v" + std::to_string(i) + TriageSkill("m-loop").substr(10) +
                                               "validators:\n  - " + cases[i].rule + "\n");
  }
  bed_.Start();
  bed_.server().SetDefault({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})")});
  for (std::size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(cases[i].rule);
    std::size_t before = bed_.server().request_count();
    auto outcome = bed_.Invoke("v" + std::to_string(i), R"({"text":"x"})");
    ASSERT_FALSE(outcome);
    EXPECT_EQ(bed_.server().request_count(), before + 1);
    const auto& failure = outcome.error();
    EXPECT_EQ(failure.error.code, ErrorCode::kHandlerFailed);
    EXPECT_EQ(failure.error.message, cases[i].message);
    json::object details = cases[i].details;
    details["validator"] = cases[i].name;
    EXPECT_EQ(json::serialize(failure.error.details), json::serialize(details));
    ASSERT_EQ(failure.attempts.size(), 1u);
    EXPECT_EQ(failure.attempts[0].kind, AttemptKind::kHandler);
    EXPECT_EQ(failure.attempts[0].raw, R"({"priority": 1, "category": "bug"})");
    EXPECT_EQ(failure.attempts[0].errors, (std::vector<FieldError>{{"", cases[i].message}}));
  }
}

TEST_F(GenerationLoopbackTest, TwoInvalidAnswersAreMaxRetriesExceededWithBothAttempts) {
  bed_.AddSkill("triage", TriageSkill("m-loop"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 9, "category": "bug"})", "stop", 100, 10)});
  bed_.server().Enqueue({.body = OpenAiAnswer("I think it is a bug.", "stop", 150, 7)});
  bed_.server().SetDefault({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})")});

  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(bed_.server().request_count(), 2u);
  const auto& failure = outcome.error();
  EXPECT_EQ(failure.error.code, ErrorCode::kMaxRetriesExceeded);
  EXPECT_EQ(failure.error.message, "the answer is still not JSON after 1 retry");
  ASSERT_EQ(failure.attempts.size(), 2u);
  EXPECT_EQ(failure.attempts[0].kind, AttemptKind::kValidation);
  EXPECT_EQ(failure.attempts[0].errors, (std::vector<FieldError>{{"/priority", "expected at most 4, found 9"}}));
  EXPECT_EQ(failure.attempts[0].raw, R"({"priority": 9, "category": "bug"})");
  EXPECT_EQ(failure.attempts[1].kind, AttemptKind::kParse);
  EXPECT_EQ(failure.attempts[1].raw, "I think it is a bug.");
  ASSERT_EQ(failure.attempts[1].errors.size(), 1u);
  EXPECT_EQ(failure.attempts[1].errors[0].message.starts_with("not JSON: "), true);
  EXPECT_EQ(failure.metrics.input_tokens, 250);
  EXPECT_EQ(failure.metrics.output_tokens, 17);
  EXPECT_EQ(failure.metrics.attempts, 2);
}

TEST_F(GenerationLoopbackTest, NativeModelSendsAStrictSchemaAndMapsNullsBack) {
  bed_.AddSkill("triage", TriageSkill("m-native"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority":2,"category":"billing","note":null})")});
  auto outcome = bed_.Invoke("triage", R"({"text":"refund"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"({"priority":2,"category":"billing"})");
  EXPECT_EQ(outcome->metrics.mode, RunMode::kNativeStrict);
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0].at("messages").at(0).at("content"), "You triage tickets.\n\nAnswer with JSON only.");
  const json::value& format = bodies[0].at("response_format");
  EXPECT_EQ(format.at("type"), "json_schema");
  EXPECT_EQ(format.at("json_schema").at("strict"), true);
  EXPECT_EQ(format.at("json_schema").at("name"), "triage");
  const json::value& schema = format.at("json_schema").at("schema");
  EXPECT_EQ(schema.at("additionalProperties"), false);
  EXPECT_EQ(schema.at("required"), json::parse(R"(["priority","category","note"])"));
  EXPECT_EQ(schema.at("properties").at("note").at("type"), json::parse(R"(["string","null"])"));
  ExpectValidAgainstSpec(bed_);
}

// design.md §9.2 any root: a list of ticket labels.
std::string LabelsSkill(const std::string& model) {
  return "id: labels\ntemplate_type: LLM_JSON_GENERATION\nmodel: " + model +
         "\nmax_output_tokens: 100\nprompt: { system: \"You label tickets.\", user: \"Ticket: {{input.text}}\" }\n"
         "input_schema: { type: object, required: [text], properties: { text: { type: string } } }\n"
         "output_schema: { type: array, minItems: 1, uniqueItems: true, items: { enum: [bug, billing, login] } }\n";
}

constexpr const char* kWrappedLabels =
    R"j({"type":"object","properties":{"value":{"type":"array","minItems":1,"items":{"enum":["bug","billing","login"]},)j"
    R"j("description":"(uniqueItems true)"}},)j"
    R"("required":["value"],"additionalProperties":false})";

TEST_F(GenerationLoopbackTest, AnArrayRootOnANativeOpenAiModelGoesOnTheWireWrappedAndComesBackBare) {
  bed_.AddSkill("labels", LabelsSkill("m-native"));
  bed_.Start();
  const std::string first = R"({"value":["bug","bug"]})";
  bed_.server().Enqueue({.body = OpenAiAnswer(first)});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"value":["login","bug"]})")});
  auto outcome = bed_.Invoke("labels", R"({"text":"login broken"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"(["login","bug"])");
  EXPECT_EQ(outcome->metrics.mode, RunMode::kNativeStrict);
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  json::value expected = json::parse(R"({"model":"m-native","messages":[
      {"role":"system","content":"You label tickets.\n\nAnswer with JSON only."},
      {"role":"user","content":"Ticket: login broken"}],
      "temperature":0.7,"max_completion_tokens":100,
      "response_format":{"type":"json_schema","json_schema":{"name":"labels","schema":null,"strict":true}}})");
  expected.at("response_format").at("json_schema").at("schema") = json::parse(kWrappedLabels);
  EXPECT_EQ(bodies[0], expected);
  // uniqueItems (not on the wire) is checked here, on the bare array, and
  // fed back under /value, where the model wrote it.
  ASSERT_EQ(outcome->attempts.size(), 2u);
  EXPECT_EQ(outcome->attempts[0].kind, AttemptKind::kValidation);
  EXPECT_EQ(outcome->attempts[0].raw, first);
  EXPECT_EQ(outcome->attempts[0].errors,
            (std::vector<FieldError>{{"", "expected unique items, found item 1 equal to item 0"}}));
  EXPECT_EQ(bodies[1], Continued(expected, first,
                                 "Your answer does not match the JSON Schema. Every error, by JSON pointer:\n"
                                 "- /value: expected unique items, found item 1 equal to item 0\n" +
                                     std::string(kAnswerAgain)));
  EXPECT_EQ(outcome->attempts[1].raw, R"({"value":["login","bug"]})");
  ExpectValidAgainstSpec(bed_);
}

TEST_F(GenerationLoopbackTest, AnArrayRootOnANativeAnthropicModelGoesOnTheWireWrappedAndComesBackBare) {
  bed_.AddSkill("labels", LabelsSkill("m-native"));
  bed_.Start("anthropic");
  bed_.server().Enqueue({.body = R"({"id":"msg_1","type":"message","role":"assistant","model":"m-native",)"
                                 R"("content":[{"type":"text","text":"{\"value\":[\"billing\"]}"}],)"
                                 R"("stop_reason":"end_turn","usage":{"input_tokens":20,"output_tokens":5}})"});
  auto outcome = bed_.Invoke("labels", R"({"text":"refund"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"(["billing"])");
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0].at("output_config"),
            (json::value{{"format", {{"type", "json_schema"}, {"schema", json::parse(kWrappedLabels)}}}}));
  ASSERT_EQ(outcome->attempts.size(), 1u);
  EXPECT_EQ(outcome->attempts[0].raw, R"({"value":["billing"]})");
}

// Gemini's strict dialect: the schema's keywords it takes, optional
// properties left optional, any root unwrapped, the rest client-side.
TEST_F(GenerationLoopbackTest, ANativeGeminiModelSendsItsResponseJsonSchema) {
  bed_.AddSkill("triage", TriageSkill("m-native"));
  bed_.Start("gemini");
  bed_.server().Enqueue(
      {.body = R"({"candidates":[{"content":{"parts":[{"text":"{\"priority\":2,\"category\":\"bug\"}"}]},)"
               R"("finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":30,"candidatesTokenCount":9}})"});
  auto outcome = bed_.Invoke("triage", R"({"text":"crash"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"({"priority":2,"category":"bug"})");
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_EQ(bodies[0],
            json::parse(R"({"systemInstruction":{"parts":[{"text":"You triage tickets.\n\nAnswer with JSON only."}]},
      "contents":[{"role":"user","parts":[{"text":"Ticket: crash"}]}],
      "generationConfig":{"temperature":0.7,"maxOutputTokens":300,"responseMimeType":"application/json",
        "responseJsonSchema":{"type":"object","required":["priority","category"],"properties":{
          "priority":{"type":"integer","minimum":1,"maximum":4},"category":{"enum":["bug","billing"]},
          "note":{"type":"string"}},"additionalProperties":false}}})"));
  EXPECT_EQ(bed_.server().requests()[0].target, "/v1beta/models/m-native:generateContent");
}

TEST_F(GenerationLoopbackTest, AnArrayRootOnTheLoopPathIsAskedForAndTakenBare) {
  bed_.AddSkill("labels", LabelsSkill("m-loop"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"(["bug"])")});
  auto outcome = bed_.Invoke("labels", R"({"text":"crash"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"(["bug"])");
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 1u);
  EXPECT_FALSE(bodies[0].as_object().contains("response_format"));
  EXPECT_EQ(bodies[0].at("messages").at(0).at("content"),
            "You label tickets.\n\nAnswer with one JSON value only (no prose, no Markdown code fence) that is valid "
            "against this JSON Schema:\n"
            R"({"type":"array","minItems":1,"uniqueItems":true,"items":{"enum":["bug","billing","login"]}})");
}

// An OpenAI answer that calls `name` with `arguments` (JSON text).
std::string OpenAiToolCall(const std::string& name, const std::string& arguments) {
  json::value body = json::parse(OpenAiAnswer("", "tool_calls"));
  auto& message = body.at("choices").at(0).at("message").as_object();
  message["content"] = nullptr;
  message["tool_calls"] = json::array{
      json::object{{"id", "call_1"}, {"type", "function"}, {"function", {{"name", name}, {"arguments", arguments}}}}};
  return json::serialize(body);
}

TEST_F(GenerationLoopbackTest, ToolModeOnOpenAiForcesOneToolAndTakesItsArgumentsAsTheAnswer) {
  bed_.AddSkill("triage", TriageSkill("m-tool"));
  bed_.Start();
  // Text instead of the call: a parse failure, fed back with the tool to call.
  const std::string text = R"({"priority": 2, "category": "bug"})";
  bed_.server().Enqueue({.body = OpenAiAnswer(text)});
  bed_.server().Enqueue({.body = OpenAiToolCall("triage", R"({"priority":2,"category":"bug","note":null})")});
  auto outcome = bed_.Invoke("triage", R"({"text":"crash"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"({"priority":2,"category":"bug"})");
  EXPECT_EQ(outcome->metrics.mode, RunMode::kTool);
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  json::value first = json::parse(R"({"model":"m-tool","messages":[
      {"role":"system","content":"You triage tickets.\n\nAnswer with JSON only."},
      {"role":"user","content":"Ticket: crash"}],
      "temperature":0.7,"max_completion_tokens":300,
      "tools":[{"type":"function","function":{"name":"triage","parameters":null,"strict":true}}],
      "tool_choice":{"type":"function","function":{"name":"triage"}}})");
  first.at("tools").at(0).at("function").at("parameters") =
      json::parse(R"({"type":"object","properties":{"priority":{"type":"integer","minimum":1,"maximum":4},)"
                  R"("category":{"enum":["bug","billing"]},"note":{"type":["string","null"]}},)"
                  R"("required":["priority","category","note"],"additionalProperties":false})");
  EXPECT_EQ(bodies[0], first);
  EXPECT_EQ(bodies[1], Continued(first, text,
                                 "Your answer could not be parsed as JSON:\n"
                                 "- (root): the model answered with text instead of calling the tool \"triage\"\n"
                                 "Answer again by calling the tool \"triage\" with the corrected arguments."));
  ASSERT_EQ(outcome->attempts.size(), 2u);
  EXPECT_EQ(outcome->attempts[0].kind, AttemptKind::kParse);
  EXPECT_EQ(outcome->attempts[1].kind, AttemptKind::kOk);
  EXPECT_EQ(outcome->attempts[1].raw, R"({"priority":2,"category":"bug","note":null})");
  ExpectValidAgainstSpec(bed_);
}

TEST_F(GenerationLoopbackTest, ToolModeOnAnthropicForcesOneToolAndTakesItsInputAsTheAnswer) {
  bed_.AddSkill("triage", TriageSkill("m-tool"));
  bed_.Start("anthropic");
  bed_.server().Enqueue({.body = R"({"id":"msg_1","type":"message","role":"assistant","model":"m-tool",)"
                                 R"("content":[{"type":"tool_use","id":"toolu_1","name":"triage",)"
                                 R"("input":{"priority":3,"category":"billing"}}],)"
                                 R"("stop_reason":"tool_use","usage":{"input_tokens":30,"output_tokens":9}})"});
  auto outcome = bed_.Invoke("triage", R"({"text":"refund"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"({"priority":3,"category":"billing"})");
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 1u);
  json::value expected = json::parse(R"({"model":"m-tool","max_tokens":300,
      "system":[{"type":"text","text":"You triage tickets.\n\nAnswer with JSON only.","cache_control":{"type":"ephemeral"}}],
      "messages":[{"role":"user","content":"Ticket: refund"}],"temperature":0.7,
      "tools":[{"name":"triage","input_schema":null,"strict":true}],
      "tool_choice":{"type":"tool","name":"triage"}})");
  expected.at("tools").at(0).at("input_schema") = json::parse(
      R"j({"type":"object","required":["priority","category"],"properties":{"priority":{"type":"integer",)j"
      R"j("description":"(minimum 1, maximum 4)"},"category":{"enum":["bug","billing"]},"note":{"type":"string"}},)j"
      R"j("additionalProperties":false})j");
  EXPECT_EQ(bodies[0], expected);
}

// design.md §9.3 fallbacks: a primary that answers 503 until its transient
// budget is spent hands the generation to its fallback.
TEST_F(GenerationLoopbackTest, APrimaryDownForGoodFallsBackAndTheAttemptsShowBothModels) {
  bed_.AddSkill("triage", TriageSkill("m-primary"));
  bed_.Start("openai",
             "  m-primary: { provider: llm, structured_output: none, fallbacks: [m-backup] }\n"
             "  m-backup: { provider: llm, structured_output: none }\n");
  for (int i = 0; i < 4; ++i) {
    bed_.server().Enqueue({.status = 503, .body = test_support::OpenAiError("overloaded", "server_error")});
  }
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 2, "category": "bug"})")});
  auto outcome = bed_.Invoke("triage", R"({"text":"crash"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 5u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(bodies[i].at("model"), "m-primary");
  json::value backup = bodies[0];
  backup.at("model") = "m-backup";
  EXPECT_EQ(bodies[4], backup);  // the same first request, on the other model
  ASSERT_EQ(outcome->attempts.size(), 5u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(outcome->attempts[i].kind, AttemptKind::kTransient);
    EXPECT_EQ(outcome->attempts[i].model, "m-primary");
    EXPECT_EQ(outcome->attempts[i].provider, "llm");
  }
  EXPECT_EQ(outcome->attempts[4].kind, AttemptKind::kOk);
  EXPECT_EQ(outcome->attempts[4].model, "m-backup");
  EXPECT_EQ(outcome->metrics.fallbacks, 1);
  EXPECT_EQ(outcome->metrics.transient_retries, 3);
  EXPECT_FALSE(outcome->metrics.escalated);
  EXPECT_EQ(ToJson(outcome).at("metrics").at("fallbacks"), 1);
}

// design.md §9.3 escalate_to: after MAX_RETRIES_EXCEEDED, one request to the
// stronger model with the last errors.
TEST_F(GenerationLoopbackTest, SpentRetriesEscalateOnceToTheStrongerModelWithTheLastErrors) {
  bed_.AddSkill("triage", TriageSkill("m-small"));
  bed_.Start("openai",
             "  m-small: { provider: llm, structured_output: none, escalate_to: m-large }\n"
             "  m-large: { provider: llm, structured_output: none }\n");
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 9, "category": "bug"})")});
  const std::string second = R"({"priority": 7, "category": "bug"})";
  bed_.server().Enqueue({.body = OpenAiAnswer(second)});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 4, "category": "bug"})")});
  auto outcome = bed_.Invoke("triage", R"({"text":"login broken"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  EXPECT_EQ(json::serialize(outcome->output), R"({"priority":4,"category":"bug"})");
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 3u);
  json::value escalation = FirstLoopRequest();
  escalation.at("model") = "m-large";
  escalation.at("temperature") = 0.2;
  escalation.at("messages")
      .as_array()
      .push_back(json::object{
          {"role", "user"},
          {"content",
           "An earlier answer to this request did not match the JSON Schema. Every error, by JSON pointer:\n"
           "- /priority: expected at most 4, found 7\n" +
               std::string(kAnswerAgain)}});
  EXPECT_EQ(bodies[2], escalation);
  ASSERT_EQ(outcome->attempts.size(), 3u);
  EXPECT_EQ(outcome->attempts[0].kind, AttemptKind::kValidation);
  EXPECT_EQ(outcome->attempts[1].kind, AttemptKind::kValidation);
  EXPECT_EQ(outcome->attempts[1].model, "m-small");
  EXPECT_EQ(outcome->attempts[2].kind, AttemptKind::kOk);
  EXPECT_EQ(outcome->attempts[2].model, "m-large");
  EXPECT_TRUE(outcome->metrics.escalated);
  EXPECT_EQ(outcome->metrics.fallbacks, 0);
  // Escalated and still wrong: MAX_RETRIES_EXCEEDED with the stronger model's errors.
  for (const char* answer : {R"({"priority": 9, "category": "bug"})", R"({"priority": 8, "category": "bug"})",
                             R"({"priority": 6, "category": "bug"})"}) {
    bed_.server().Enqueue({.body = OpenAiAnswer(answer)});
  }
  auto failed = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().error.code, ErrorCode::kMaxRetriesExceeded);
  EXPECT_EQ(failed.error().error.errors, (std::vector<FieldError>{{"/priority", "expected at most 4, found 6"}}));
  EXPECT_EQ(failed.error().attempts.size(), 3u);
  EXPECT_TRUE(failed.error().metrics.escalated);
  EXPECT_EQ(bed_.server().request_count(), 6u);
}

// design.md §9.4: each attempt's cost at the model's price, summed for the
// invocation, cached input at its own price, a failed request at 0.
TEST_F(GenerationLoopbackTest, APriceTableGivesEachAttemptAndTheInvocationItsCost) {
  bed_.AddSkill("triage", TriageSkill("m-priced"));
  bed_.Start("openai",
             "  m-priced: { provider: llm, structured_output: none,\n"
             "              price: { input: 2.5, cached_input: 1.25, output: 10 } }\n");
  bed_.server().Enqueue({.status = 503, .body = test_support::OpenAiError("overloaded", "server_error")});
  json::value cached = json::parse(OpenAiAnswer(R"({"priority": 9, "category": "bug"})", "stop", 1200, 30));
  cached.at("usage").as_object()["prompt_tokens_details"] = json::object{{"cached_tokens", 1024}};
  bed_.server().Enqueue({.body = json::serialize(cached)});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})", "stop", 1300, 12)});
  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  ASSERT_EQ(outcome->attempts.size(), 3u);
  EXPECT_EQ(outcome->attempts[0].cost_usd, 0.0);  // the 503 is not billed
  // (1200 - 1024) x 2.5 + 1024 x 1.25 + 30 x 10, per million
  EXPECT_DOUBLE_EQ(*outcome->attempts[1].cost_usd, (176 * 2.5 + 1024 * 1.25 + 30 * 10) / 1e6);
  EXPECT_EQ(outcome->attempts[1].cached_input_tokens, 1024);
  EXPECT_DOUBLE_EQ(*outcome->attempts[2].cost_usd, (1300 * 2.5 + 12 * 10) / 1e6);
  EXPECT_DOUBLE_EQ(*outcome->metrics.cost_usd, (176 * 2.5 + 1024 * 1.25 + 30 * 10 + 1300 * 2.5 + 12 * 10) / 1e6);
  EXPECT_EQ(ToJson(outcome).at("metrics").at("cost_usd").as_double(), *outcome->metrics.cost_usd);
  // A failure costs what its attempts cost; an unpriced model's is null.
  bed_.server().Enqueue({.body = OpenAiAnswer("no", "stop", 100, 2)});
  bed_.server().Enqueue({.body = OpenAiAnswer("still no", "stop", 100, 3)});
  auto failed = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_FALSE(failed);
  EXPECT_DOUBLE_EQ(*failed.error().metrics.cost_usd, (200 * 2.5 + 5 * 10) / 1e6);
}

// design.md §9.4 max_cost_usd: the first call fits the budget, the retry's
// worst case does not: BUDGET_EXCEEDED after one request, with its attempt.
TEST_F(GenerationLoopbackTest, ABudgetThatAllowsTheFirstCallButNotTheRetryStopsAfterOneRequest) {
  bed_.AddSkill("triage", TriageSkill("m-priced", "max_cost_usd: 0.005\n"));
  bed_.Start("openai", "  m-priced: { provider: llm, structured_output: none, price: { input: 5, output: 15 } }\n");
  // A call's worst case is its prompt (estimated) at $5 and 300 output tokens at $15 a million: the
  // first call's fits $0.005; after it cost $0.00105, the retry's (about $0.0052, its prompt longer by the
  // answer and the errors) does not fit what is left.
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 9, "category": "bug"})", "stop", 120, 30)});
  bed_.server().SetDefault({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})")});
  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(bed_.server().request_count(), 1u);
  const auto& failure = outcome.error();
  EXPECT_EQ(failure.error.code, ErrorCode::kBudgetExceeded);
  ASSERT_EQ(failure.attempts.size(), 1u);
  EXPECT_EQ(failure.attempts[0].kind, AttemptKind::kValidation);
  const double first = (120 * 5 + 30 * 15) / 1e6;
  EXPECT_DOUBLE_EQ(*failure.metrics.cost_usd, first);
  EXPECT_DOUBLE_EQ(failure.error.details.at("spent_usd").as_double(), first);
  EXPECT_EQ(failure.error.details.at("max_cost_usd").as_double(), 0.005);
  const double worst = failure.error.details.at("next_call_worst_usd").as_double();
  EXPECT_GT(first + worst, 0.005);
  EXPECT_TRUE(failure.error.message.starts_with("the next request to m-priced could cost up to $"))
      << failure.error.message;
  EXPECT_EQ(ExitStatusFor(ErrorCode::kBudgetExceeded), 4);
  EXPECT_EQ(JsonRpcCodeFor(ErrorCode::kBudgetExceeded), -32004);
  // A request may lower the budget, never raise it: with 0.001 not even the first call is made.
  InvocationOptions tight;
  tight.max_cost_usd = 0.001;
  std::size_t before = bed_.server().request_count();
  auto none = bed_.Invoke("triage", R"({"text":"x"})", tight);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().error.code, ErrorCode::kBudgetExceeded);
  EXPECT_EQ(bed_.server().request_count(), before);
  EXPECT_TRUE(none.error().attempts.empty());
  InvocationOptions loose;
  loose.max_cost_usd = 100;
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 9, "category": "bug"})", "stop", 120, 30)});
  auto capped = bed_.Invoke("triage", R"({"text":"x"})", loose);
  ASSERT_FALSE(capped);
  EXPECT_EQ(capped.error().error.code, ErrorCode::kBudgetExceeded);
}

// design.md §9.4 prompt caching: a retry's request starts with the first
// request's exact bytes, up to where the echoed answer begins.
TEST_F(GenerationLoopbackTest, ARetryRepeatsTheFirstRequestsBytesUpToTheEchoedAnswer) {
  for (const std::string kind : {"openai", "anthropic"}) {
    SCOPED_TRACE(kind);
    LlmTestBed bed;
    bed.AddSkill("triage", TriageSkill("m-loop"));
    bed.Start(kind);
    const std::string wrong = R"({"priority": 9, "category": "bug"})";
    const std::string right = R"({"priority": 1, "category": "bug"})";
    if (kind == "openai") {
      bed.server().Enqueue({.body = OpenAiAnswer(wrong)});
      bed.server().Enqueue({.body = OpenAiAnswer(right)});
    } else {
      for (const auto& text : {wrong, right}) {
        json::object answer{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                            {"stop_reason", "end_turn"},
                            {"usage", {{"input_tokens", 10}, {"output_tokens", 5}}}};
        bed.server().Enqueue({.body = json::serialize(answer)});
      }
    }
    auto outcome = bed.Invoke("triage", R"({"text":"x"})");
    ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
    auto requests = bed.server().requests();
    ASSERT_EQ(requests.size(), 2u);
    const std::string& first = requests[0].body;
    const std::string& retry = requests[1].body;
    const std::size_t echoed = retry.find(R"({"role":"assistant")");
    ASSERT_NE(echoed, std::string::npos) << retry;
    // The first request's messages end where the retry's ",{\"role\":\"assistant\"" begins.
    ASSERT_EQ(retry[echoed - 1], ',');
    EXPECT_EQ(first[echoed - 1], ']');
    EXPECT_EQ(retry.substr(0, echoed - 1), first.substr(0, echoed - 1));
  }
}

// Anthropic: the stable prefix (system prompt and schema) carries
// cache_control; a session's earlier mistakes follow it in a block of their own.
TEST_F(GenerationLoopbackTest, AnthropicMarksTheStablePrefixForThePromptCache) {
  bed_.AddSkill("triage", TriageSkill("m-loop"));
  bed_.Start("anthropic");
  auto answer = [](const std::string& text) {
    return json::serialize(json::object{{"content", json::array{json::object{{"type", "text"}, {"text", text}}}},
                                        {"stop_reason", "end_turn"},
                                        {"usage", {{"input_tokens", 10}, {"output_tokens", 5}}}});
  };
  bed_.server().Enqueue({.body = answer(R"({"priority": 9, "category": "bug"})")});
  bed_.server().Enqueue({.body = answer(R"({"priority": 1, "category": "bug"})")});
  InvocationOptions options;
  options.session = "s1";
  ASSERT_TRUE(bed_.Invoke("triage", R"({"text":"x"})", options));
  bed_.server().Enqueue({.body = answer(R"({"priority": 1, "category": "bug"})")});
  ASSERT_TRUE(bed_.Invoke("triage", R"({"text":"y"})", options));
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 3u);
  const json::value stable = json::object{{"type", "text"},
                                          {"text", "You triage tickets.\n\n" + SchemaInstruction()},
                                          {"cache_control", json::object{{"type", "ephemeral"}}}};
  EXPECT_EQ(bodies[0].at("system"), json::value(json::array{stable}));
  const json::array& later = bodies[2].at("system").as_array();
  ASSERT_EQ(later.size(), 2u);
  EXPECT_EQ(later[0], stable);
  EXPECT_TRUE(later[1].at("text").as_string().starts_with("Earlier answers in this session made these mistakes"));
  EXPECT_FALSE(later[1].as_object().contains("cache_control"));
}

TEST_F(GenerationLoopbackTest, AnUnpricedModelsCostIsNull) {
  bed_.AddSkill("triage", TriageSkill("m-loop"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})")});
  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_TRUE(outcome);
  EXPECT_FALSE(outcome->attempts[0].cost_usd.has_value());
  json::value shown = ToJson(outcome);
  EXPECT_TRUE(shown.at("attempts").at(0).at("cost_usd").is_null());
  EXPECT_TRUE(shown.at("metrics").at("cost_usd").is_null());
}

TEST_F(GenerationLoopbackTest, StrictAnswerBreakingAMaximumIsCaughtAndRetriedOnce) {
  bed_.AddSkill("triage", TriageSkill("m-native"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority":7,"category":"bug","note":null})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority":4,"category":"bug","note":"ok"})")});
  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_TRUE(outcome);
  EXPECT_EQ(json::serialize(outcome->output), R"({"priority":4,"category":"bug","note":"ok"})");
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[1].at("messages").at(3).at("content").as_string().find("- /priority: expected at most 4, found 7") !=
                json::string::npos,
            true);
  EXPECT_EQ(bodies[1].at("response_format"), bodies[0].at("response_format"));
  EXPECT_EQ(outcome->metrics.validation_retries, 1);
}

TEST_F(GenerationLoopbackTest, TruncationIsTruncatedAndTheCutTextIsNeverResent) {
  bed_.AddSkill("triage", TriageSkill("m-loop"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "cat)", "length", 50, 300)});
  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().error.code, ErrorCode::kTruncated);
  EXPECT_EQ(outcome.error().error.message, "the answer was cut off after 300 output tokens (max_output_tokens 300)");
  EXPECT_EQ(bed_.server().request_count(), 1u);
  EXPECT_EQ(outcome.error().attempts[0].kind, AttemptKind::kTruncated);
  EXPECT_EQ(outcome.error().metrics.output_tokens, 300);
}

// What a real llama.cpp server with a 512-token context did: `length` after
// 257 output tokens of a 1024 budget.
TEST_F(GenerationLoopbackTest, TruncationBeforeTheBudgetSaysTheContextWindowMayHaveFilled) {
  bed_.AddSkill("triage", TriageSkill("m-loop"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "cat)", "length", 255, 257)});
  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().error.code, ErrorCode::kTruncated);
  EXPECT_EQ(outcome.error().error.message,
            "the answer was cut off after 257 output tokens (max_output_tokens 300); the prompt and answer may "
            "have filled the model's context window");
  EXPECT_EQ(outcome.error().attempts[0].errors.at(0).message, outcome.error().error.message);
}

TEST_F(GenerationLoopbackTest, TruncationRetryDoublesTheBudgetWithTheOriginalMessages) {
  bed_.AddSkill("triage", TriageSkill("m-loop", "retry: { truncation_retry: true }\n"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "cat)", "length")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})")});
  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_TRUE(outcome);
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[1].at("messages"), bodies[0].at("messages"));
  EXPECT_EQ(bodies[1].at("max_completion_tokens"), 600);
  EXPECT_EQ(outcome->attempts[1].max_output_tokens, 600);
}

TEST_F(GenerationLoopbackTest, RefusalIsRefusedAfterOneRequest) {
  bed_.AddSkill("triage", TriageSkill("m-loop"));
  bed_.Start();
  bed_.server().Enqueue({.body = test_support::OpenAiRefusal("I can't help with that.")});
  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().error.code, ErrorCode::kRefused);
  EXPECT_EQ(outcome.error().error.message, "the model refused to answer: I can't help with that.");
  EXPECT_EQ(bed_.server().request_count(), 1u);
  EXPECT_EQ(outcome.error().attempts[0].kind, AttemptKind::kRefusal);
}

// design.md §11.5 on_refusal: a refusal (or a content filter) sends the same request to the next model
// of the refusing model's list, once each; the list of the model turned to is not followed.
TEST_F(GenerationLoopbackTest, ARefusalTurnsToTheOnRefusalModelsInOrderWithTheSameRequest) {
  bed_.AddSkill("triage", TriageSkill("m-primary"));
  bed_.Start("openai",
             "  m-primary: { provider: llm, structured_output: none, on_refusal: [m-second, m-third] }\n"
             "  m-second: { provider: llm, structured_output: none, on_refusal: [m-primary] }\n"
             "  m-third: { provider: llm, structured_output: none }\n");
  bed_.server().Enqueue({.body = test_support::OpenAiRefusal("I can't help with that.")});
  bed_.server().Enqueue({.body = OpenAiAnswer("", "content_filter")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 2, "category": "bug"})")});
  auto outcome = bed_.Invoke("triage", R"({"text":"crash"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 3u);
  for (std::size_t i = 1; i < 3; ++i) {
    json::value same = bodies[0];
    same.at("model") = i == 1 ? "m-second" : "m-third";
    EXPECT_EQ(bodies[i], same) << i;  // the same first request, on the next model
  }
  ASSERT_EQ(outcome->attempts.size(), 3u);
  EXPECT_EQ(outcome->attempts[0].kind, AttemptKind::kRefusal);
  EXPECT_EQ(outcome->attempts[0].model, "m-primary");
  EXPECT_EQ(outcome->attempts[1].kind, AttemptKind::kContentFilter);
  EXPECT_EQ(outcome->attempts[1].model, "m-second");
  EXPECT_EQ(outcome->attempts[2].kind, AttemptKind::kOk);
  EXPECT_EQ(outcome->attempts[2].model, "m-third");
  EXPECT_EQ(outcome->metrics.fallbacks, 2);
  // Every model of the list refusing: REFUSED (or CONTENT_FILTERED) from the last, one request each.
  for (int i = 0; i < 3; ++i) bed_.server().Enqueue({.body = test_support::OpenAiRefusal("No.")});
  auto refused = bed_.Invoke("triage", R"({"text":"crash"})");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().error.code, ErrorCode::kRefused);
  EXPECT_EQ(refused.error().attempts.size(), 3u);
  EXPECT_EQ(bed_.server().request_count(), 6u);
}

TEST_F(GenerationLoopbackTest, ContentFilterIsReportedAsSuch) {
  bed_.AddSkill("triage", TriageSkill("m-loop"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer("", "content_filter")});
  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_FALSE(outcome);
  EXPECT_EQ(outcome.error().error.code, ErrorCode::kContentFiltered);
  EXPECT_EQ(bed_.server().request_count(), 1u);
}

TEST_F(GenerationLoopbackTest, JsonObjectModeAsksForJsonWithTheSchemaInThePrompt) {
  bed_.AddSkill("triage", TriageSkill("m-json"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 3, "category": "bug"})")});
  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_TRUE(outcome);
  auto bodies = bed_.Bodies();
  EXPECT_EQ(bodies[0].at("response_format"), json::parse(R"({"type":"json_object"})"));
  EXPECT_EQ(bodies[0].at("messages").at(0).at("content").as_string().find("JSON") != json::string::npos, true);
  EXPECT_EQ(outcome->metrics.mode, RunMode::kJsonObject);
}

TEST_F(GenerationLoopbackTest, UnsupportedResponseFormatDowngradesToTheLoopAndCarriesOn) {
  bed_.AddSkill("triage", TriageSkill("m-native"));
  bed_.Start();
  bed_.server().Enqueue({.status = 400,
                         .body = test_support::OpenAiError("response_format json_schema is not supported",
                                                           "invalid_request_error", "response_format")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 3, "category": "bug"})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 2, "category": "bug"})")});
  auto outcome = bed_.Invoke("triage", R"({"text":"x"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 2u);
  EXPECT_EQ(bodies[1].as_object().contains("response_format"), false);
  EXPECT_EQ(outcome->attempts[0].kind, AttemptKind::kDowngrade);
  EXPECT_EQ(outcome->metrics.mode, RunMode::kValidationLoop);
  // The model stays downgraded for the life of the process.
  ASSERT_TRUE(bed_.Invoke("triage", R"({"text":"y"})"));
  EXPECT_EQ(bed_.Bodies()[2].as_object().contains("response_format"), false);
}

TEST_F(GenerationLoopbackTest, APlaceholderOfAnOptionalPropertyTheInputLeavesOutRendersEmpty) {
  bed_.AddSkill("greet", R"(id: greet
template_type: LLM_JSON_GENERATION
model: m-loop
prompt: { user: "Hello {{input.name}}! Tier: {{input.tier}}." }
input_schema: { type: object, required: [name], properties: { name: { type: string }, tier: { type: string } } }
output_schema: { type: object }
)");
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({})")});
  auto outcome = bed_.Invoke("greet", R"({"name": "Ada"})");
  ASSERT_TRUE(outcome) << outcome.error().error.message;
  json::value body = bed_.Bodies()[0];
  EXPECT_EQ(body.at("messages").as_array().back().at("content"), "Hello Ada! Tier: .");
}

TEST_F(GenerationLoopbackTest, SessionMemoryFeedsEarlierMistakesForward) {
  bed_.AddSkill("triage", TriageSkill("m-loop"));
  bed_.Start();
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 0, "category": "bug"})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})")});
  InvocationOptions options;
  options.session = "agent-7";
  ASSERT_TRUE(bed_.Invoke("triage", R"({"text":"a"})", options));
  ASSERT_TRUE(bed_.Invoke("triage", R"({"text":"b"})", options));
  auto bodies = bed_.Bodies();
  ASSERT_EQ(bodies.size(), 3u);
  EXPECT_EQ(bodies[2]
                .at("messages")
                .at(0)
                .at("content")
                .as_string()
                .ends_with("Earlier answers in this session made these mistakes; avoid them:\n"
                           "- /priority: expected at least 1, found 0"),
            true);
}

TEST_F(GenerationLoopbackTest, AttemptsTimeTheirOwnRequestAndTheWaitBeforeItWhichAddUpToTheInvocation) {
  // Waits move the clock on at once, as if slept: a 3 ms answer after a
  // 429 and a 500 is not 3 s long.
  bed_.sleeper().advance = true;
  bed_.AddSkill("triage", TriageSkill("m-native"));
  bed_.Start();
  bed_.server().Enqueue({.status = 429,
                         .headers = {{"retry-after-ms", "1000"}},
                         .body = test_support::OpenAiError("Rate limit reached", "requests")});
  bed_.server().Enqueue({.status = 500, .body = test_support::OpenAiError("The server had an error", "server_error")});
  bed_.server().Enqueue({.body = OpenAiAnswer(R"({"priority": 1, "category": "bug"})")});

  auto outcome = bed_.Invoke("triage", R"({"text":"login broken"})");
  ASSERT_TRUE(outcome) << json::serialize(ToJson(outcome));
  const json::value result = ToJson(*outcome);
  const json::array& attempts = result.at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 3u) << json::serialize(result);
  EXPECT_EQ(attempts[0].at("http_status"), 429);
  EXPECT_EQ(attempts[1].at("http_status"), 500);
  EXPECT_EQ(attempts[2].at("kind"), "ok");
  ASSERT_EQ(bed_.sleeper().delays.size(), 2u);
  std::int64_t total = 0;
  for (const json::value& attempt : attempts) {
    EXPECT_LT(attempt.at("duration_ms").as_int64(), 1000) << json::serialize(attempt);
    total += attempt.at("waited_ms").as_int64() + attempt.at("duration_ms").as_int64();
  }
  EXPECT_GE(attempts[1].at("waited_ms").as_int64(), bed_.sleeper().delays[0]);
  EXPECT_LT(attempts[1].at("waited_ms").as_int64(), bed_.sleeper().delays[0] + 1000);
  EXPECT_GE(attempts[2].at("waited_ms").as_int64(), bed_.sleeper().delays[1]);
  EXPECT_LT(attempts[2].at("waited_ms").as_int64(), bed_.sleeper().delays[1] + 1000);
  // Whole milliseconds since the start: they add up to the last answer's end,
  // which the invocation's time passes by what checking it took.
  const std::int64_t invocation = result.at("metrics").at("duration_ms").as_int64();
  EXPECT_LE(total, invocation);
  EXPECT_GE(total, invocation - 5);
}

}  // namespace
}  // namespace skillrunner
