// The first hour of a new user (design.md §9.8, issue 12), each trap reproduced
// with the real program as the user met it.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <fstream>
#include <sstream>

#include "tests/runner/cli/cli_config.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using test_support::Skillrunner;

constexpr const char* kConfig = testing::kCliTestConfig;

constexpr const char* kOrderSkill = R"(id: extract_order
template_type: LLM_JSON_GENERATION
model: gpt-4o-mni
prompt:
  system: "Extract the order. Customer tier: {{input.tier}}."
  user: "{{input.text}}"
input_schema:
  type: object
  required: [text]
  properties: { text: { type: string }, tier: { type: string } }
output_schema:
  type: object
  required: [customer, total]
  properties: { customer: { type: string }, total: { type: number } }
)";

class FirstHourTest : public ::testing::Test {
 protected:
  testing::TempTree tree_;
};

// 1. A typo'd model name is refused at load, naming the closest model; run
//    never reaches the simulator.
TEST_F(FirstHourTest, ATypoedModelIsALoadErrorNamingTheClosestModel) {
  tree_.Write("skillrunner.yaml", kConfig);
  tree_.Write("skills/extract_order/skill.yaml", kOrderSkill);
  auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(validate.status, 2);
  EXPECT_EQ(validate.out,
            "skills/extract_order/skill.yaml:3:8: /model: model \"gpt-4o-mni\" is not in the models table of "
            "skillrunner.yaml (did you mean \"gpt-4o-mini\"?); add it there (or set default_provider)\n"
            "0 skill(s) and 0 rubric(s) loaded; 1 error(s), 0 warning(s) (schemas not compared: skills is not in a git "
            "work tree)\n");
  auto run = Skillrunner(tree_.Path(""), "run extract_order --input '{\"text\": \"2 mugs for Ada\"}'");
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.out.find("\"output\""), std::string::npos) << run.out;
}

// 1. With a default_provider the fallback is a warning that says where the
//    model goes, and every result names what answered.
TEST_F(FirstHourTest, ADefaultProviderFallbackIsAWarningAndTheResultNamesWhatAnswered) {
  tree_.Write("skillrunner.yaml", std::string(kConfig) + "default_provider: sim\n");
  tree_.Write("skills/extract_order/skill.yaml", kOrderSkill);
  auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(validate.status, 0);
  EXPECT_EQ(validate.out,
            "skills/extract_order/skill.yaml:3:8: warning: /model: model \"gpt-4o-mni\" is not in the models table "
            "of skillrunner.yaml (did you mean \"gpt-4o-mini\"?), so it runs on the default_provider \"sim\" "
            "[model-unlisted]\n"
            "1 skill(s) and 0 rubric(s) loaded; 0 error(s), 1 warning(s) (schemas not compared: skills is not in a git "
            "work tree)\n");
  auto run =
      Skillrunner(tree_.Path(""), "run extract_order --input '{\"text\": \"2 mugs for Ada\", \"tier\": \"pro\"}'");
  ASSERT_EQ(run.status, 0) << run.out;
  json::value result = json::parse(run.out);
  EXPECT_EQ(result.at("metrics").at("provider"), "sim");
  EXPECT_EQ(result.at("metrics").at("model"), "gpt-4o-mni");
  const json::object& attempt = result.at("attempts").at(0).as_object();
  EXPECT_EQ(attempt.at("role"), "generation");
  EXPECT_EQ(attempt.at("provider"), "sim");
  EXPECT_EQ(attempt.at("model"), "gpt-4o-mni");
}

