#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "runner/tree/yaml_json.h"
#include "services/providers/simulated/schema_instance.h"
#include "services/validation/compiled_schema.h"

namespace skillrunner::providers::simulation {
namespace {

namespace json = boost::json;

constexpr int kSeeds = 200;

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

json::value SkillOutputSchema(const std::string& skill) {
  auto document = ParseYaml(ReadFile(std::filesystem::path(SKILLRUNNER_SOURCE_DIR) / "skills" / skill / "skill.yaml"));
  EXPECT_TRUE(document.has_value());
  return document ? document->value.at("output_schema") : json::value();
}

// Every seed's instance validates against the schema.
void ExpectValidForManySeeds(const json::value& schema, const std::string& label) {
  auto compiled = validation::CompiledSchema::Compile(schema);
  ASSERT_TRUE(compiled.has_value()) << label << ": " << compiled.error().message;
  for (int seed = 0; seed < kSeeds; ++seed) {
    Rng rng(static_cast<std::uint64_t>(seed) * 7919 + 1);
    InstanceGenerator generator(schema, rng);
    json::value instance = generator.Generate();
    auto errors = (*compiled)->Validate(instance);
    ASSERT_TRUE(errors.empty()) << label << " seed " << seed << ": " << json::serialize(instance) << "\n  "
                                << errors.front().path << ": " << errors.front().message;
  }
}

const char* const kSchemas[] = {
    // numbers: bounds, exclusive bounds (draft 6+ and draft 4 style), multipleOf
    R"j({"type":"object","required":["a","b","c","d","e","f"],"additionalProperties":false,"properties":{
        "a":{"type":"integer","minimum":-5,"maximum":5},
        "b":{"type":"number","exclusiveMinimum":0,"exclusiveMaximum":1},
        "c":{"type":"integer","multipleOf":7,"minimum":10,"maximum":100},
        "d":{"type":"number","multipleOf":0.25,"minimum":1,"maximum":2},
        "e":{"type":"number","minimum":1000000},
        "f":{"type":"integer","exclusiveMaximum":3}}})j",
    // strings: lengths, formats
    R"j({"type":"object","required":["s","email","uri","uuid","date","time","dt","ip4","ip6","host","short"],
        "properties":{
        "s":{"type":"string","minLength":30,"maxLength":40},
        "email":{"type":"string","format":"email"},
        "uri":{"type":"string","format":"uri"},
        "uuid":{"type":"string","format":"uuid"},
        "date":{"type":"string","format":"date"},
        "time":{"type":"string","format":"time"},
        "dt":{"type":"string","format":"date-time"},
        "ip4":{"type":"string","format":"ipv4"},
        "ip6":{"type":"string","format":"ipv6"},
        "host":{"type":"string","format":"hostname"},
        "short":{"type":"string","maxLength":2,"minLength":1},
        "summary":{"type":"string","maxLength":10}}})j",
    // patterns
    R"j({"type":"object","required":["code","phone","sku","word","hex"],"properties":{
        "code":{"type":"string","pattern":"^[A-Z]{3}-\\d{4}$"},
        "phone":{"type":"string","pattern":"^[+0-9 ()-]{6,20}$"},
        "sku":{"type":"string","pattern":"^(ab|cd)+x?$","maxLength":9},
        "word":{"type":"string","pattern":"\\w+@\\w+\\.(com|org)"},
        "hex":{"type":"string","pattern":"^#[0-9a-fA-F]{6}$"}}})j",
    // type arrays, enum, const, null
    R"j({"type":"object","required":["n","e","c","nn","t"],"properties":{
        "n":{"type":["string","null"]},
        "e":{"enum":["red","green",null,3]},
        "c":{"const":{"fixed":[1,2]}},
        "nn":{"type":"null"},
        "t":{"type":["integer","boolean"]}}})j",
    // arrays: sizes, uniqueItems, tuples
    R"j({"type":"object","required":["tags","pair","few","u"],"properties":{
        "tags":{"type":"array","items":{"type":"string"},"minItems":2,"maxItems":5,"uniqueItems":true},
        "pair":{"type":"array","items":[{"type":"integer"},{"type":"string"}],"additionalItems":false,"minItems":2},
        "few":{"type":"array","maxItems":0},
        "u":{"type":"array","items":{"enum":["a","b","c"]},"uniqueItems":true,"minItems":3}}})j",
    // $ref to definitions and $defs, recursion
    R"j({"$ref":"#/definitions/node","definitions":{"node":{"type":"object","required":["value"],
        "additionalProperties":false,"properties":{"value":{"$ref":"#/$defs/v"},
        "children":{"type":"array","items":{"$ref":"#/definitions/node"}}}}},
        "$defs":{"v":{"type":"integer","minimum":1,"maximum":9}}})j",
    // anyOf / oneOf / allOf
    R"j({"type":"object","required":["any","one","all"],"properties":{
        "any":{"anyOf":[{"type":"null"},{"type":"string","minLength":3}]},
        "one":{"oneOf":[{"type":"integer","minimum":100},{"type":"boolean"}]},
        "all":{"allOf":[{"type":"object","required":["x"],"properties":{"x":{"type":"integer"}}},
                        {"required":["y"],"properties":{"y":{"type":"string","maxLength":4}}}]}}})j",
    // objects: minProperties, maxProperties, additionalProperties schema, dependencies
    R"j({"type":"object","minProperties":3,"maxProperties":4,"additionalProperties":{"type":"integer"},
        "properties":{"a":{"type":"string"}},"dependencies":{"a":["b"]}})j",
    // draft 4 boolean exclusive bounds
    R"j({"$schema":"http://json-schema.org/draft-04/schema#","type":"object","required":["p"],
        "properties":{"p":{"type":"number","minimum":0,"exclusiveMinimum":true,"maximum":1,"exclusiveMaximum":true}}})j",
    // deep optional nesting and an untyped schema
    R"j({"type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"object",
        "properties":{"c":{}}}}}},"required":["a"]})j",
};

