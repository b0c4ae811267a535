// Lint codes and their acknowledgement (design.md §10.1), with the real
// program: a misspelt keyword and an unknown format are errors naming the
// closest name, on handler and LLM skills alike; every warning carries its
// code; `lint: {allow}` and `validate --allow` make --strict usable.
#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "runner/tree/lint_codes.h"
#include "tests/runner/cli/cli_config.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner {
namespace {
namespace json = boost::json;
using test_support::Skillrunner;

constexpr const char* kConfig = testing::kCliTestConfig;

// The head of a skill of each kind; the output schema follows.
constexpr const char* kHandlerHead = R"(id: s
handler: echo
input_schema: { type: object, properties: { text: { type: string } } }
)";
constexpr const char* kOpenAiHead = R"(id: s
template_type: LLM_JSON_GENERATION
model: gpt-4o-mini
prompt: { user: "{{input.text}}" }
input_schema: { type: object, properties: { text: { type: string } } }
)";

class LintTest : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override { tree_.Write("skillrunner.yaml", kConfig); }
  int HeadLines() const { return GetParam() == kHandlerHead ? 3 : 5; }
  std::string At(int line, int col) const {
    return "skills/s/skill.yaml:" + std::to_string(HeadLines() + line) + ":" + std::to_string(col) + ": ";
  }
  testing::TempTree tree_;
};

// `requried:` silently dropped three required fields; now it is an error.
TEST_P(LintTest, AMisspeltKeywordIsAnErrorWithDidYouMean) {
  tree_.Write("skills/s/skill.yaml", std::string(GetParam()) + R"(output_schema:
  type: object
  requried: [name, total]
  properties:
    name: { type: string, minLenght: 1 }
    total: { type: number }
)");
  auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(validate.status, 2);
  EXPECT_EQ(validate.out, At(3, 3) +
                              "output_schema at /requried: unknown keyword \"requried\" (did you "
                              "mean \"required\"?); as "
                              "written it constrains nothing\n" +
                              At(5, 27) +
                              "output_schema at /properties/name/minLenght: unknown keyword "
                              "\"minLenght\" (did you "
                              "mean \"minLength\"?); as written it constrains nothing\n"
                              "0 skill(s) and 0 rubric(s) loaded; 2 error(s), 0 warning(s) (schemas not compared: "
                              "skills is not in a git work tree)\n");
  auto as_json = Skillrunner(tree_.Path(""), "validate --json");
  EXPECT_EQ(as_json.status, 2);
  json::value report = json::parse(as_json.out);
  EXPECT_EQ(report.at("diagnostics").at(0).at("code"), "keyword-typo");
  EXPECT_EQ(report.at("diagnostics").at(0).at("severity"), "error");
  EXPECT_EQ(report.at("diagnostics").at(0).at("pointer"), "");
}

// `format: data` passed silently (handler) or claimed client-side
// enforcement (OpenAI); now it is an error naming "date".
TEST_P(LintTest, AnUnknownFormatIsAnErrorNamingTheClosestFormat) {
  tree_.Write("skills/s/skill.yaml", std::string(GetParam()) + R"(output_schema:
  type: object
  properties:
    due: { type: string, format: data }
    code: { type: string, format: zzzzzzzz }
)");
  auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(validate.status, 2);
  EXPECT_EQ(validate.out, At(4, 34) +
                              "output_schema at /properties/due/format: unknown format \"data\": "
                              "did you mean \"date\"?\n" +
                              At(5, 35) +
                              "output_schema at /properties/code/format: unknown format "
                              "\"zzzzzzzz\" (known formats: date-time, "
                              "date, time, email, idn-email, hostname, idn-hostname, ipv4, ipv6, "
                              "uri, uri-reference, iri, "
                              "iri-reference, uri-template, json-pointer, relative-json-pointer, "
                              "regex, uuid, duration)\n"
                              "0 skill(s) and 0 rubric(s) loaded; 2 error(s), 0 warning(s) (schemas not compared: "
                              "skills is not in a git work tree)\n");
  EXPECT_EQ(validate.out.find("client-side"), std::string::npos);
}

