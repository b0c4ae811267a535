#include "runner/codegen/codegen.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <fstream>

#include "tests/runner/cli/cli_config.h"
#include "tests/support/cli_runner.h"
#include "tests/support/temp_tree.h"

namespace skillrunner::codegen {
namespace {

std::shared_ptr<const Skill> MakeSkill(const std::string& id, const std::string& input, const std::string& output,
                                       const std::string& description = "") {
  auto skill = std::make_shared<Skill>();
  skill->id = id;
  skill->version = 2;
  skill->description = description;
  skill->template_type = TemplateType::kLlmJsonGeneration;
  skill->input_schema_json = boost::json::parse(input);
  skill->output_schema_json = boost::json::parse(output);
  return skill;
}

// A keyword and a non-identifier property, a nullable type, an enum, one $ref used twice, an
// array of objects, a map, and a skill with untyped schemas.
std::vector<std::shared_ptr<const Skill>> Tree() {
  return {MakeSkill("route.incident-v2",
                    R"({"type":"object","required":["report"],"properties":{
                        "report":{"type":"string","description":"What happened."},
                        "from":{"type":["string","null"]}}})",
                    R"({"type":"object","required":["severity","owner"],"definitions":{
                          "person":{"type":"object","required":["name"],"properties":{"name":{"type":"string"}}}},
                        "properties":{
                        "severity":{"enum":["sev1","sev2"]},
                        "owner":{"$ref":"#/definitions/person"},
                        "backup":{"$ref":"#/definitions/person"},
                        "tags":{"type":"array","items":{"type":"object","properties":{"x-y":{"type":"integer"}}}},
                        "scores":{"type":"object","additionalProperties":{"type":"number"}}}})",
                    "Route an incident."),
          MakeSkill("echo", R"({"type":"object"})", R"({})")};
}

void ExpectContains(const std::string& text, const std::string& part) {
  EXPECT_NE(text.find(part), std::string::npos) << "missing:\n" << part << "\nin:\n" << text;
}

TEST(CodegenTest, PythonWritesTypedDictsAndASyncAndAnAsyncFunctionPerSkill) {
  auto file = Generate(Language::kPython, Tree());
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->name, "skillrunner_skills.py");
  ExpectContains(file->text,
                 "from typing import Any, Literal, NotRequired, TypeAlias, TypedDict, cast\n\n"
                 "from skillrunner_client import AsyncClient, Client\n\n"
                 "SCHEMA_HASHES: dict[str, str] = {\n"
                 "    \"route.incident-v2\": \"sha256:");
  // `from` is a keyword: the functional form keeps the property's own name.
  ExpectContains(file->text,
                 "# The input of skill route.incident-v2.\n"
                 "RouteIncidentV2Input = TypedDict(\n"
                 "    \"RouteIncidentV2Input\",\n"
                 "    {\n"
                 "        # What happened.\n"
                 "        \"report\": str,\n"
                 "        \"from\": NotRequired[str | None],\n"
                 "    },\n"
                 ")\n");
  ExpectContains(file->text,
                 "class RouteIncidentV2Output(TypedDict):\n"
                 "    \"\"\"The output of skill route.incident-v2.\"\"\"\n\n"
                 "    severity: Literal[\"sev1\", \"sev2\"]\n"
                 "    owner: Person\n"
                 "    backup: NotRequired[Person]\n"
                 "    tags: NotRequired[list[RouteIncidentV2OutputTagsItem]]\n"
                 "    scores: NotRequired[dict[str, float]]\n");
  ExpectContains(file->text,
                 "async def route_incident_v2_async(\n"
                 "    client: AsyncClient,\n"
                 "    input: RouteIncidentV2Input,\n"
                 "    *,\n"
                 "    timeout_ms: int | None = None,\n"
                 "    allow_review_failure: bool = False,\n"
                 ") -> RouteIncidentV2Output:\n"
                 "    \"\"\"Route an incident.\n\n"
                 "    Skill route.incident-v2 version 2 (LLM_JSON_GENERATION).\n");
  ExpectContains(file->text,
                 "    result = await client.invoke(\n"
                 "        \"route.incident-v2\",\n"
                 "        input,\n"
                 "        timeout_ms=timeout_ms,\n"
                 "        schema_hash=SCHEMA_HASHES[\"route.incident-v2\"],\n"
                 "        skill_version=SKILL_VERSIONS[\"route.incident-v2\"],\n"
                 "    )\n"
                 "    if not allow_review_failure:\n"
                 "        result.raise_for_review()\n"
                 "    return cast(RouteIncidentV2Output, result.output)\n");
  ExpectContains(file->text,
                 "SKILL_VERSIONS: dict[str, int] = {\n    \"route.incident-v2\": 2,\n    \"echo\": 2,\n}\n");
  ExpectContains(file->text, "EchoInput: TypeAlias = dict[str, Any]\n\n\nEchoOutput: TypeAlias = Any\n");
  EXPECT_EQ(file->text.find("class Person2"), std::string::npos) << "one $ref, one type";
}

