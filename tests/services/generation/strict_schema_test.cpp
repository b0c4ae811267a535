#include "services/generation/strict_schema.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

#include "services/validation/compiled_schema.h"

namespace skillrunner::generation {
namespace {

namespace json = boost::json;
using Lines = std::vector<std::string>;

constexpr auto kOpenAi = StrictDialect::kOpenAi;
constexpr auto kAnthropic = StrictDialect::kAnthropic;

StrictSchema Ok(std::string_view schema, StrictDialect dialect) {
  auto result = MakeStrictSchema(json::parse(schema), dialect);
  EXPECT_TRUE(result.has_value()) << (result ? "" : result.error().message);
  if (!result) return {};
  auto compiled = validation::CompiledSchema::Compile(result->wire);
  EXPECT_TRUE(compiled.has_value()) << "wire schema does not compile: " << json::serialize(result->wire);
  return *result;
}

std::string Refusal(std::string_view schema, StrictDialect dialect) {
  auto result = MakeStrictSchema(json::parse(schema), dialect);
  EXPECT_FALSE(result.has_value()) << json::serialize(result->wire);
  if (!result) {
    EXPECT_EQ(result.error().code, ErrorCode::kConfigInvalid);
  }
  return result ? std::string() : result.error().message;
}

constexpr std::string_view kContact = R"({
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 200, "description": "Full name"},
    "phone": {"type": "string", "default": ""},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["vip", "new"]}, "uniqueItems": true},
    "address": {
      "type": "object",
      "properties": {"street": {"type": "string"}, "zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
      "required": ["street"]
    }
  },
  "required": ["name"]
})";

TEST(StrictSchemaTest, OpenAiMakesEveryPropertyRequiredAndOptionalOnesNullable) {
  StrictSchema strict = Ok(kContact, kOpenAi);
  EXPECT_EQ(strict.wire, json::parse(R"j({
    "type": "object",
    "properties": {
      "name": {"type": "string", "description": "Full name (maxLength 200)"},
      "phone": {"type": ["string", "null"]},
      "tags": {"anyOf": [{"type": "array", "items": {"type": "string", "enum": ["vip", "new"]},
                          "description": "(uniqueItems true)"},
                         {"type": "null"}]},
      "address": {"anyOf": [{"type": "object",
                             "properties": {"street": {"type": "string"},
                                            "zip": {"type": ["string", "null"], "pattern": "^[0-9]{5}$"}},
                             "required": ["street", "zip"], "additionalProperties": false},
                            {"type": "null"}]}
    },
    "required": ["name", "phone", "tags", "address"],
    "additionalProperties": false
  })j"));
  EXPECT_EQ(strict.client_only,
            (Lines{"/properties/name: maxLength 200 is enforced only by client-side validation",
                   "/properties/tags: uniqueItems true is enforced only by client-side validation"}));
}

TEST(StrictSchemaTest, AnthropicKeepsRequiredAndClosesEveryObject) {
  StrictSchema strict = Ok(kContact, kAnthropic);
  EXPECT_EQ(strict.wire, json::parse(R"j({
    "type": "object",
    "properties": {
      "name": {"type": "string", "description": "Full name (maxLength 200)"},
      "phone": {"type": "string"},
      "tags": {"type": "array", "items": {"type": "string", "enum": ["vip", "new"]},
               "description": "(uniqueItems true)"},
      "address": {"type": "object",
                  "properties": {"street": {"type": "string"},
                                 "zip": {"type": "string", "description": "(pattern \"^[0-9]{5}$\")"}},
                  "required": ["street"], "additionalProperties": false}
    },
    "required": ["name"],
    "additionalProperties": false
  })j"));
  EXPECT_EQ(strict.client_only,
            (Lines{"/properties/name: maxLength 200 is enforced only by client-side validation",
                   "/properties/tags: uniqueItems true is enforced only by client-side validation",
                   "/properties/address/properties/zip: pattern \"^[0-9]{5}$\" is enforced only by client-side "
                   "validation"}));
}