TEST(SchemaInstanceTest, InstancesOfVariedSchemasValidateForManySeeds) {
  int index = 0;
  for (const char* text : kSchemas) ExpectValidForManySeeds(json::parse(text), "schema " + std::to_string(index++));
}

TEST(SchemaInstanceTest, InstancesOfShippedSchemasValidateForManySeeds) {
  std::filesystem::path root(SKILLRUNNER_SOURCE_DIR);
  ExpectValidForManySeeds(json::parse(ReadFile(root / "skills/extract_contact/schemas/contact.json")), "contact");
  ExpectValidForManySeeds(SkillOutputSchema("triage_ticket"), "triage_ticket");
  ExpectValidForManySeeds(SkillOutputSchema("word_stats"), "word_stats");
  ExpectValidForManySeeds(json::parse(ReadFile(root / "rubrics/verdict.schema.json")), "verdict");
}

TEST(SchemaInstanceTest, NullSchemaGivesEmptyObject) {
  Rng rng(1);
  json::value schema;
  InstanceGenerator generator(schema, rng);
  EXPECT_EQ(json::serialize(generator.Generate()), "{}");
}

// A schema asking for more than any model could write gets an instance that stops at
// 10,000 values (strings a value more per 4 characters) and fails its own minItems or
// minProperties, not a simulator that never answers (the schema_strict fuzz target's
// minItems of 6e110, arrays of arrays: past its 10 s limit).
TEST(SchemaInstanceTest, AnInstanceStopsAtTenThousandValues) {
  json::value arrays =
      json::parse(R"j({"type":"array","minItems":1000000000,"items":{"type":"array","items":{"type":"string"}}})j");
  Rng rng(7);
  json::value instance = InstanceGenerator(arrays, rng).Generate();
  ASSERT_TRUE(instance.is_array());
  std::size_t cost = 1 + instance.get_array().size();
  for (const auto& item : instance.get_array()) {
    for (const auto& text : item.get_array()) cost += 1 + text.get_string().size() / 4;
  }
  EXPECT_GE(cost, 10'000u);
  EXPECT_LE(cost, 10'000u + 20);  // the last string goes in whole
  auto compiled = validation::CompiledSchema::Compile(arrays);
  ASSERT_TRUE(compiled.has_value());
  auto errors = (*compiled)->Validate(instance);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "");
  EXPECT_EQ(errors[0].message,
            "expected at least 1000000000 items, found " + std::to_string(instance.get_array().size()));

  json::value object =
      json::parse(R"j({"type":"object","minProperties":1000000,"additionalProperties":{"type":"integer"}})j");
  instance = InstanceGenerator(object, rng).Generate();
  ASSERT_TRUE(instance.is_object());
  EXPECT_EQ(instance.get_object().size(), 9'999u);  // and the object itself
  EXPECT_TRUE(instance.get_object().contains("field_9999"));
}

TEST(SchemaInstanceTest, SameSeedSameInstanceDifferentSeedDifferentInstance) {
  json::value schema = SkillOutputSchema("triage_ticket");
  Rng a(42);
  Rng b(42);
  EXPECT_EQ(InstanceGenerator(schema, a).Generate(), InstanceGenerator(schema, b).Generate());
  std::set<std::string> seen;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Rng rng(seed);
    seen.insert(json::serialize(InstanceGenerator(schema, rng).Generate()));
  }
  EXPECT_GT(seen.size(), 10u);
}

TEST(SchemaInstanceTest, StringsArePlausibleForTheirPropertyNames) {
  json::value schema = json::parse(R"({"type":"object","required":["name","summary","email"],
      "properties":{"name":{"type":"string"},"summary":{"type":"string"},"email":{"type":"string"}}})");
  Rng rng(5);
  json::value instance = InstanceGenerator(schema, rng).Generate();
  std::string name(instance.at("name").as_string());
  EXPECT_NE(name.find(' '), std::string::npos) << name;  // "First Last"
  EXPECT_TRUE(std::string(instance.at("summary").as_string()).ends_with(".")) << instance;
  EXPECT_NE(std::string(instance.at("email").as_string()).find("@example.com"), std::string::npos);
}