// 2. A placeholder of an optional property renders empty when the input
//    leaves it out; one the input_schema does not declare is a load error.
TEST_F(FirstHourTest, OptionalPlaceholdersRenderEmptyAndUndeclaredOnesAreLoadErrors) {
  tree_.Write("skillrunner.yaml", kConfig);
  std::string skill = kOrderSkill;
  skill.replace(skill.find("gpt-4o-mni"), 10, "local-sim");
  tree_.Write("skills/extract_order/skill.yaml", skill);
  auto run = Skillrunner(tree_.Path(""), "run extract_order --input '{\"text\": \"2 mugs for Ada\"}'");
  EXPECT_EQ(run.status, 0) << run.out;
  skill.replace(skill.find("{{input.tier}}"), 14, "{{input.tire}}");
  tree_.Write("skills/extract_order/skill.yaml", skill);
  auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(validate.status, 2);
  EXPECT_EQ(validate.out,
            "skills/extract_order/skill.yaml:5:11: /prompt/system: placeholder {{input.tire}} names a property "
            "input_schema does not declare (did you mean \"{{input.tier}}\"?)\n"
            "0 skill(s) and 0 rubric(s) loaded; 1 error(s), 0 warning(s) (schemas not compared: skills is not in a git "
            "work tree)\n");
}

// 7. An LLM_REVIEW skill a team wrote is the gate of a generation skill;
//    judge attempts say so and carry the pass their verdict came to.
TEST_F(FirstHourTest, AnLlmReviewSkillGatesAGenerationSkill) {
  tree_.Write("skillrunner.yaml", kConfig);
  tree_.Write(
      "rubrics/order_quality.yaml",
      "id: order_quality\ncriteria:\n  - { id: faithful, description: Every field is in the text., required: true }\n");
  tree_.Write("skills/review_order/skill.yaml",
              "id: review_order\ntemplate_type: LLM_REVIEW\nrubric: order_quality\nmodel: local-sim\n");
  std::string skill = kOrderSkill;
  skill.replace(skill.find("gpt-4o-mni"), 10, "local-sim");
  tree_.Write("skills/extract_order/skill.yaml", skill + "review: { skill: review_order, retry_once: true }\n");
  auto run = Skillrunner(tree_.Path(""), "run extract_order --input '{\"text\": \"2 mugs for Ada\"}'");
  ASSERT_EQ(run.status, 0) << run.out;
  json::value result = json::parse(run.out);
  const json::array& attempts = result.at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].at("role"), "generation");
  EXPECT_FALSE(attempts[0].as_object().contains("pass"));
  EXPECT_EQ(attempts[1].at("role"), "judge");
  EXPECT_EQ(attempts[1].at("pass"), true);
  EXPECT_EQ(result.at("review").at("pass"), true);
  EXPECT_EQ(result.at("review").at("criteria_results").at(0).at("criterion_id"), "faithful");

  auto gated_by = [&](const std::string& review) {
    tree_.Write("skills/extract_order/skill.yaml", skill + review + "\n");
    auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
    EXPECT_EQ(validate.status, 2) << review;
    return validate.out;
  };
  const std::string loaded =
      "1 skill(s) and 1 rubric(s) loaded; 1 error(s), 0 warning(s) (schemas not compared: skills is not in a git work "
      "tree)\n";
  EXPECT_EQ(gated_by("review: { skill: extract_order }"),
            "skills/extract_order/skill.yaml:15:18: /review/skill: skill \"extract_order\" is not an LLM_REVIEW "
            "skill, so it cannot judge\n" +
                loaded);
  EXPECT_EQ(gated_by("review: { skill: review_ordr }"),
            "skills/extract_order/skill.yaml:15:18: /review/skill: unknown skill \"review_ordr\" (did you mean "
            "\"review_order\"?) (LLM_REVIEW skills in this tree: review_order)\n" +
                loaded);
  EXPECT_EQ(gated_by("review: { retry_once: true }"),
            "skills/extract_order/skill.yaml:15:9: /review: a review gate needs the rubric to judge against "
            "(rubric: ID) or an LLM_REVIEW skill to judge with (skill: ID)\n" +
                loaded);
  EXPECT_EQ(gated_by("review: { skill: review_order, rubric: order_quality }"),
            "skills/extract_order/skill.yaml:15:9: /review: give the gate a rubric or an LLM_REVIEW skill, not "
            "both (the skill brings its own rubric and model)\n" +
                loaded);
  EXPECT_EQ(gated_by("review: { skill: review_order, samples: 3 }"),
            "skills/extract_order/skill.yaml:15:41: /review/samples: a gate judged by skill \"review_order\" "
            "takes its samples from that skill\n" +
                loaded);
  // A review skill whose file did not load says why.
  tree_.Write("skills/review_order/skill.yaml",
              "id: review_order\ntemplate_type: LLM_REVIEW\nrubric: order_quality\nmodel: nope-model\n");
  EXPECT_EQ(gated_by("review: { skill: review_order }"),
            "skills/extract_order/skill.yaml:15:18: /review/skill: the review skill \"review_order\" did not load: "
            "skills/review_order/skill.yaml:4:8: /model: model \"nope-model\" is not in the models table of "
            "skillrunner.yaml; add it there (or set default_provider)\n"
            "skills/review_order/skill.yaml:4:8: /model: model \"nope-model\" is not in the models table of "
            "skillrunner.yaml; add it there (or set default_provider)\n"
            "0 skill(s) and 1 rubric(s) loaded; 2 error(s), 0 warning(s) (schemas not compared: skills is not in a git "
            "work tree)\n");
}