// A draft format nothing here checks is a warning that says so, never a
// claim of client-side enforcement.
TEST_P(LintTest, AFormatNothingChecksIsAWarningThatSaysSo) {
  tree_.Write("skills/s/skill.yaml", std::string(GetParam()) + R"(output_schema:
  type: object
  properties:
    link: { type: string, format: iri }
)");
  auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(validate.status, 0);
  EXPECT_EQ(validate.out, "skills/s/skill.yaml:" + std::to_string(HeadLines() + 4) +
                              ":35: warning: output_schema at /properties/link/format: format "
                              "\"iri\" is checked by no "
                              "validator here: any string passes [format-unchecked]\n"
                              "1 skill(s) and 0 rubric(s) loaded; 0 error(s), 1 warning(s) (schemas not compared: "
                              "skills is not in a git work tree)\n");
}

INSTANTIATE_TEST_SUITE_P(HandlerAndOpenAi, LintTest, ::testing::Values(kHandlerHead, kOpenAiHead),
                         [](const auto& info) { return info.param == kHandlerHead ? "Handler" : "OpenAi"; });

class LintAllowTest : public ::testing::Test {
 protected:
  void SetUp() override { tree_.Write("skillrunner.yaml", kConfig); }
  void WriteSkill(const std::string& lint) {
    tree_.Write("skills/s/skill.yaml", std::string(kOpenAiHead) + R"(output_schema:
  type: object
  x-owner: billing
  properties:
    name: { type: string, minLength: 1 }
)" + lint);
  }
  testing::TempTree tree_;
};

constexpr const char* kStrictWarning =
    "skills/s/skill.yaml:10:11: warning: /output_schema: /properties/name: "
    "minLength 1 is enforced only by "
    "client-side validation (openai strict mode) [strict-unenforced]\n";
constexpr const char* kUnknownWarning =
    "skills/s/skill.yaml:8:3: warning: output_schema at /x-owner: unknown "
    "keyword \"x-owner\" [unknown-keyword]\n";

TEST_F(LintAllowTest, WarningsCarryTheirCodeAndStrictFailsOnThem) {
  WriteSkill("");
  auto strict = Skillrunner(tree_.Path(""), "validate --strict", "2>&1");
  EXPECT_EQ(strict.status, 2);
  EXPECT_EQ(strict.out,
            std::string(kUnknownWarning) + kStrictWarning +
                "1 skill(s) and 0 rubric(s) loaded; 0 error(s), 2 "
                "warning(s) (--strict: warnings fail) (schemas not compared: skills is not in a git work tree)\n");
  auto as_json = Skillrunner(tree_.Path(""), "validate --strict --json");
  EXPECT_EQ(as_json.status, 2);
  json::value report = json::parse(as_json.out);
  EXPECT_EQ(report.at("ok"), false);
  EXPECT_EQ(report.at("diagnostics").at(1), json::parse(R"J({"file":"skills/s/skill.yaml","line":10,"col":11,
      "pointer":"/output_schema","severity":"warning","code":"strict-unenforced","allowed":false,
      "message":"/properties/name: minLength 1 is enforced only by client-side validation (openai strict mode)"})J"));
}

