// A case's own assertions: `checks`, `exec_check` and `reference` (runner/eval/case_checks.h),
// from the parsing of one check to a real `skillrunner eval` against a loopback OpenAI server.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <mutex>

#include "runner/eval/case_checks.h"
#include "runner/eval/records/case_outcome.h"
#include "tests/runner/eval/eval_cli_support.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;

std::string ParseProblem(const std::string& checks) {
  std::vector<CaseCheck> out;
  return ParseChecks(json::parse(checks), out);
}

// The verdict of one check on `output` (metrics: {"cost_usd": 0.02, "duration_ms": 900}).
json::object Verdict(const std::string& check, const std::string& output) {
  std::vector<CaseCheck> parsed;
  std::string problem = ParseChecks(json::parse("[" + check + "]"), parsed);
  EXPECT_EQ(problem, "");
  if (parsed.empty()) return {};
  return RunCheck(parsed[0], json::parse(output), json::value(json::object{{"cost_usd", 0.02}, {"duration_ms", 900}}))
      .ToJson();
}

bool Passes(const std::string& check, const std::string& output) { return Verdict(check, output).at("pass").as_bool(); }

TEST(CaseChecksTest, EachProblemNamesItsPlaceInTheCase) {
  EXPECT_EQ(ParseProblem(R"({"pointer": ""})"), "/checks: must be an array of checks");
  EXPECT_EQ(
      ParseProblem(R"([{"pointer": "/a", "op": "equals", "value": 1}, {"pointer": "a", "op": "equals"}])"),
      "/checks/1/pointer: must be a JSON pointer (\"\" for the whole output, \"/answer\", \"/metrics/cost_usd\")");
  EXPECT_EQ(ParseProblem(R"([{"pointer": "/a", "op": "like", "value": 1}])"),
            "/checks/0/op: must be one of equals, contains, icontains, contains_any, contains_all, starts_with, "
            "regex, fuzzy, lte");
  EXPECT_EQ(ParseProblem(R"([{"pointer": "/a", "op": "equals"}])"), "/checks/0: missing key \"value\"");
  EXPECT_EQ(ParseProblem(R"([{"pointer": "/a", "op": "lte", "value": "1"}])"), "/checks/0/value: must be a number");
  EXPECT_EQ(ParseProblem(R"([{"pointer": "/a", "op": "contains_any", "value": []}])"),
            "/checks/0/value: must be a non-empty array");
  EXPECT_EQ(ParseProblem(R"([{"pointer": "/a", "op": "regex", "value": "(unclosed"}])"),
            "/checks/0/value: not a regular expression this program can compile (ECMAScript)");
  EXPECT_EQ(ParseProblem(R"([{"pointer": "/a", "op": "equals", "value": 1, "negate": "yes"}])"),
            "/checks/0/negate: must be true or false");
  EXPECT_EQ(ParseProblem(R"([{"pointer": "/a", "op": "fuzzy", "value": "x", "threshold": 2}])"),
            "/checks/0/threshold: must be a number from 0 to 1");
  EXPECT_EQ(ParseProblem(R"([{"pointer": "/a", "op": "equals", "value": 1, "weight": 2}])"),
            "/checks/0: unexpected key \"weight\" (a check has pointer, op, value, negate, threshold)");
  ExecCheck exec;
  EXPECT_EQ(ParseExecCheck(json::parse(R"({"argv": []})"), ".", exec), "/exec_check/argv: must be a non-empty array");
  EXPECT_EQ(ParseExecCheck(json::parse(R"({"argv": ["g"], "timeout_ms": 0})"), ".", exec),
            "/exec_check/timeout_ms: must be a whole number of milliseconds from 1 to 600000");
}

TEST(CaseChecksTest, EachOpAndItsNegation) {
  const std::string answer = R"({"answer": "The Capital of France is Paris.", "tags": ["geo", "eu"], "n": 3})";
  EXPECT_TRUE(Passes(R"({"pointer": "/n", "op": "equals", "value": 3.0})", answer));
  EXPECT_TRUE(Passes(R"({"pointer": "/answer", "op": "contains", "value": "Paris"})", answer));
  EXPECT_FALSE(Passes(R"({"pointer": "/answer", "op": "contains", "value": "paris"})", answer));
  EXPECT_TRUE(Passes(R"({"pointer": "/answer", "op": "icontains", "value": "PARIS"})", answer));
  EXPECT_TRUE(Passes(R"({"pointer": "/tags", "op": "contains", "value": "eu"})", answer));
  EXPECT_TRUE(Passes(R"({"pointer": "/answer", "op": "contains_any", "value": ["Rome", "Paris"]})", answer));
  EXPECT_FALSE(Passes(R"({"pointer": "/answer", "op": "contains_all", "value": ["Rome", "Paris"]})", answer));
  EXPECT_TRUE(Passes(R"({"pointer": "/answer", "op": "starts_with", "value": "The "})", answer));
  EXPECT_TRUE(Passes(R"({"pointer": "/answer", "op": "regex", "value": "is [A-Z][a-z]+\\.$"})", answer));
  EXPECT_TRUE(Passes(R"({"pointer": "/answer", "op": "fuzzy", "value": "the capital of France is Paris"})", answer));
  EXPECT_TRUE(Passes(R"({"pointer": "/n", "op": "lte", "value": 3})", answer));
  EXPECT_TRUE(Passes(R"({"pointer": "/answer", "op": "contains", "value": "Rome", "negate": true})", answer));
  json::object negated =
      Verdict(R"({"pointer": "/answer", "op": "contains", "value": "Paris", "negate": true})", answer);
  EXPECT_EQ(json::serialize(negated),
            R"({"pointer":"/answer","op":"contains","negate":true,"pass":false,"expected":"Paris",)"
            R"x("actual":"The Capital of France is Paris.","message":"passes the check it must fail (negate)"})x");
  EXPECT_EQ(json::serialize(Verdict(R"({"pointer": "/n", "op": "lte", "value": 2})", answer)),
            R"({"pointer":"/n","op":"lte","pass":false,"expected":2,"actual":3,"message":"is 3, over 2"})");
  EXPECT_EQ(Verdict(R"({"pointer": "/missing", "op": "equals", "value": 1})", answer).at("message"),
            "the output has no value at /missing");
}

TEST(CaseChecksTest, MetricsPointersReadTheRecordNotTheOutput) {
  const std::string output = R"({"metrics": {"cost_usd": 99}})";
  EXPECT_TRUE(Passes(R"({"pointer": "/metrics/cost_usd", "op": "lte", "value": 0.05})", output));
  EXPECT_FALSE(Passes(R"({"pointer": "/metrics/duration_ms", "op": "lte", "value": 500})", output));
  EXPECT_EQ(Verdict(R"({"pointer": "/metrics/tokens", "op": "lte", "value": 5})", output).at("message"),
            "the record's metrics have no value at /metrics/tokens");
}

TEST(CaseChecksTest, FuzzyIsTheIndelRatio) {
  // rapidfuzz: fuzz.ratio("this is a test", "this is a test!") == 96.55...
  EXPECT_NEAR(FuzzyRatio("this is a test", "this is a test!"), 28.0 / 29.0, 1e-12);
  EXPECT_DOUBLE_EQ(FuzzyRatio("", ""), 1.0);
  EXPECT_DOUBLE_EQ(FuzzyRatio("abc", ""), 0.0);
  EXPECT_DOUBLE_EQ(FuzzyRatio("kitten", "sitting"), 8.0 / 13.0);
}

TEST(CaseChecksTest, AGradersVerdictComesFromItsScoreOrItsPass) {
  ExecCheck check;
  check.pass_threshold = 0.5;
  handler::ProcessOutcome ended;
  ended.stdout_data = "0.75\n";
  EXPECT_EQ(json::serialize(ExecVerdict(ended, check).ToJson()),
            R"({"op":"exec","pass":true,"expected":5E-1,"actual":7.5E-1,"score":7.5E-1})");
  ended.stdout_data = R"({"score": 0.25})";
  EXPECT_EQ(ExecVerdict(ended, check).ToJson().at("message"), "score 0.25 is under the pass threshold 0.5");
  ended.stdout_data = R"({"pass": false})";
  EXPECT_EQ(ExecVerdict(ended, check).ToJson().at("message"), "the grader said it fails");
  ended.stdout_data = "\"good\"";
  EXPECT_EQ(ExecVerdict(ended, check).ToJson().at("message"),
            "the grader must print a number or {\"score\": number} or {\"pass\": boolean}");
  ended.exit_status = 3;
  ended.stderr_tail = "NameError: grade";
  EXPECT_EQ(ExecVerdict(ended, check).ToJson().at("message"), "the grader exited 3: NameError: grade");
  ended.timed_out = true;
  check.timeout = std::chrono::milliseconds(250);
  EXPECT_EQ(ExecVerdict(ended, check).ToJson().at("message"), "the grader ran past its 250 ms");
  EXPECT_EQ(ExecCheckInput(json::parse(R"({"answer": "Paris"})"), json::parse(R"({"q": "capital?"})")),
            R"({"sample":{"output_text":"{\"answer\":\"Paris\"}","output_json":{"answer":"Paris"}},)"
            R"("item":{"q":"capital?"}})");
}