TEST(StrictSchemaTest, AnthropicMovesBoundsIntoTheDescription) {
  StrictSchema strict = Ok(R"({"type":"object","properties":{
      "stars":{"type":"integer","minimum":1,"maximum":5,"description":"Rating"},
      "notes":{"type":"array","items":{"type":"string","format":"uri"},"minItems":2,"maxItems":4},
      "one":{"type":"array","items":{"type":"string","format":"hostname"},"minItems":1},
      "kind":{"const":"review"}},"required":["stars"]})",
                           kAnthropic);
  EXPECT_EQ(strict.wire, json::parse(R"j({"type":"object","properties":{
      "stars":{"type":"integer","description":"Rating (minimum 1, maximum 5)"},
      "notes":{"type":"array","items":{"type":"string","format":"uri"},"description":"(minItems 2, maxItems 4)"},
      "one":{"type":"array","items":{"type":"string","format":"hostname"},"minItems":1},
      "kind":{"enum":["review"]}},"required":["stars"],"additionalProperties":false})j"));
  EXPECT_EQ(strict.client_only, (Lines{"/properties/stars: minimum 1 is enforced only by client-side validation",
                                       "/properties/stars: maximum 5 is enforced only by client-side validation",
                                       "/properties/notes: minItems 2 is enforced only by client-side validation",
                                       "/properties/notes: maxItems 4 is enforced only by client-side validation"}));
}

TEST(StrictSchemaTest, OpenAiKeepsSupportedBoundsAndDropsOtherFormats) {
  StrictSchema strict = Ok(R"({"type":"object","properties":{
      "stars":{"type":"integer","minimum":1,"exclusiveMaximum":6,"multipleOf":1},
      "old":{"type":"number","minimum":0,"exclusiveMinimum":true},
      "site":{"type":"string","format":"uri"},
      "when":{"type":"string","format":"date-time"},
      "list":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":4}},
      "required":["stars","old","site","when","list"]})",
                           kOpenAi);
  EXPECT_EQ(strict.wire, json::parse(R"j({"type":"object","properties":{
      "stars":{"type":"integer","minimum":1,"exclusiveMaximum":6,"multipleOf":1},
      "old":{"type":"number","exclusiveMinimum":0},
      "site":{"type":"string","description":"(format \"uri\")"},
      "when":{"type":"string","format":"date-time"},
      "list":{"type":"array","items":{"type":"integer"},"minItems":2,"maxItems":4}},
      "required":["stars","old","site","when","list"],"additionalProperties":false})j"));
  EXPECT_EQ(strict.client_only, (Lines{"/properties/site: format \"uri\" is enforced only by client-side validation"}));
}

TEST(StrictSchemaTest, OptionalEnumConstRefAndAnyOfBecomeNullable) {
  StrictSchema strict = Ok(R"({"type":"object","definitions":{"Id":{"type":"string"},"Unused":{"type":"object"}},
      "properties":{
        "color":{"enum":["red","green"]},
        "size":{"type":"string","enum":["S","M"]},
        "kind":{"const":"x"},
        "id":{"$ref":"#/definitions/Id"},
        "either":{"anyOf":[{"type":"string"},{"type":"integer"}]},
        "already":{"type":["string","null"]},
        "also":{"anyOf":[{"type":"string"},{"type":"null"}]}}})",
                           kOpenAi);
  EXPECT_EQ(strict.wire, json::parse(R"({"type":"object","properties":{
      "color":{"enum":["red","green",null]},
      "size":{"type":["string","null"],"enum":["S","M",null]},
      "kind":{"anyOf":[{"const":"x"},{"type":"null"}]},
      "id":{"anyOf":[{"$ref":"#/$defs/Id"},{"type":"null"}]},
      "either":{"anyOf":[{"type":"string"},{"type":"integer"},{"type":"null"}]},
      "already":{"type":["string","null"]},
      "also":{"anyOf":[{"type":"string"},{"type":"null"}]}},
      "required":["color","size","kind","id","either","already","also"],"additionalProperties":false,
      "$defs":{"Id":{"type":"string"}}})"));
  EXPECT_TRUE(strict.client_only.empty());
}