TEST_F(LintAllowTest, ASkillsLintAllowAndValidateAllowAcknowledgeWarnings) {
  WriteSkill("lint: { allow: [strict-unenforced] }\n");
  auto strict = Skillrunner(tree_.Path(""), "validate --strict", "2>&1");
  EXPECT_EQ(strict.status, 2);
  EXPECT_EQ(strict.out, std::string(kUnknownWarning) +
                            "1 skill(s) and 0 rubric(s) loaded; 0 error(s), 1 "
                            "warning(s), 1 allowed (--strict: "
                            "warnings fail) (schemas not compared: skills is not in a git work tree)\n");
  auto allowed = Skillrunner(tree_.Path(""), "validate --strict --allow unknown-keyword", "2>&1");
  EXPECT_EQ(allowed.status, 0);
  EXPECT_EQ(allowed.out,
            "1 skill(s) and 0 rubric(s) loaded; 0 error(s), 0 "
            "warning(s), 2 allowed (schemas not compared: skills is not in a git work tree)\n");
  auto as_json = Skillrunner(tree_.Path(""), "validate --strict --json --allow unknown-keyword");
  EXPECT_EQ(as_json.status, 0);
  json::value report = json::parse(as_json.out);
  EXPECT_EQ(report.at("ok"), true);
  ASSERT_EQ(report.at("diagnostics").as_array().size(), 2u);
  EXPECT_EQ(report.at("diagnostics").at(0).at("allowed"), true);
  EXPECT_EQ(report.at("diagnostics").at(1).at("allowed"), true);
  // Both flags repeat.
  WriteSkill("");
  auto both = Skillrunner(tree_.Path(""), "validate --strict --allow unknown-keyword --allow strict-unenforced");
  EXPECT_EQ(both.status, 0);
}

TEST_F(LintAllowTest, AnUnknownOrErrorCodeInEitherIsAnError) {
  WriteSkill("lint: { allow: [strict-unenfroced, keyword-typo] }\n");
  auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(validate.status, 2);
  EXPECT_EQ(validate.out, std::string(kUnknownWarning) + kStrictWarning +
                              "skills/s/skill.yaml:11:17: /lint/allow/0: \"strict-unenfroced\" is "
                              "not a lint code (did you mean "
                              "\"strict-unenforced\"?)\n"
                              "skills/s/skill.yaml:11:36: /lint/allow/1: \"keyword-typo\" is an "
                              "error's code; only warnings can "
                              "be allowed\n"
                              "0 skill(s) and 0 rubric(s) loaded; 2 error(s), 2 warning(s) (schemas not compared: "
                              "skills is not in a git work tree)\n");
  WriteSkill("");
  auto flag = Skillrunner(tree_.Path(""), "validate --strict --allow unknown-keywrod", "2>&1");
  EXPECT_EQ(flag.status, 2);
  EXPECT_EQ(flag.out,
            "skillrunner validate: --allow: \"unknown-keywrod\" is "
            "not a lint code (did you mean "
            "\"unknown-keyword\"?)\n");
}

// Every code a check reports is in the documented table.
TEST_F(LintAllowTest, EveryReportedCodeIsDocumented) {
  tree_.Write("skills/a/skill.yaml", "id: a\nhandler: echo\nbogus: 1\n");
  tree_.Write("skills/b/skill.yaml", "id: b\nhandler: [\n");
  tree_.Write("skills/c/skill.yaml", std::string(kOpenAiHead) + "output_schema: { type: object, requried: [] }\n");
  tree_.Write("skills/d/skill.yaml", "id: d\nhandler: nope\ninput_schema: {}\noutput_schema: {}\n");
  tree_.Write("skills/e/skill.yaml",
              "id: e\ntemplate_type: LLM_JSON_GENERATION\nmodel: gpt-4o-mni\n"
              "prompt: { user: \"{{input.txt}}\" }\n"
              "input_schema: { type: object, properties: { text: { type: string } } }\n"
              "output_schema: { type: object }\n");
  auto as_json = Skillrunner(tree_.Path(""), "validate --json");
  EXPECT_EQ(as_json.status, 2);
  std::vector<std::string> codes;
  const json::value report = json::parse(as_json.out);
  for (const auto& d : report.at("diagnostics").as_array()) {
    std::string code(d.at("code").as_string());
    EXPECT_NE(FindLintCode(code), nullptr) << code;
    codes.push_back(code);
  }
  EXPECT_EQ(codes, (std::vector<std::string>{"unknown-key", "yaml-syntax", "keyword-typo", "reference-unknown",
                                             "placeholder-unknown", "model-unknown"}));
}