// 6. --show-request puts on each attempt exactly what was asked of the
//    provider: the rendered messages, the retry's feedback, the judge's prompt.
TEST_F(FirstHourTest, ShowRequestPutsTheRequestOfEachAttemptInTheResult) {
  std::string config = kConfig;
  config.replace(
      config.find("sim: { kind: simulated }"), 24,
      "sim: { kind: simulated, faults: [{ skill: extract_order, attempt: 1, fault: wrong_type, path: /total }] }");
  tree_.Write("skillrunner.yaml", config);
  std::string skill = kOrderSkill;
  skill.replace(skill.find("gpt-4o-mni"), 10, "local-sim");
  tree_.Write("skills/extract_order/skill.yaml", skill);
  auto run = Skillrunner(
      tree_.Path(""), "run extract_order --show-request --input '{\"text\": \"2 mugs for Ada\", \"tier\": \"pro\"}'");
  ASSERT_EQ(run.status, 0) << run.out;
  json::value result = json::parse(run.out);
  const json::array& attempts = result.at("attempts").as_array();
  ASSERT_EQ(attempts.size(), 2u);
  const json::object& first = attempts[0].at("request").as_object();
  EXPECT_EQ(first.at("max_output_tokens"), 1024);
  EXPECT_EQ(first.at("temperature"), 0.7);
  EXPECT_FALSE(first.contains("response_format"));
  const json::array& messages = first.at("messages").as_array();
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_EQ(messages[1], json::parse(R"({"role": "user", "content": "2 mugs for Ada"})"));
  EXPECT_TRUE(messages[0].at("content").as_string().starts_with("Extract the order. Customer tier: pro.\n\n"));
  const json::array& retry = attempts[1].at("request").at("messages").as_array();
  ASSERT_EQ(retry.size(), 4u);
  EXPECT_EQ(retry[2].at("role"), "assistant");
  EXPECT_EQ(retry[2].at("content"), attempts[0].at("raw"));
  EXPECT_EQ(std::string(retry[3].at("content").as_string()),
            "Your answer does not match the JSON Schema. Every error, by JSON pointer:\n- /total: " +
                std::string(attempts[0].at("errors").at(0).at("message").as_string()) +
                "\nAnswer again with the corrected JSON only: one JSON value, no prose, no code fence.");
  EXPECT_EQ(attempts[1].at("request").at("temperature"), 0.2);
  auto plain = Skillrunner(tree_.Path(""), "run extract_order --input '{\"text\": \"2 mugs for Ada\"}'");
  ASSERT_EQ(plain.status, 0) << plain.out;
  EXPECT_FALSE(json::parse(plain.out).at("attempts").at(0).as_object().contains("request"));
  // --log-level debug logs every request the same way, on stderr.
  auto logged = Skillrunner(tree_.Path(""), "--log-level debug run extract_order --input '{\"text\": \"2 mugs\"}'",
                            "2>&1 >/dev/null");
  EXPECT_NE(logged.out.find("skill extract_order: request 1 to sim (local-sim): {\"messages\":[{\"role\":\"system\","),
            std::string::npos)
      << logged.out;
  EXPECT_NE(logged.out.find("skill extract_order: request 2 to sim (local-sim): "), std::string::npos);
}