TEST(CodegenTest, TypeScriptWritesInterfacesAndAnAsyncFunctionPerSkill) {
  auto file = Generate(Language::kTypeScript, Tree());
  ASSERT_TRUE(file) << file.error().message;
  EXPECT_EQ(file->name, "skills.ts");
  ExpectContains(file->text, "import { raiseForReview, type Client } from \"skillrunner-client\";\n");
  ExpectContains(file->text, "  allowReviewFailure?: boolean;\n}\n");
  ExpectContains(file->text,
                 "  if (!options.allowReviewFailure) raiseForReview(result);\n  return result.output;\n}\n");
  ExpectContains(file->text,
                 "/** The input of skill route.incident-v2. */\n"
                 "export interface RouteIncidentV2Input {\n"
                 "  /** What happened. */\n"
                 "  report: string;\n"
                 "  from?: string | null;\n"
                 "}\n");
  ExpectContains(file->text, "export interface RouteIncidentV2OutputTagsItem {\n  \"x-y\"?: number;\n}\n");
  ExpectContains(file->text,
                 "export interface RouteIncidentV2Output {\n"
                 "  severity: \"sev1\" | \"sev2\";\n"
                 "  owner: Person;\n"
                 "  backup?: Person;\n"
                 "  tags?: Array<RouteIncidentV2OutputTagsItem>;\n"
                 "  scores?: Record<string, number>;\n"
                 "}\n");
  ExpectContains(file->text,
                 "export async function routeIncidentV2(\n"
                 "  client: Client,\n"
                 "  input: RouteIncidentV2Input,\n"
                 "  options: SkillCallOptions = {},\n"
                 "): Promise<RouteIncidentV2Output> {\n"
                 "  const result = await client.invoke<RouteIncidentV2Output>(\"route.incident-v2\", input, {\n"
                 "    ...options,\n"
                 "    schemaHash: \"sha256:");
  ExpectContains(file->text, "\",\n    skillVersion: 2,\n  });\n");
  ExpectContains(file->text,
                 "export const skillVersions: Readonly<Record<string, number>> = {\n  \"route.incident-v2\": 2,\n"
                 "  \"echo\": 2,\n};\n");
  ExpectContains(file->text, "export type EchoInput = Record<string, unknown>;\n\nexport type EchoOutput = unknown;\n");
}

// A verdict's `first` is the verdict again: the type refers to itself (quoted in Python, where
// the class does not exist yet while its body runs).
TEST(CodegenTest, ASchemaReferringToItselfGivesARecursiveType) {
  auto skill = MakeSkill("tree", R"({"type":"object"})",
                         R"({"type":"object","required":["label"],"properties":{
                             "label":{"type":"string"},"parent":{"$ref":"#"}}})");
  auto python = Generate(Language::kPython, {skill});
  ASSERT_TRUE(python);
  ExpectContains(python->text, "    label: str\n    parent: NotRequired[\"TreeOutput\"]\n");
  auto typescript = Generate(Language::kTypeScript, {skill});
  ASSERT_TRUE(typescript);
  ExpectContains(typescript->text, "  label: string;\n  parent?: TreeOutput;\n");
}

TEST(CodegenTest, NamesFollowTheIdsAndAvoidKeywords) {
  EXPECT_EQ(PythonFunctionName("triage_ticket"), "triage_ticket");
  EXPECT_EQ(PythonFunctionName("route.incident-v2"), "route_incident_v2");
  EXPECT_EQ(PythonFunctionName("2fa_check"), "s_2fa_check");
  EXPECT_EQ(PythonFunctionName("class"), "s_class");
  EXPECT_EQ(TypeScriptFunctionName("triage_ticket"), "triageTicket");
  EXPECT_EQ(TypeScriptFunctionName("route.incident-v2"), "routeIncidentV2");
  EXPECT_EQ(TypeScriptFunctionName("2fa-check"), "s_2faCheck");
  EXPECT_EQ(TypeScriptFunctionName("delete"), "s_delete");
  EXPECT_EQ(PascalName("route.incident-v2"), "RouteIncidentV2");
  EXPECT_EQ(PascalName("first name"), "FirstName");
  EXPECT_EQ(PascalName("none"), "SNone");
}