// `{{input.txt}}` names the property it probably meant, like every other name.
TEST_F(LintAllowTest, APlaceholderTypoNamesTheClosestProperty) {
  tree_.Write("skills/s/skill.yaml", R"(id: s
template_type: LLM_JSON_GENERATION
model: local-sim
prompt: { user: "Summarize {{input.txt}} for {{input.who.nme}}" }
input_schema:
  type: object
  properties: { text: { type: string }, who: { type: object, properties: { name: { type: string } } } }
output_schema: { type: object }
)");
  auto validate = Skillrunner(tree_.Path(""), "validate", "2>&1");
  EXPECT_EQ(validate.status, 2);
  EXPECT_EQ(validate.out,
            "skills/s/skill.yaml:4:17: /prompt/user: placeholder {{input.txt}} "
            "names a property input_schema does "
            "not declare (did you mean \"{{input.text}}\"?)\n"
            "skills/s/skill.yaml:4:17: /prompt/user: placeholder "
            "{{input.who.nme}} names a property input_schema "
            "does not declare (did you mean \"{{input.who.name}}\"?)\n"
            "0 skill(s) and 0 rubric(s) loaded; 2 error(s), 0 warning(s) (schemas not compared: skills is not in a git "
            "work tree)\n");
}

// The shipped tree (skills/, rubrics/, evals/, skillrunner.yaml) passes
// --strict: what cannot be avoided is acknowledged in the skills.
TEST(ShippedTreeTest, ValidateStrictPasses) {
  auto validate = Skillrunner(SKILLRUNNER_SOURCE_DIR, "validate --strict", "2>&1");
  EXPECT_EQ(validate.status, 0) << validate.out;
  EXPECT_EQ(validate.out.find("warning:"), std::string::npos) << validate.out;
}

}  // namespace
}  // namespace skillrunner

namespace skillrunner {
namespace {

// eval shows a tree's warnings once per run, never the acknowledged ones, and
// `eval merge` (which runs nothing) none.
TEST(LintEvalTest, EvalPrintsATreesWarningsOnceAndNeverAcknowledgedOnes) {
  testing::TempTree tree;
  const std::string head = R"(handler: echo
input_schema: { type: object, required: [n], properties: { n: { type: integer } } }
output_schema: { type: object, x-note: counted, properties: { n: { type: integer } } }
)";
  tree.Write("skills/a/skill.yaml", "id: a\n" + head);
  tree.Write("skills/b/skill.yaml", "id: b\n" + head + "lint: { allow: [unknown-keyword] }\n");
  for (const char* skill : {"a", "b"}) {
    tree.Write(std::string("skills/") + skill + "/cases.jsonl", "{\"id\": \"c1\", \"input\": {\"n\": 1}}\n");
  }
  tree.Write("suite.yaml", "id: night\nskills:\n  - { skill: a }\n  - { skill: b }\n");
  auto ran = test_support::Skillrunner(tree.Path(""), "eval suite.yaml --out out/a --shard 0/1", "2>&1");
  EXPECT_EQ(ran.status, 0) << ran.out;
  const std::string warning = "skills/a/skill.yaml:4:32: warning: output_schema at /x-note: unknown keyword";
  ASSERT_NE(ran.out.find(warning), std::string::npos) << ran.out;
  EXPECT_EQ(ran.out.find(warning, ran.out.find(warning) + 1), std::string::npos) << ran.out;
  EXPECT_EQ(ran.out.find("skills/b/"), std::string::npos) << ran.out;
  auto merged = test_support::Skillrunner(tree.Path(""), "eval merge out/a --out out/m", "2>&1");
  EXPECT_EQ(merged.status, 0) << merged.out;
  EXPECT_EQ(merged.out.find("warning:"), std::string::npos) << merged.out;
}

}  // namespace
}  // namespace skillrunner