// 4, 5. A file with several mistakes shows all of them in one run, each at
//    the deepest key at fault; run and list say the skill did not load.
TEST_F(FirstHourTest, EveryProblemOfAFileInOneRunAtTheKeyAtFault) {
  tree_.Write("skillrunner.yaml", kConfig);
  tree_.Write("skills/order/skill.yaml", R"(id: order
template_type: LLM_JSON_GENERATION
model: gpt-4o-mni
temprature: 0.2
prompt: { user: "{{input.txt}}" }
input_schema: { type: object, properties: { text: { type: string } } }
output_schema:
  type: object
  properties:
    items:
      type: array
      items:
        type: object
        properties:
          qty: { type: int }
)");
  const std::string first =
      "skills/order/skill.yaml:3:8: /model: model \"gpt-4o-mni\" is not in the models table of skillrunner.yaml "
      "(did you mean \"gpt-4o-mini\"?); add it there (or set default_provider)";
  auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(validate.status, 2);
  EXPECT_EQ(validate.out,
            first +
                "\n"
                "skills/order/skill.yaml:4:1: /temprature: unexpected property \"temprature\" (did you mean "
                "\"temperature\"?)\n"
                "skills/order/skill.yaml:5:17: /prompt/user: placeholder {{input.txt}} names a property input_schema "
                "does not declare (did you mean \"{{input.text}}\"?)\n"
                "skills/order/skill.yaml:15:24: output_schema at /properties/items/items/properties/qty/type is not a "
                "valid JSON Schema: unknown type \"int\" (expected array, boolean, integer, null, number, object or "
                "string)\n"
                "0 skill(s) and 0 rubric(s) loaded; 4 error(s), 0 warning(s) (schemas not compared: skills is not in a "
                "git work tree)\n");
  auto run = Skillrunner(tree_.Path(""), "run order --input '{}'");
  EXPECT_EQ(run.status, 2);
  EXPECT_EQ(json::parse(run.out).at("error").at("code"), "CONFIG_INVALID");
  EXPECT_EQ(std::string(json::parse(run.out).at("error").at("message").as_string()),
            "skill \"order\" did not load: " + first);
  auto list = Skillrunner(tree_.Path(""), "list --json");
  EXPECT_EQ(list.status, 2);
  json::value listed = json::parse(list.out);
  EXPECT_EQ(listed.at("skills"), json::array());
  EXPECT_EQ(listed.at("diagnostics").as_array().size(), 4u);
  EXPECT_EQ(listed.at("diagnostics").at(0),
            json::parse(R"J({"file": "skills/order/skill.yaml", "line": 3, "col": 8, "pointer": "/model",
                "severity": "error", "code": "model-unknown", "allowed": false, "message": "model \"gpt-4o-mni\" is not in the models table of skillrunner.yaml (did you mean \"gpt-4o-mini\"?); add it there (or set default_provider)"})J"));
  auto json_validate = Skillrunner(tree_.Path(""), "validate --json");
  EXPECT_EQ(json::parse(json_validate.out).at("diagnostics"), listed.at("diagnostics"));
}

// 5. A gate whose rubric did not load says so, with the rubric's own error.
TEST_F(FirstHourTest, ARubricThatDidNotLoadIsNamedWithItsError) {
  tree_.Write("skillrunner.yaml", kConfig);
  tree_.Write("rubrics/order_quality.yaml", "id: order_quality\ncriteria:\n  - { id: faithful }\n");
  std::string skill = kOrderSkill;
  skill.replace(skill.find("gpt-4o-mni"), 10, "local-sim");
  tree_.Write("skills/extract_order/skill.yaml", skill + "review: { rubric: order_quality }\n");
  auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(validate.status, 2);
  EXPECT_EQ(validate.out,
            "rubrics/order_quality.yaml:3:5: /criteria/0/description: required property is missing\n"
            "skills/extract_order/skill.yaml:15:19: /review/rubric: rubric \"order_quality\" did not load: "
            "rubrics/order_quality.yaml:3:5: /criteria/0/description: required property is missing\n"
            "0 skill(s) and 0 rubric(s) loaded; 2 error(s), 0 warning(s) (schemas not compared: skills is not in a git "
            "work tree)\n");
}