TEST(CodegenTest, TwoIdsGivingOneFunctionNameAreAnError) {
  auto a = MakeSkill("route.incident", R"({})", R"({})");
  auto b = MakeSkill("route_incident", R"({})", R"({})");
  auto python = Generate(Language::kPython, {a, b});
  ASSERT_FALSE(python);
  EXPECT_EQ(python.error().code, ErrorCode::kConfigInvalid);
  EXPECT_EQ(python.error().message,
            "skills \"route.incident\" and \"route_incident\" both become the python function route_incident; "
            "rename one of them");
  auto typescript = Generate(Language::kTypeScript, {MakeSkill("a-b", "{}", "{}"), MakeSkill("a_b", "{}", "{}")});
  ASSERT_FALSE(typescript);
  EXPECT_EQ(typescript.error().message,
            "skills \"a-b\" and \"a_b\" both become the typescript function aB; rename one of them");
  // `x_async` is the async function of skill x.
  EXPECT_FALSE(Generate(Language::kPython, {MakeSkill("x", "{}", "{}"), MakeSkill("x_async", "{}", "{}")}));
}

}  // namespace
}  // namespace skillrunner::codegen

namespace skillrunner {
namespace {
using test_support::Skillrunner;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class CodegenCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Write("skillrunner.yaml", testing::kCliTestConfig);
    tree_.Write("skills/echo_it/skill.yaml", R"(id: echo_it
handler: echo
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema: { type: object, properties: { text: { type: string } } }
)");
  }
  testing::TempTree tree_;
};

TEST_F(CodegenCliTest, WritesTheFileIntoTheOutFolder) {
  auto result = Skillrunner(tree_.Path(""), "codegen python --out gen/py", "2>&1");
  EXPECT_EQ(result.status, 0) << result.out;
  EXPECT_EQ(result.out, "skillrunner codegen: wrote gen/py/skillrunner_skills.py (1 skills)\n");
  EXPECT_NE(ReadFile(tree_.Path("gen/py/skillrunner_skills.py"))
                .find("def echo_it(\n    client: Client,\n    input: EchoItInput,\n"),
            std::string::npos);
  result = Skillrunner(tree_.Path(""), "codegen typescript --out gen/ts", "2>&1");
  EXPECT_EQ(result.status, 0) << result.out;
  EXPECT_NE(ReadFile(tree_.Path("gen/ts/skills.ts")).find("export async function echoIt("), std::string::npos);
}

// Generated code from a tree with errors would call skills that are not there: nothing is written.
TEST_F(CodegenCliTest, ATreeWithAnErrorWritesNothingAndExits2) {
  tree_.Write("skills/broken/skill.yaml", "id: broken\nhandler: echo\ninput_schema: { type: objekt }\n");
  auto result = Skillrunner(tree_.Path(""), "codegen python --out gen", "2>&1");
  EXPECT_EQ(result.status, 2) << result.out;
  EXPECT_NE(result.out.find("skills/broken/skill.yaml:3:"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("skillrunner codegen: the tree has errors; nothing written\n"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(tree_.Path("gen/skillrunner_skills.py")));
}

TEST_F(CodegenCliTest, AnOutFolderThatCannotBeMadeIsAnErrorNamingTheFile) {
  tree_.Write("taken", "a file where the folder would go\n");
  auto result = Skillrunner(tree_.Path(""), "codegen python --out taken/gen", "2>&1");
  EXPECT_EQ(result.status, 2);
  EXPECT_EQ(result.out, "skillrunner codegen: cannot write taken/gen/skillrunner_skills.py\n");
}

TEST_F(CodegenCliTest, AnUnknownLanguageIsAUsageError) {
  auto result = Skillrunner(tree_.Path(""), "codegen rust --out gen", "2>&1");
  EXPECT_EQ(result.status, 2);
  EXPECT_NE(result.out.find("rust not in {python,typescript}"), std::string::npos) << result.out;
}

}  // namespace
}  // namespace skillrunner