TEST(StrictSchemaTest, RefWithSiblingsIsInlinedAndRecursionThroughRootIsKept) {
  StrictSchema strict = Ok(R"({"type":"object","$defs":{"Pt":{"type":"object","properties":{"x":{"type":"number"}},
      "required":["x"]}},"properties":{
        "home":{"$ref":"#/$defs/Pt","description":"Home"},
        "children":{"type":"array","items":{"$ref":"#"}}},"required":["home","children"]})",
                           kOpenAi);
  EXPECT_EQ(strict.wire, json::parse(R"({"type":"object","properties":{
      "home":{"type":"object","properties":{"x":{"type":"number"}},"required":["x"],
              "additionalProperties":false,"description":"Home"},
      "children":{"type":"array","items":{"$ref":"#"}}},
      "required":["home","children"],"additionalProperties":false})"));
}

TEST(StrictSchemaTest, OpenAiMergesAllOfOfPlainObjects) {
  StrictSchema strict = Ok(R"({"definitions":{"Base":{"type":"object","properties":{"id":{"type":"integer"}},
      "required":["id"]}},"allOf":[{"$ref":"#/definitions/Base"},
      {"properties":{"name":{"type":"string"}}}]})",
                           kOpenAi);
  EXPECT_EQ(strict.wire, json::parse(R"({"type":"object","properties":{"id":{"type":"integer"},
      "name":{"type":["string","null"]}},"required":["id","name"],"additionalProperties":false})"));
}

TEST(StrictSchemaTest, OneOfIsSentAsAnyOfAndReported) {
  std::string_view schema = R"({"type":"object","properties":{"v":{"oneOf":[{"type":"string"},
      {"type":"integer"}]}},"required":["v"]})";
  for (auto dialect : {kOpenAi, kAnthropic}) {
    StrictSchema strict = Ok(schema, dialect);
    EXPECT_EQ(strict.wire.at("properties").at("v"), json::parse(R"({"anyOf":[{"type":"string"},{"type":"integer"}]})"));
    EXPECT_EQ(strict.client_only, (Lines{"/properties/v: oneOf (exactly one branch) is enforced only by "
                                         "client-side validation; sent as anyOf"}));
  }
}

TEST(StrictSchemaTest, AnthropicKeepsAllOfAndRenamesDefinitions) {
  StrictSchema strict = Ok(R"({"type":"object","definitions":{"A":{"type":"object","properties":{
      "a":{"type":"string"}}}},"properties":{"p":{"allOf":[{"$ref":"#/definitions/A"},
      {"type":"object","properties":{"b":{"type":"integer"}}}]}}})",
                           kAnthropic);
  EXPECT_EQ(strict.wire, json::parse(R"({"type":"object","properties":{"p":{"allOf":[{"$ref":"#/$defs/A"},
      {"type":"object","properties":{"b":{"type":"integer"}},"additionalProperties":false}]}},
      "additionalProperties":false,
      "$defs":{"A":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}}})"));
}

// design.md §9.2 any root: what is not one object goes on the wire as {"value": ROOT}.
json::value Wrapped(std::string_view root) {
  json::value wire = json::parse(R"({"type":"object","properties":{"value":null},"required":["value"],
      "additionalProperties":false})");
  wire.at("properties").at("value") = json::parse(root);
  return wire;
}