// 3. Schema typos of a keyword are errors naming the keyword, its place and
//    the closest keyword; the other findings are warnings with their code, and
//    --strict makes them fail.
TEST_F(FirstHourTest, SchemaTyposAreErrorsAndStrictMakesWarningsFail) {
  tree_.Write("skillrunner.yaml", kConfig);
  tree_.Write("skills/order/skill.yaml", R"(id: order
template_type: LLM_JSON_GENERATION
model: local-sim
prompt: { user: "{{input.text}}" }
input_schema: { type: object, properties: { text: { type: string } } }
output_schema:
  type: object
  requried: [customer, total]
  properties:
    customer: { type: string }
    total: { type: number, minimun: 0 }
    lines: { type: object, additionalProperties: false, required: [sku], properties: { qty: { type: integer } } }
)");
  const std::string errors =
      "skills/order/skill.yaml:8:3: output_schema at /requried: unknown keyword \"requried\" (did you mean "
      "\"required\"?); as written it constrains nothing\n"
      "skills/order/skill.yaml:11:28: output_schema at /properties/total/minimun: unknown keyword "
      "\"minimun\" (did you mean \"minimum\"?); as written it constrains nothing\n";
  const std::string undeclared =
      "skills/order/skill.yaml:12:68: warning: output_schema at /properties/lines/required/0: required names "
      "\"sku\", which properties does not declare and additionalProperties: false forbids, so no answer can match "
      "[required-undeclared]\n";
  auto typos = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(typos.status, 2);
  EXPECT_EQ(typos.out, undeclared + errors +
                           "0 skill(s) and 0 rubric(s) loaded; 2 error(s), 1 warning(s) (schemas not compared: skills "
                           "is not in a git work tree)\n");
  tree_.Write("skills/order/skill.yaml", R"(id: order
template_type: LLM_JSON_GENERATION
model: local-sim
prompt: { user: "{{input.text}}" }
input_schema: { type: object, properties: { text: { type: string } } }
output_schema:
  type: object
  required: [customer, total]
  properties:
    customer: { type: string }
    total: { type: number, minimum: 0, maxi: 9 }
    lines: { type: object, additionalProperties: false, required: [sku], properties: { qty: { type: integer } } }
)");
  const std::string warnings =
      "skills/order/skill.yaml:11:40: warning: output_schema at /properties/total/maxi: unknown keyword \"maxi\" "
      "[unknown-keyword]\n" +
      undeclared;
  auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(validate.status, 0);
  EXPECT_EQ(validate.out, warnings +
                              "1 skill(s) and 0 rubric(s) loaded; 0 error(s), 2 warning(s) (schemas not compared: "
                              "skills is not in a git work tree)\n");
  auto strict = Skillrunner(tree_.Path(""), "validate --strict", "2>&1");
  EXPECT_EQ(strict.status, 2);
  EXPECT_EQ(strict.out, warnings +
                            "1 skill(s) and 0 rubric(s) loaded; 0 error(s), 2 warning(s) (--strict: warnings fail) "
                            "(schemas not compared: skills is not in a git work tree)\n");
}

