// What the tree looks like to an MCP client: tools, their schemas and a call's result (pure functions).
#include "runner/mcp/mcp_tools.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace skillrunner::mcp {
namespace {
namespace json = boost::json;

Skill MakeSkill(std::string id, const char* input_schema, const char* output_schema,
                TemplateType type = TemplateType::kLlmJsonGeneration) {
  Skill skill;
  skill.id = std::move(id);
  skill.description = "does " + skill.id;
  skill.template_type = type;
  skill.input_schema_json = json::parse(input_schema);
  skill.output_schema_json = json::parse(output_schema);
  return skill;
}

TEST(McpToolsTest, VersionsNewerOrUnknownGetTheNewestAndOlderOnesHaveNoStructuredOutput) {
  EXPECT_EQ(NegotiatedVersion("2025-06-18"), "2025-06-18");
  EXPECT_EQ(NegotiatedVersion("2025-03-26"), "2025-03-26");
  EXPECT_EQ(NegotiatedVersion("2024-11-05"), "2024-11-05");
  EXPECT_EQ(NegotiatedVersion("2025-11-25"), "2025-06-18");
  EXPECT_EQ(NegotiatedVersion("banana"), "2025-06-18");
  EXPECT_TRUE(HasStructuredOutput("2025-06-18"));
  EXPECT_FALSE(HasStructuredOutput("2025-03-26"));
  EXPECT_FALSE(HasStructuredOutput("2024-11-05"));
}

TEST(McpToolsTest, ASchemaLosesSchemaAndIdAndItsLocalRefsAreCopiedInPlace) {
  auto schema = json::parse(R"({
    "$schema": "http://json-schema.org/draft-07/schema#", "$id": "https://example.com/s",
    "type": "object",
    "properties": {"a": {"$ref": "#/definitions/name", "description": "kept over the target"},
                   "b": {"type": "array", "items": {"$ref": "#/definitions/name"}},
                   "c": {"enum": [{"$ref": "data, not a schema"}]}},
    "definitions": {"name": {"type": "string", "description": "a name"}}})");
  EXPECT_EQ(ToolSchema(schema), json::parse(R"({
    "type": "object",
    "properties": {"a": {"type": "string", "description": "kept over the target"},
                   "b": {"type": "array", "items": {"type": "string", "description": "a name"}},
                   "c": {"enum": [{"$ref": "data, not a schema"}]}}})"));
}

TEST(McpToolsTest, ARecursiveRefStaysWithTheDefinitionsItNeeds) {
  auto schema = json::parse(R"({
    "type": "object", "properties": {"root": {"$ref": "#/$defs/node"}},
    "$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}})");
  // The first use is copied in place; inside it, the ref to itself is kept, and so is $defs.
  EXPECT_EQ(ToolSchema(schema), json::parse(R"({
    "type": "object",
    "properties": {"root": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
    "$defs": {"node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}}})"));
}

TEST(McpToolsTest, NonObjectRootsAreWrappedAsInputAndResult) {
  Skill skill = MakeSkill("count", R"({"type": "array", "items": {"$ref": "#/definitions/item"},
                                      "definitions": {"item": {"type": "string"}}})",
                          R"({"type": "integer"})");
  json::object tool = ToolOf(skill, true);
  EXPECT_EQ(json::value(tool), json::parse(R"({
    "name": "count", "description": "does count",
    "inputSchema": {"type": "object", "properties": {"input": {"type": "array", "items": {"type": "string"}}},
                    "required": ["input"], "additionalProperties": false},
    "outputSchema": {"type": "object", "properties": {"result": {"type": "integer"}},
                     "required": ["result"], "additionalProperties": false},
    "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}})"));
  EXPECT_FALSE(ToolOf(skill, false).contains("outputSchema"));
  EXPECT_EQ(SkillInput(skill, json::parse(R"({"input": ["a", "b"]})")), json::parse(R"(["a", "b"])"));
  EXPECT_EQ(SkillInput(skill, json::parse(R"({"other": 1})")), json::value(nullptr));  // the schema says why
  Skill object = MakeSkill("o", R"({"type": "object"})", R"({"type": "object"})");
  EXPECT_EQ(SkillInput(object, nullptr), json::object{});
  EXPECT_EQ(SkillInput(object, json::parse(R"({"x": 1})")), json::parse(R"({"x": 1})"));
}

TEST(McpToolsTest, ReviewSkillsAreNoToolsAndHandlersMayTouchTheWorld) {
  EXPECT_FALSE(IsTool(MakeSkill("judge", "{}", "{}", TemplateType::kLlmReview)));
  Skill handler = MakeSkill("run", R"({"type": "object"})", R"({"type": "object"})", TemplateType::kHandler);
  ASSERT_TRUE(IsTool(handler));
  EXPECT_EQ(ToolOf(handler, true).at("annotations"),
            json::parse(R"({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false,
                            "openWorldHint": true})"));
}

TEST(McpToolsTest, AResultIsStructuredAndTextAndAFailedReviewIsNoErrorButSaysSoInMeta) {
  Skill skill = MakeSkill("count", R"({"type": "object"})", R"({"type": "integer"})");
  auto answer =
      json::parse(R"({"jsonrpc": "2.0", "id": 1, "result": {"skill": "count", "skill_version": 2, "arm": "candidate",
    "output": 3, "review": {"pass": false, "issues": ["too low"]}, "attempts": [], "metrics": {"attempts": 1}}})");
  EXPECT_EQ(json::value(CallResult(skill, answer.as_object(), true)), json::parse(R"({
    "content": [{"type": "text", "text": "3"}], "isError": false, "structuredContent": {"result": 3},
    "_meta": {"skillrunner/skill_version": 2, "skillrunner/arm": "candidate", "skillrunner/metrics": {"attempts": 1},
              "skillrunner/review": {"pass": false, "issues": ["too low"]}}})"));
  // 2025-03-26 and before: no structuredContent.
  EXPECT_FALSE(CallResult(skill, answer.as_object(), false).contains("structuredContent"));
}

TEST(McpToolsTest, AFailureIsIsErrorWithItsCodeMessageAttemptsAndFieldErrors) {
  Skill skill = MakeSkill("s", R"({"type": "object"})", R"({"type": "object"})");
  auto answer = json::parse(R"({"jsonrpc": "2.0", "id": 1, "error": {"code": -32000, "message": "schema",
    "data": {"code": "SCHEMA_VALIDATION_FAILED", "message": "the output broke its schema twice",
             "errors": [{"path": "/a", "message": "required"}], "attempts": [{}, {}], "metrics": {"attempts": 2}}}})");
  EXPECT_EQ(json::value(CallResult(skill, answer.as_object(), true)), json::parse(R"({
    "content": [{"type": "text", "text": "SCHEMA_VALIDATION_FAILED: the output broke its schema twice (2 attempts)\n{\"path\":\"/a\",\"message\":\"required\"}"}],
    "isError": true,
    "_meta": {"skillrunner/error": {"code": "SCHEMA_VALIDATION_FAILED", "message": "the output broke its schema twice",
                                    "attempts": 2, "errors": [{"path": "/a", "message": "required"}],
                                    "metrics": {"attempts": 2}}}})"));
}

}  // namespace
}  // namespace skillrunner::mcp