TEST(StrictSchemaTest, ARootThatIsNotOneObjectIsWrappedAsTheRequiredValueOfAClosedObject) {
  for (auto dialect : {kOpenAi, kAnthropic}) {
    StrictSchema list = Ok(R"({"type":"array","items":{"type":"string","maxLength":5}})", dialect);
    EXPECT_TRUE(list.wrapped);
    EXPECT_EQ(list.wire, Wrapped(R"j({"type":"array","items":{"type":"string","description":"(maxLength 5)"}})j"));
    EXPECT_EQ(list.client_only, Lines{"/items: maxLength 5 is enforced only by client-side validation"});
    StrictSchema word = Ok(R"({"enum":["red","green"]})", dialect);
    EXPECT_TRUE(word.wrapped);
    EXPECT_EQ(word.wire, Wrapped(R"({"enum":["red","green"]})"));
    StrictSchema text = Ok(R"({"type":"string"})", dialect);
    EXPECT_EQ(text.wire, Wrapped(R"({"type":"string"})"));
    StrictSchema object = Ok(R"({"type":"object","properties":{"a":{"type":"string"}},"required":["a"]})", dialect);
    EXPECT_FALSE(object.wrapped);
  }
  // A root union, with its definitions beside the wrapper.
  StrictSchema either = Ok(R"({"anyOf":[{"$ref":"#/$defs/A"},{"type":"string"}],
      "$defs":{"A":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"]}}})",
                           kOpenAi);
  EXPECT_TRUE(either.wrapped);
  json::value expected = Wrapped(R"({"anyOf":[{"$ref":"#/$defs/A"},{"type":"string"}]})");
  expected.as_object()["$defs"] = json::parse(
      R"({"A":{"type":"object","properties":{"a":{"type":"string"}},"required":["a"],"additionalProperties":false}})");
  EXPECT_EQ(either.wire, expected);
  // A root ref to an object is one object: not wrapped.
  EXPECT_FALSE(Ok(R"({"$ref":"#/$defs/A","$defs":{"A":{"type":"object","properties":{"a":{"type":"string"}},
      "required":["a"]}}})",
                  kOpenAi)
                   .wrapped);
  // "#" would name the wrapper.
  EXPECT_EQ(Refusal(R"({"type":"array","items":{"anyOf":[{"type":"string"},{"$ref":"#"}]}})", kOpenAi),
            "/items/anyOf/1: $ref \"#\" makes the root recursive, and a root that is not one object goes on the "
            "wire inside {\"value\": ...}, where \"#\" would mean that wrapper");
  EXPECT_EQ(Refusal("5", kOpenAi), "(root): a schema must be an object or a boolean, found 5");
}

TEST(StrictSchemaTest, GeminiKeepsItsKeywordSubsetAndTakesAnyRoot) {
  constexpr auto kGemini = StrictDialect::kGemini;
  StrictSchema strict = Ok(R"({"type":"object","required":["n"],"properties":{
      "n":{"type":"integer","minimum":1,"maximum":9,"multipleOf":2},
      "tags":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","pattern":"^[a-z]+$"}},
      "when":{"type":"string","format":"date"},"mail":{"type":"string","format":"email"},
      "kind":{"const":"x"},"both":{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},
                                            {"type":"object","properties":{"b":{"type":"string"}}}]}}})",
                           kGemini);
  EXPECT_FALSE(strict.wrapped);
  EXPECT_EQ(strict.wire, json::parse(R"j({"type":"object","required":["n"],"properties":{
      "n":{"type":"integer","minimum":1,"maximum":9,"description":"(multipleOf 2)"},
      "tags":{"type":"array","minItems":1,"maxItems":3,"items":{"type":"string","description":"(pattern \"^[a-z]+$\")"}},
      "when":{"type":"string","format":"date"},"mail":{"type":"string","description":"(format \"email\")"},
      "kind":{"enum":["x"]},
      "both":{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"additionalProperties":false}},
      "additionalProperties":false})j"));
  StrictSchema list = Ok(R"({"type":"array","items":{"type":"string"}})", kGemini);
  EXPECT_FALSE(list.wrapped);
  EXPECT_EQ(list.wire, json::parse(R"({"type":"array","items":{"type":"string"}})"));
  EXPECT_EQ(
      Refusal(R"({"type":"object","properties":{"next":{"$ref":"#"}}})", kGemini),
      "/properties/next: $ref \"#\" makes the schema recursive; gemini strict mode does not take recursive schemas");
  EXPECT_EQ(DialectOf("gemini"), kGemini);
  EXPECT_EQ(DialectOf("anthropic"), StrictDialect::kAnthropic);
  EXPECT_EQ(DialectOf("openai"), StrictDialect::kOpenAi);
}

TEST(StrictSchemaTest, AWrappedAnswerIsUnwrappedAndAnythingElseLeftForValidation) {
  EXPECT_EQ(UnwrapStrictAnswer(json::parse(R"({"value":["a","b"]})")), json::parse(R"(["a","b"])"));
  EXPECT_EQ(UnwrapStrictAnswer(json::parse(R"({"value":null})")), json::value(nullptr));
  EXPECT_EQ(UnwrapStrictAnswer(json::parse(R"(["a"])")), json::parse(R"(["a"])"));
  EXPECT_EQ(UnwrapStrictAnswer(json::parse(R"({"value":1,"extra":2})")), json::parse(R"({"value":1,"extra":2})"));
}