// The real program against a loopback OpenAI server that answers each question's label and judges
// everything a pass, recording what the judge was shown.
class EvalChecksCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.SetResponder([this](const std::string& body) -> std::optional<test_support::ScriptedResponse> {
      if (body.find("criteria_results") != std::string::npos) {
        std::lock_guard lock(mutex_);
        judge_bodies_.push_back(body);
        return test_support::ScriptedResponse{
            .body = test_support::OpenAiAnswer(R"({"criteria_results":[{"criterion_id":"a","reasoning":"fine",)"
                                               R"("verdict":"pass","confidence":90}],"issues":[],)"
                                               R"("suggested_fixes":[]})")};
      }
      const bool france = body.find("France") != std::string::npos;
      return test_support::ScriptedResponse{
          .body = test_support::OpenAiAnswer(france ? R"({"answer":"Paris is the capital."})"
                                                    : R"({"answer":"I do not know."})")};
    });
    tree_.Write("skillrunner.yaml", "providers:\n  llm: { kind: openai, base_url: \"" + server_.base_url() +
                                        "/v1\", api_key_env: NO_KEY_NEEDED }\n"
                                        "models:\n  m: { provider: llm, structured_output: none, "
                                        "price: { input: 1, output: 2 } }\n");
    tree_.Write("skills/qa/skill.yaml", R"(id: qa
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "Answer {{input.q}}" }
input_schema: { type: object, required: [q], properties: { q: { type: string } } }
output_schema: { type: object, required: [answer], properties: { answer: { type: string } } }
)");
    // The grader: an OpenAI Python grader's shape, the score of "Paris" in the answer.
    tree_.Write("skills/qa/grade.py",
                "import json, sys\nd = json.load(sys.stdin)\n"
                "print(1.0 if 'Paris' in d['sample']['output_json']['answer'] else 0.0)\n");
    tree_.Write("skills/qa/cases.jsonl", R"({"id": "fr", "input": {"q": "France?"}, "reference": "Paris",)"
                                         R"( "checks": [{"pointer": "/answer", "op": "icontains", "value": "paris"},)"
                                         R"( {"pointer": "/metrics/cost_usd", "op": "lte", "value": 1}],)"
                                         R"( "exec_check": {"argv": ["python3", "grade.py"], "pass_threshold": 0.5}})"
                                         "\n"
                                         R"({"id": "pe", "input": {"q": "Peru?"},)"
                                         R"( "checks": [{"pointer": "/answer", "op": "contains", "value": "Lima"}],)"
                                         R"( "exec_check": {"argv": ["python3", "grade.py"], "pass_threshold": 0.5}})"
                                         "\n"
                                         R"({"id": "no", "input": {"q": "Nothing to check?"}})"
                                         "\n");
    tree_.Write("rubrics/quality.yaml", "id: quality\ncriteria:\n  - { id: a, description: Right., required: true }\n");
    tree_.Write("suite.yaml",
                "id: night\nskills:\n  - skill: qa\n    rubric: quality\n    judge_model: m\n"
                "    thresholds: { check_pass_rate: 0.9 }\n");
  }

  skillrunner::testing::TempTree tree_;
  test_support::LoopbackServer server_;
  std::mutex mutex_;
  std::vector<std::string> judge_bodies_;
};