// 8. Eval datasets are checked before any request; --baseline is resolved
//    before any case runs; errors the model did not cause fail the night.
TEST_F(FirstHourTest, EvalChecksCasesAndBaselineFirstAndFailsOnNonModelErrors) {
  tree_.Write("skills/count/skill.yaml", R"(id: count
handler: echo
input_schema: { type: object, required: [n], properties: { n: { type: integer } } }
output_schema: { type: object, properties: { n: { type: integer } } }
)");
  tree_.Write("skills/count/cases.jsonl",
              "{\"id\": \"c1\", \"input\": {\"n\": 1}, \"expected\": {\"n\": 1}}\n"
              "{\"id\": \"c2\", \"input\": {\"n\": \"two\"}}\n"
              "{\"id\": \"c3\", \"input\": {\"n\": 3}, \"expected\": {\"nn\": 3}}\n");
  tree_.Write("suite.yaml", "id: night\nskills:\n  - { skill: count, expected: subset }\n");
  auto checked = Skillrunner(tree_.Path(""), "eval suite.yaml --out out/a", "2>&1");
  EXPECT_EQ(checked.status, 2);
  EXPECT_EQ(checked.out,
            "skills/count/cases.jsonl:2:1: case \"c2\": /input/n: expected integer, found string \"two\"\n"
            "skills/count/cases.jsonl:3:1: case \"c3\": /expected/nn: the output_schema declares no property \"nn\" "
            "(did you mean \"n\"?), so no output can match it\n");

  tree_.Write("skills/count/cases.jsonl", "{\"id\": \"c1\", \"input\": {\"n\": 1}, \"expected\": {\"n\": 1}}\n");
  auto baseline = Skillrunner(tree_.Path(""), "eval suite.yaml --out out/b --baseline NOPE", "2>&1");
  EXPECT_EQ(baseline.status, 2);
  EXPECT_EQ(baseline.out, "skillrunner eval: baseline: baseline run NOPE is not in the eval history " +
                              tree_.Path("out/eval-history.sqlite").string() + " (checked before any case ran)\n");

  tree_.Write("skills/broken/skill.yaml", R"(id: broken
handler: exec
command: [sh, -c, "exit 3"]
input_schema: { type: object }
output_schema: { type: object }
)");
  tree_.Write("skills/broken/cases.jsonl", "{\"id\": \"b1\", \"input\": {}}\n{\"id\": \"b2\", \"input\": {}}\n");
  tree_.Write("suite.yaml", "id: night\nskills:\n  - { skill: broken }\n");
  auto failing = Skillrunner(tree_.Path(""), "eval suite.yaml --out out/c", "2>&1");
  EXPECT_EQ(failing.status, 1) << failing.out;
  EXPECT_NE(failing.out.find("breach: broken: 2 case(s) ended in an error that is not about the model's answer "
                             "(HANDLER_FAILED: 2)\n"),
            std::string::npos)
      << failing.out;
}

// design.md §9.4: an eval's cost in its summary, and max_cost_usd thresholds for
// a skill and for the whole run.
TEST_F(FirstHourTest, AnEvalSumsItsCostAndChecksItsCostThresholds) {
  tree_.Write("skillrunner.yaml", R"(providers:
  sim: { kind: simulated }
models:
  priced: { provider: sim, structured_output: none, price: { input: 1000, output: 1000 } }
)");
  tree_.Write("skills/order/skill.yaml", R"(id: order
template_type: LLM_JSON_GENERATION
model: priced
prompt: { user: "{{input.text}}" }
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema: { type: object, required: [total], properties: { total: { type: number } } }
)");
  tree_.Write("skills/order/cases.jsonl",
              "{\"id\": \"a\", \"input\": {\"text\": \"2 mugs\"}}\n"
              "{\"id\": \"b\", \"input\": {\"text\": \"3 cups\"}}\n");
  tree_.Write("suite.yaml",
              "id: night\nthresholds: { max_cost_usd: 0.001 }\n"
              "skills:\n  - { skill: order, thresholds: { max_cost_usd: 0.0001 } }\n");
  auto run = Skillrunner(tree_.Path(""), "eval suite.yaml --out out", "2>&1");
  EXPECT_EQ(run.status, 1) << run.out;
  std::ifstream file(tree_.Path("out/summary.json"));
  std::stringstream text;
  text << file.rdbuf();
  json::value summary = json::parse(text.str());
  const double cost = summary.at("totals").at("cost_usd").as_double();
  EXPECT_GT(cost, 0.001) << text.str();  // thousands of dollars a million tokens: any answer breaks both
  EXPECT_EQ(summary.at("skills").at("order").at("cost_usd").as_double(), cost);
  EXPECT_NE(run.out.find("breach: order: cost in USD"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("breach: (run): cost in USD"), std::string::npos) << run.out;
}

}  // namespace
}  // namespace skillrunner
