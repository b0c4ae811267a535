// design.md §12.3: one run in which a case fails each gate alone (schema, expected, a check, review,
// refusal) and one fails three, through the real program against a loopback OpenAI server: junit.xml,
// report.html, results.jsonl and the viewer's pages name the same failures with the same messages.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <map>
#include <mutex>
#include <regex>

#include "runner/eval/records/case_record.h"
#include "tests/docs/protocol_schemas.h"
#include "tests/runner/eval/eval_cli_support.h"
#include "tests/runner/eval/report_test_records.h"
#include "tests/support/llm_test_bed.h"
#include "tests/support/loopback_server.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::eval {
namespace {
namespace json = boost::json;
using eval_test::ReadFile;

// The cases: how the fake model answers each (by the token in its input) and what it fails.
constexpr std::string_view kCases =
    R"({"id": "pass", "input": {"token": "tok-pass", "n": 3}, "expected": {"total": 3},)"
    R"( "checks": [{"pointer": "/total", "op": "lte", "value": 100}]})"
    "\n"
    R"({"id": "schema", "input": {"token": "tok-schema", "n": 3}, "expected": {"total": 3}})"
    "\n"
    R"({"id": "expected", "input": {"token": "tok-expected", "n": 3}, "expected": {"total": 3},)"
    R"( "checks": [{"pointer": "/total", "op": "lte", "value": 100}]})"
    "\n"
    R"({"id": "check", "input": {"token": "tok-check", "n": 3}, "expected": {"total": 3},)"
    R"( "checks": [{"pointer": "/total", "op": "lte", "value": 0}]})"
    "\n"
    R"({"id": "review", "input": {"token": "tok-review", "n": 3}, "expected": {"total": 3}})"
    "\n"
    R"({"id": "refusal", "input": {"token": "tok-refusal", "n": 3}, "expected": {"total": 3}})"
    "\n"
    R"({"id": "three", "input": {"token": "tok-three", "n": 3}, "expected": {"total": 3},)"
    R"( "checks": [{"pointer": "/total", "op": "lte", "value": 0}]})"
    "\n";

class EvalGateStoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_.SetResponder([this](const std::string& body) -> std::optional<test_support::ScriptedResponse> {
      auto has = [&body](std::string_view token) { return body.find(token) != std::string::npos; };
      if (has("criteria_results") && has("cites_order")) {  // a case's own criterion, which fails
        std::lock_guard lock(mutex_);
        judged_with_own_.push_back(body);
        return test_support::ScriptedResponse{
            .body = test_support::OpenAiAnswer(
                R"({"criteria_results":[{"criterion_id":"a","reasoning":"fine","verdict":"pass","confidence":90},)"
                R"({"criterion_id":"cites_order","reasoning":"no order number","verdict":"fail","confidence":90}],)"
                R"("issues":[],"suggested_fixes":[]})")};
      }
      if (has("criteria_results")) {
        const bool fail = has("tok-review") || has("tok-three");
        return test_support::ScriptedResponse{
            .body = test_support::OpenAiAnswer(fail ? R"({"criteria_results":[{"criterion_id":"a","reasoning":)"
                                                      R"("the total is made up","verdict":"fail","confidence":90}],)"
                                                      R"("issues":["the total is made up"],"suggested_fixes":[]})"
                                                    : R"({"criteria_results":[{"criterion_id":"a","reasoning":)"
                                                      R"("fine","verdict":"pass","confidence":90}],"issues":[],)"
                                                      R"("suggested_fixes":[]})")};
      }
      if (has("tok-refusal")) return test_support::ScriptedResponse{.body = test_support::OpenAiRefusal("I can't.")};
      if (has("tok-schema"))
        return test_support::ScriptedResponse{.body = test_support::OpenAiAnswer(R"({"total":"many"})")};
      const bool wrong = has("tok-expected") || has("tok-three");
      return test_support::ScriptedResponse{
          .body = test_support::OpenAiAnswer(wrong ? R"({"total":4})" : R"({"total":3})")};
    });
    tree_.Write("skillrunner.yaml", "providers:\n  llm: { kind: openai, base_url: \"" + server_.base_url() +
                                        "/v1\", api_key_env: NO_KEY_NEEDED }\n"
                                        "models:\n  m: { provider: llm, structured_output: none }\n");
    tree_.Write("skills/extract/skill.yaml", R"(id: extract
template_type: LLM_JSON_GENERATION
model: m
prompt: { user: "Order {{input.token}}: the total of {{input.n}}" }
input_schema: { type: object, required: [token, n], properties: { token: { type: string }, n: { type: integer } } }
output_schema: { type: object, required: [total], properties: { total: { type: integer } } }
)");
    tree_.Write("skills/extract/cases.jsonl", std::string(kCases));
    tree_.Write("rubrics/quality.yaml", "id: quality\ncriteria:\n  - { id: a, description: Right., required: true }\n");
    tree_.Write("suite.yaml",
                "id: story\nskills:\n  - skill: extract\n    rubric: quality\n    judge_model: m\n"
                "    expected: exact\n");
  }

  test_support::LoopbackServer server_;
  testing::TempTree tree_;
  std::mutex mutex_;
  std::vector<std::string> judged_with_own_;  // the judge requests that carried a case's own criterion
};