TEST(StrictSchemaTest, OpenAiRefusals) {
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"tags":{"type":"array"}}})", kOpenAi),
            "/properties/tags: array has no items schema; openai strict mode needs typed items");
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"meta":{"type":"object"}}})", kOpenAi),
            "/properties/meta: object has no properties (a free-form object); strict mode cannot express it");
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"m":{"type":"object",
      "additionalProperties":{"type":"integer"}}}})",
                    kOpenAi),
            "/properties/m: additionalProperties with a schema (a map type) cannot be expressed in strict mode");
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"p":{"type":"array","items":[{"type":"string"}]}}})", kOpenAi),
            "/properties/p: items given as an array of schemas (a tuple) cannot be expressed in strict mode");
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"x":{}}})", kOpenAi),
            "/properties/x: schema has no type (nor enum, const, anyOf or $ref); strict mode needs one");
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"x":true}})", kOpenAi),
            "/properties/x: schema true (anything) has no type; strict mode needs one");
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]})", kOpenAi),
            "(root): required property \"b\" is not declared in properties; strict mode cannot produce it");
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"n":{"allOf":[{"type":"integer"},{"minimum":1}]}}})", kOpenAi),
            "/properties/n/allOf/0: openai strict mode takes allOf only as plain object schemas (type, properties, "
            "required) that can be merged into one; this branch has \"type\"");
}

TEST(StrictSchemaTest, RefusalsForBothDialects) {
  for (auto dialect : {kOpenAi, kAnthropic}) {
    EXPECT_EQ(Refusal(R"({"type":"object","properties":{"a":{"$ref":"https://example.com/a.json"}}})", dialect),
              "/properties/a: $ref \"https://example.com/a.json\" is not local; strict mode takes only references "
              "inside the schema (\"#...\")");
    EXPECT_EQ(Refusal(R"({"type":"object","properties":{"a":{"$ref":"#/definitions/Nope"}}})", dialect),
              "/properties/a: $ref \"#/definitions/Nope\" does not resolve inside the schema");
    EXPECT_EQ(Refusal(R"({"type":"object","properties":{"m":{"type":"object",
        "additionalProperties":{"type":"string"}}}})",
                      dialect),
              "/properties/m: additionalProperties with a schema (a map type) cannot be expressed in strict mode");
    EXPECT_EQ(Refusal(R"({"type":"object","properties":{"e":{"enum":[{"a":1}]}}})", dialect),
              "/properties/e: enum value {\"a\":1} is an object or array; strict mode takes only strings, numbers, "
              "booleans and null");
  }
}

TEST(StrictSchemaTest, AnthropicRefusesRecursion) {
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}}}})", kAnthropic),
            "/properties/kids/items: $ref \"#\" makes the schema recursive; anthropic strict mode does not take "
            "recursive schemas");
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"root":{"$ref":"#/definitions/Node"}},
      "definitions":{"Node":{"type":"object","properties":{"kids":{"type":"array",
      "items":{"$ref":"#/definitions/Node"}}}}}})",
                    kAnthropic),
            "/definitions/Node/properties/kids/items: $ref \"#/definitions/Node\" makes the schema recursive; "
            "anthropic strict mode does not take recursive schemas");
}

std::string ManyProperties(int count, std::string_view property) {
  std::string schema = R"({"type":"object","properties":{)";
  for (int i = 0; i < count; ++i) schema += (i ? ",\"p" : "\"p") + std::to_string(i) + "\":" + std::string(property);
  return schema + "}}";
}