TEST(SchemaInstanceTest, JudgeArrayHasOneItemPerEnumCriterionInOrder) {
  json::value schema = json::parse(R"({"type":"object","required":["pass","criteria_results"],"properties":{
      "pass":{"type":"boolean"},
      "criteria_results":{"type":"array","items":{"type":"object",
        "required":["criterion_id","reasoning","verdict","confidence"],"additionalProperties":false,
        "properties":{"criterion_id":{"enum":["faithful","complete","concise"]},
                      "reasoning":{"type":"string"},
                      "verdict":{"enum":["pass","fail","indeterminate"]},
                      "confidence":{"type":"integer","minimum":0,"maximum":100}}}}}})");
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Rng rng(seed);
    InstanceGenerator generator(schema, rng);
    json::value instance = generator.Generate();
    EXPECT_TRUE(generator.judged());
    const json::array& results = instance.at("criteria_results").as_array();
    ASSERT_EQ(results.size(), 3u);
    EXPECT_EQ(results[0].at("criterion_id"), "faithful");
    EXPECT_EQ(results[1].at("criterion_id"), "complete");
    EXPECT_EQ(results[2].at("criterion_id"), "concise");
    for (const auto& result : results) {
      EXPECT_EQ(result.at("verdict"), "pass");
      EXPECT_EQ(result.at("confidence"), 90);
      EXPECT_TRUE(std::string(result.at("reasoning").as_string()).ends_with("."));
    }
  }
}

TEST(SchemaInstanceTest, JudgeArrayUsesHintedCriteriaWhenTheSchemaHasNoEnum) {
  std::filesystem::path root(SKILLRUNNER_SOURCE_DIR);
  json::value schema = json::parse(ReadFile(root / "rubrics/verdict.schema.json"));
  Rng rng(9);
  InstanceGenerator generator(schema, rng, {"faithful", "complete"});
  json::value instance = generator.Generate();
  const json::array& results = instance.at("criteria_results").as_array();
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0].at("criterion_id"), "faithful");
  EXPECT_EQ(results[1].at("criterion_id"), "complete");
  EXPECT_FALSE(results[0].as_object().contains("agreement"));  // optional: left to the review service
}

}  // namespace
}  // namespace skillrunner::providers::simulation