TEST_F(EvalChecksCliTest, ChecksGateTheCaseAndTheRunAndTheJudgeSeesTheReference) {
  auto ran = eval_test::Skillrunner(tree_.root(),
                                    "--config skillrunner.yaml --skills skills --rubrics rubrics eval suite.yaml "
                                    "--out out/run1");
  EXPECT_EQ(ran.status, 1) << ran.err;  // check_pass_rate 0.5 is below 0.9
  auto records = eval_test::ReadRecords(tree_.Path("out/run1/results.jsonl"));
  ASSERT_EQ(records.size(), 3u);
  std::map<std::string, json::object> by_case;
  for (auto& r : records) by_case[std::string(r.at("case").as_string())] = r;
  EXPECT_EQ(by_case["fr"].at("check_pass"), true);
  EXPECT_EQ(
      json::serialize(by_case["fr"].at("checks")),
      R"([{"pointer":"/answer","op":"icontains","pass":true,"expected":"paris","actual":"Paris is the capital."},)"
      R"({"pointer":"/metrics/cost_usd","op":"lte","pass":true,"expected":1,"actual":4E-5},)"
      R"({"op":"exec","pass":true,"expected":5E-1,"actual":1E0,"score":1E0}])");
  EXPECT_EQ(OutcomeOf(by_case["fr"]), CaseOutcome::kPass);
  EXPECT_EQ(by_case["pe"].at("check_pass"), false);
  EXPECT_EQ(json::serialize(by_case["pe"].at("checks")),
            R"([{"pointer":"/answer","op":"contains","pass":false,"expected":"Lima","actual":"I do not know.",)"
            R"("message":"does not contain \"Lima\""},)"
            R"({"op":"exec","pass":false,"expected":5E-1,"actual":0E0,"score":0E0,)"
            R"("message":"score 0 is under the pass threshold 0.5"}])");
  EXPECT_EQ(OutcomeOf(by_case["pe"]), CaseOutcome::kFail);
  EXPECT_FALSE(by_case["no"].contains("check_pass"));
  EXPECT_EQ(OutcomeOf(by_case["no"]), CaseOutcome::kPass);

  json::object summary = json::parse(eval_test::ReadFile(tree_.Path("out/run1/summary.json"))).as_object();
  EXPECT_EQ(summary.at("skills").at("qa").at("check_pass_rate"), 0.5);
  ASSERT_EQ(summary.at("breaches").as_array().size(), 1u);
  const json::object& breach = summary.at("breaches").at(0).as_object();
  EXPECT_EQ(breach.at("threshold"), "check_pass_rate");
  EXPECT_EQ(breach.at("message"), "qa: check pass rate 0.500 is below the minimum 0.900");

  // The judge saw {input, reference} for the case with a reference, the bare input otherwise.
  std::lock_guard lock(mutex_);
  ASSERT_EQ(judge_bodies_.size(), 3u);
  int with_reference = 0;
  for (const auto& body : judge_bodies_) {
    const bool has = body.find(R"(\"reference\":\"Paris\")") != std::string::npos;
    with_reference += has;
    if (has) {
      EXPECT_NE(body.find(R"(\"input\":{\"q\":\"France?\"})"), std::string::npos) << body;
    }
  }
  EXPECT_EQ(with_reference, 1);
}

TEST_F(EvalChecksCliTest, ABadCheckIsNamedAtItsLineBeforeAnyRequest) {
  tree_.Write("skills/qa/cases.jsonl",
              R"({"id": "ok", "input": {"q": "France?"}})"
              "\n"
              R"({"id": "bad", "input": {"q": "Peru?"}, "checks": [{"pointer": "/answer", "op": "has", "value": 1}]})"
              "\n");
  auto ran = eval_test::Skillrunner(tree_.root(),
                                    "--config skillrunner.yaml --skills skills --rubrics rubrics eval suite.yaml "
                                    "--out out/run1");
  EXPECT_EQ(ran.status, 2) << ran.err;
  EXPECT_NE(ran.err.find("skills/qa/cases.jsonl:2:1: case \"bad\": /checks/0/op: must be one of equals, contains"),
            std::string::npos)
      << ran.err;
  EXPECT_EQ(server_.request_count(), 0u);
}

}  // namespace
}  // namespace skillrunner::eval