TEST(StrictSchemaTest, AnthropicComplexityCaps) {
  Ok(ManyProperties(24, R"({"type":"string"})"), kAnthropic);
  EXPECT_EQ(Refusal(ManyProperties(25, R"({"type":"string"})"), kAnthropic),
            "(root): 25 optional properties; anthropic strict mode allows at most 24");
  std::string unions = R"({"type":"object","properties":{)";
  for (int i = 0; i < 17; ++i) unions += (i ? ",\"u" : "\"u") + std::to_string(i) + R"(":{"type":["string","null"]})";
  unions += "},\"required\":[";
  for (int i = 0; i < 17; ++i) unions += (i ? ",\"u" : "\"u") + std::to_string(i) + "\"";
  EXPECT_EQ(Refusal(unions + "]}", kAnthropic),
            "(root): 17 union-typed properties (anyOf or a type list such as [T, \"null\"]); anthropic strict mode "
            "allows at most 16");
}

TEST(StrictSchemaTest, OpenAiSizeLimits) {
  Ok(ManyProperties(5000, R"({"type":"integer"})"), kOpenAi);
  EXPECT_EQ(Refusal(ManyProperties(5001, R"({"type":"integer"})"), kOpenAi),
            "(root): 5001 properties in total; openai strict mode allows at most 5000");
  std::string nested = R"({"type":"string"})";
  for (int i = 0; i < 11; ++i) nested = R"({"type":"object","properties":{"n":)" + nested + R"(},"required":["n"]})";
  EXPECT_EQ(Refusal(nested, kOpenAi),
            "/properties/n/properties/n/properties/n/properties/n/properties/n/properties/n/properties/n/properties/"
            "n/properties/n/properties/n: objects nested 11 levels deep; openai strict mode allows at most 10");
  std::string values;
  for (int i = 0; i < 1001; ++i) values += (i ? "," : "") + std::to_string(i);
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"e":{"enum":[)" + values + "]}},\"required\":[\"e\"]}", kOpenAi),
            "(root): 1001 enum values in total; openai strict mode allows at most 1000");
  std::string strings;
  for (int i = 0; i < 300; ++i)
    strings += (i ? ",\"" : "\"") + std::string(60, 'a' + i % 26) + std::to_string(i) + "\"";
  EXPECT_EQ(Refusal(R"({"type":"object","properties":{"e":{"enum":[)" + strings + "]}},\"required\":[\"e\"]}", kOpenAi),
            "/properties/e: a string enum of 300 values totals 18790 characters; openai strict mode allows at most "
            "15000 for an enum over 250 values");
  std::string long_name(30000, 'k');
  std::string wide = R"({"type":"object","properties":{)";
  for (int i = 0; i < 5; ++i) wide += (i ? ",\"" : "\"") + long_name + std::to_string(i) + R"(":{"type":"string"})";
  EXPECT_EQ(Refusal(wide + "}}", kOpenAi),
            "(root): 150005 characters of property names, definition names, enum and const values; openai strict "
            "mode allows at most 120000");
}

TEST(StrictSchemaTest, DeeplyNestedSchemaIsRefusedNotOverflowed) {
  json::value schema = json::object{{"type", "string"}};
  for (int i = 0; i < 20000; ++i) {  // built by moves: a copy would recurse
    json::object level;
    level["type"] = "array";
    level["items"] = std::move(schema);
    schema = std::move(level);
  }
  json::value root = json::object{{"type", "object"}, {"properties", json::object{}}};
  root.get_object()["properties"].get_object()["deep"] = std::move(schema);
  for (auto dialect : {kOpenAi, kAnthropic}) {
    auto result = MakeStrictSchema(root, dialect);
    ASSERT_FALSE(result.has_value());
    EXPECT_TRUE(result.error().message.ends_with(": the schema is nested more than 64 levels deep"))
        << result.error().message;
  }
  EXPECT_EQ(MapBackStrictAnswer(json::parse(R"({"deep":[[1]]})"), root), json::parse(R"({"deep":[[1]]})"));
  // boost.json destroys values recursively: take the nest apart from the inside.
  json::value* inner = &root.get_object()["properties"].get_object()["deep"];
  std::vector<json::value> parts;
  while (inner->is_object() && inner->get_object().contains("items")) {
    parts.push_back(std::move(inner->get_object()["items"]));
    inner = &parts.back();
  }
  while (!parts.empty()) parts.pop_back();
}

}  // namespace
}  // namespace skillrunner::generation