// How Python's repr() writes a string without control characters: in single quotes, or in double
// quotes when it holds a single quote and no double quote.
std::string PythonRepr(const std::string& text) {
  const char quote = text.find('\'') != std::string::npos && text.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, quote);
  for (char c : text) {
    if (c == '\\' || c == quote) out.push_back('\\');
    out.push_back(c);
  }
  return out + quote;
}

// The gates every output must name, per case: type and message.
using Story = std::map<std::string, std::vector<std::pair<std::string, std::string>>>;

Story GatesFromResults(const std::filesystem::path& results) {
  Story story;
  for (const json::object& line : eval_test::ReadRecords(results)) {
    const CaseRecord record = CaseRecord::FromJson(line);
    auto& gates = story[record.case_id];
    for (const GateFailure& gate : record.FailedGates()) gates.emplace_back(GateType(gate.gate), gate.message);
  }
  return story;
}

TEST_F(EvalGateStoryTest, EachGateAloneAndThreeAtOnceAreNamedAlikeInEveryOutput) {
  auto ran = eval_test::Skillrunner(tree_.root(),
                                    "--config skillrunner.yaml --skills skills --rubrics rubrics eval suite.yaml "
                                    "--out out/story --history h.sqlite --run-id story-1");
  ASSERT_EQ(ran.status, 0) << ran.err;

  // results.jsonl, read through the record type.
  const Story story = GatesFromResults(tree_.Path("out/story/results.jsonl"));
  const Story expected{
      {"pass", {}},
      {"schema",
       {{"SCHEMA_INVALID",
         "the answer still does not match the output schema after 1 retry (1 error); /total: "
         "expected integer, found string \"many\""}}},
      {"expected", {{"EXPECTED_MISMATCH", "expected (root): expected exactly {\"total\":3}, found {\"total\":4}"}}},
      {"check", {{"CHECK_FAILED", "check lte /total: is 3, over 0"}}},
      {"review", {{"REVIEW_FAILED", "the total is made up; criterion a failed: the total is made up"}}},
      {"refusal", {{"REFUSED", "the model refused to answer: I can't."}}},
      {"three",
       {{"EXPECTED_MISMATCH", "expected (root): expected exactly {\"total\":3}, found {\"total\":4}"},
        {"CHECK_FAILED", "check lte /total: is 4, over 0"},
        {"REVIEW_FAILED", "the total is made up; criterion a failed: the total is made up"}}},
  };
  EXPECT_EQ(story, expected);

  // junit.xml, as a JUnit reader parses it: one failure per failed case, typed by its first gate, its
  // message every gate's.
  std::string junit_lines;
  for (const auto& [id, gates] : expected) {
    std::string problems = "[]";
    if (!gates.empty()) {
      std::string message;
      for (const auto& [type, text] : gates) message += (message.empty() ? "" : " | ") + type + ": " + text;
      problems = "[('failure', '" + gates.front().first + "', " + PythonRepr(message) + ")]";
    }
    junit_lines += "  case 'extract' '" + id + "' " + problems + "\n";
  }
  const std::string described =
      testing::RunPython(tree_, testing::kJunitDescribeScript, tree_.Path("out/story/junit.xml"));
  EXPECT_EQ(
      std::regex_replace(described, std::regex(R"( [0-9]+\.[0-9]{3} )"), " "),
      "testsuites story 7 6 0\n suite extract 7 6 0 7 [('run_id', 'story-1'), ('suite', 'story')]\n" + junit_lines);

  // report.html: each failing case tagged with its gates, its reasons the gates' lines.
  const std::string report = ReadFile(tree_.Path("out/story/report.html"));
  for (const auto& [id, gates] : expected) {
    if (gates.empty()) continue;
    std::string tags;
    for (const auto& gate : gates) tags += " <span class=\"tag fail\">" + gate.first + "</span>";
    EXPECT_NE(report.find(tags + " <b>extract / " + id + "</b>"), std::string::npos) << id;
  }

  // The viewer: the run page's rows and each case's page carry the same gates.
  auto exported = eval_test::Skillrunner(tree_.root(), "view --history h.sqlite --export site");
  ASSERT_EQ(exported.status, 0) << exported.err;
  std::string pages;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(tree_.Path("site"))) {
    if (entry.is_regular_file()) pages += ReadFile(entry.path());
  }
  for (const auto& [id, gates] : expected) {
    json::array want;
    for (const auto& [type, text] : gates) want.push_back(json::object{{"type", type}, {"message", text}});
    const std::string gates_json = "\"gates\":" + json::serialize(want);
    // Twice: the run page's row of the case and the case's own page.
    std::size_t seen = 0;
    for (std::size_t at = pages.find(gates_json); at != std::string::npos; at = pages.find(gates_json, at + 1)) ++seen;
    if (!gates.empty()) {
      EXPECT_GE(seen, 2u) << id << ": " << gates_json;
    }
  }
}

// design.md §12.3: a case's own criteria are judged with the skill's rubric for that case only: its
// judge request carries them and no other case's does; a failed required one fails the review; the
// summary counts them as one measure, not one per id. An id the rubric has, or an entry without a
// rubric, is a load error at the case's line.
TEST_F(EvalGateStoryTest, ACasesOwnCriteriaAreJudgedForThatCaseAlone) {
  tree_.Write("skills/extract/cases.jsonl",
              R"({"id": "own", "input": {"token": "tok-own", "n": 3}, "criteria": [{"id": "cites_order",)"
              R"( "description": "Names the order number tok-own.", "required": true}]})"
              "\n"
              R"({"id": "plain", "input": {"token": "tok-plain", "n": 3}})"
              "\n");
  const std::string eval = "--config skillrunner.yaml --skills skills --rubrics rubrics eval suite.yaml --out ";
  auto ran = eval_test::Skillrunner(tree_.root(), eval + "out/own");
  ASSERT_EQ(ran.status, 0) << ran.err;
  {
    std::lock_guard lock(mutex_);
    ASSERT_EQ(judged_with_own_.size(), 1u);
    EXPECT_NE(judged_with_own_[0].find("Names the order number tok-own."), std::string::npos);
    EXPECT_NE(judged_with_own_[0].find("tok-own"), std::string::npos);
  }
  const Story story = GatesFromResults(tree_.Path("out/own/results.jsonl"));
  EXPECT_EQ(story,
            (Story{{"own", {{"REVIEW_FAILED", "criterion cites_order failed: no order number"}}}, {"plain", {}}}));
  const json::value summary = json::parse(ReadFile(tree_.Path("out/own/summary.json")));
  EXPECT_EQ(testing::SchemaViolations("eval/summary.schema.json", summary), "");
  const json::object skill = summary.at("skills").at("extract").as_object();
  EXPECT_TRUE(skill.at("criteria").as_object().contains("a"));
  EXPECT_FALSE(skill.at("criteria").as_object().contains("cites_order"));
  EXPECT_EQ(skill.at("case_criteria"), json::parse(R"({"decided":1,"passed":0,"pass_rate":0.0})"));
  EXPECT_EQ(skill.at("rubric_pass_rate"), 0.5);

  tree_.Write(
      "skills/extract/cases.jsonl",
      R"({"id": "own", "input": {"token": "tok-own", "n": 3}, "criteria": [{"id": "a", "description": "Again."}]})"
      "\n"
      R"({"id": "bad", "input": {"token": "tok-bad", "n": 3}, "criteria": [{"id": "x"}]})"
      "\n");
  auto clash = eval_test::Skillrunner(tree_.root(), eval + "out/clash");
  EXPECT_EQ(clash.status, 2);
  EXPECT_EQ(clash.err,
            "skills/extract/cases.jsonl:1:1: case \"own\": /criteria: \"a\" is a criterion of rubric quality already\n"
            "skills/extract/cases.jsonl:2:1: case \"bad\": /criteria/0/description: must be a non-empty string\n");
  tree_.Write("skills/extract/cases.jsonl", R"({"id": "own", "input": {"token": "tok-own", "n": 3},)"
                                            R"( "criteria": [{"id": "c", "description": "Short."}]})"
                                            "\n");
  tree_.Write("suite.yaml", "id: story\nskills:\n  - skill: extract\n");
  auto unjudged = eval_test::Skillrunner(tree_.root(), eval + "out/unjudged");
  EXPECT_EQ(unjudged.status, 2);
  EXPECT_EQ(unjudged.err,
            "skills/extract/cases.jsonl:1:1: case \"own\": /criteria: a case's criteria are judged with its skill's "
            "rubric, and the suite entry of skill \"extract\" has none (give it rubric: and judge_model:)\n");
}

}  // namespace
}  // namespace skillrunner::eval
