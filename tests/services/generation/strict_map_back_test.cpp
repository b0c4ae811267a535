#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <random>

#include "services/generation/strict_schema.h"
#include "services/validation/compiled_schema.h"

namespace skillrunner::generation {
namespace {

namespace json = boost::json;

json::value Map(std::string_view answer, std::string_view schema) {
  return MapBackStrictAnswer(json::parse(answer), json::parse(schema));
}

TEST(StrictMapBackTest, NullOfAnOptionalNonNullablePropertyBecomesAbsent) {
  std::string_view schema = R"({"type":"object","properties":{"name":{"type":"string"},
      "phone":{"type":"string"}},"required":["name"]})";
  EXPECT_EQ(Map(R"({"name":"Ada","phone":null})", schema), json::parse(R"({"name":"Ada"})"));
}

TEST(StrictMapBackTest, NullIsKeptWhereTheOriginalAllowsOrRequiresIt) {
  EXPECT_EQ(Map(R"({"name":"Ada","phone":null})", R"({"type":"object","properties":{"name":{"type":"string"},
      "phone":{"type":["string","null"]}},"required":["name"]})"),
            json::parse(R"({"name":"Ada","phone":null})"));
  EXPECT_EQ(Map(R"({"phone":null})", R"({"properties":{"phone":{"anyOf":[{"type":"string"},{"type":"null"}]}}})"),
            json::parse(R"({"phone":null})"));
  EXPECT_EQ(Map(R"({"phone":null})", R"({"properties":{"phone":{"enum":["a",null]}}})"),
            json::parse(R"({"phone":null})"));
  // Required and not nullable: left for validation to report.
  EXPECT_EQ(Map(R"({"phone":null})", R"({"properties":{"phone":{"type":"string"}},"required":["phone"]})"),
            json::parse(R"({"phone":null})"));
  // Undeclared keys are not the strict mode's doing.
  EXPECT_EQ(Map(R"({"x":null})", R"({"properties":{"phone":{"type":"string"}}})"), json::parse(R"({"x":null})"));
}

TEST(StrictMapBackTest, WalksNestedObjectsArraysAndRefs) {
  std::string_view schema = R"({"type":"object","definitions":{"Item":{"type":"object",
      "properties":{"sku":{"type":"string"},"note":{"type":"string"}},"required":["sku"]}},
      "properties":{"address":{"type":"object","properties":{"zip":{"type":"string"}}},
                    "items":{"type":"array","items":{"$ref":"#/definitions/Item"}},
                    "counts":{"type":"object","additionalProperties":{"type":"object",
                              "properties":{"n":{"type":"integer"}}}}}})";
  EXPECT_EQ(Map(R"({"address":{"zip":null},"items":[{"sku":"a","note":null},{"sku":"b","note":"x"}],
                    "counts":{"k":{"n":null}}})",
                schema),
            json::parse(R"({"address":{},"items":[{"sku":"a"},{"sku":"b","note":"x"}],"counts":{"k":{}}})"));
}

TEST(StrictMapBackTest, PicksTheAnyOfBranchTheValueFits) {
  std::string_view schema = R"({"type":"object","properties":{"v":{"anyOf":[
      {"type":"string"},
      {"type":"object","properties":{"a":{"type":"integer"}}},
      {"type":"object","properties":{"b":{"type":"integer"},"c":{"type":"integer"}}}]}}})";
  EXPECT_EQ(Map(R"({"v":{"b":1,"c":null}})", schema), json::parse(R"({"v":{"b":1}})"));
  EXPECT_EQ(Map(R"({"v":{"a":null}})", schema), json::parse(R"({"v":{}})"));
  EXPECT_EQ(Map(R"({"v":"text"})", schema), json::parse(R"({"v":"text"})"));
}

TEST(StrictMapBackTest, AllOfBranchesAreAllConsulted) {
  EXPECT_EQ(Map(R"({"a":null,"b":null})", R"({"allOf":[{"properties":{"a":{"type":"string"}}},
      {"properties":{"b":{"type":"string"}},"required":["b"]}]})"),
            json::parse(R"({"b":null})"));
}

// Original schema and an answer shaped by its OpenAI strict copy (every key
// present, optional ones null).
struct RoundTrip {
  std::string_view schema;
  std::string_view strict_answer;
};

const RoundTrip kRoundTrips[] = {
    {R"({"type":"object","properties":{"name":{"type":"string"},"phone":{"type":"string"}},"required":["name"]})",
     R"({"name":"Ada","phone":null})"},
    {R"({"type":"object","properties":{"tags":{"type":"array","items":{"enum":["a","b"]}}}})", R"({"tags":null})"},
    {R"({"type":"object","properties":{"address":{"type":"object","properties":{"street":{"type":"string"},
        "zip":{"type":"string"}},"required":["street"]}}})",
     R"({"address":{"street":"Main","zip":null}})"},
    {R"({"type":"object","properties":{"address":{"type":"object","properties":{"zip":{"type":"string"}}}}})",
     R"({"address":null})"},
    {R"({"type":"object","properties":{"kind":{"const":"x"},"size":{"type":"string","enum":["S","M"]}}})",
     R"({"kind":null,"size":null})"},
    {R"({"type":"object","definitions":{"P":{"type":"object","properties":{"x":{"type":"number"},
        "y":{"type":"number"}},"required":["x"]}},"properties":{"pts":{"type":"array","items":{"$ref":"#/definitions/P"}}},
        "required":["pts"]})",
     R"({"pts":[{"x":1,"y":null},{"x":2,"y":3}]})"},
    {R"({"type":"object","properties":{"v":{"oneOf":[{"type":"string"},{"type":"object",
        "properties":{"n":{"type":"integer"}}}]}},"required":["v"]})",
     R"({"v":{"n":null}})"},
    {R"({"type":"object","properties":{"note":{"type":["string","null"]}},"required":[]})", R"({"note":null})"},
    {R"({"allOf":[{"type":"object","properties":{"id":{"type":"integer"}},"required":["id"]},
        {"properties":{"label":{"type":"string","maxLength":3}}}]})",
     R"({"id":7,"label":null})"},
    {R"({"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#"}},"name":{"type":"string"}},
        "required":["name"]})",
     R"({"name":"a","kids":[{"name":"b","kids":null}]})"},
    {R"({"type":"object","properties":{"when":{"type":"string","format":"date"},"n":{"type":"integer",
        "minimum":0}}})",
     R"({"when":"2024-01-02","n":null})"},
    {R"({"type":"object","$defs":{"Tag":{"type":"string"}},"properties":{"tag":{"$ref":"#/$defs/Tag"},
        "meta":{"type":"object","properties":{"a":{"$ref":"#/$defs/Tag"},"b":{"type":"boolean"}},"required":["b"]}},
        "required":["meta"]})",
     R"({"tag":null,"meta":{"a":null,"b":true}})"},
};

TEST(StrictMapBackTest, MappedBackStrictAnswersValidateAgainstTheOriginal) {
  for (const auto& trip : kRoundTrips) {
    SCOPED_TRACE(trip.schema);
    json::value original = json::parse(trip.schema);
    json::value answer = json::parse(trip.strict_answer);
    auto strict = MakeStrictSchema(original, StrictDialect::kOpenAi);
    ASSERT_TRUE(strict.has_value()) << strict.error().message;
    auto wire = validation::CompiledSchema::Compile(strict->wire);
    ASSERT_TRUE(wire.has_value()) << wire.error().message;
    EXPECT_TRUE((*wire)->Validate(answer).empty()) << "not strict-shaped: " << json::serialize(strict->wire);
    auto compiled = validation::CompiledSchema::Compile(original);
    ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
    json::value mapped = MapBackStrictAnswer(answer, original);
    auto errors = (*compiled)->Validate(mapped);
    EXPECT_TRUE(errors.empty()) << json::serialize(mapped) << ": " << errors.front().path << " "
                                << errors.front().message;
  }
}

// Random JSON, biased towards schema keywords, must never crash either
// function; whatever the transform accepts must compile.
class RandomJson {
 public:
  explicit RandomJson(unsigned seed) : rng_(seed) {}
  json::value Value(int depth) {
    static const char* kKeys[] = {"type",
                                  "properties",
                                  "required",
                                  "items",
                                  "enum",
                                  "const",
                                  "anyOf",
                                  "oneOf",
                                  "allOf",
                                  "$ref",
                                  "additionalProperties",
                                  "definitions",
                                  "$defs",
                                  "format",
                                  "minimum",
                                  "maxLength",
                                  "description",
                                  "not",
                                  "pattern",
                                  "minItems",
                                  "x"};
    static const char* kStrings[] = {
        "object", "string", "array", "null", "integer",  "#", "#/definitions/a", "#/$defs/a", "#/properties/a",
        "a",      "b",      "uri",   "date", "http://x", ""};
    int pick = depth > 5 ? Pick(5) : Pick(8);
    switch (pick) {
      case 0:
        return nullptr;
      case 1:
        return Pick(2) == 0;
      case 2:
        return Pick(7) - 2;
      case 3:
        return kStrings[Pick(std::size(kStrings))];
      case 4:
        return 1.5;
      case 5:
      case 6: {
        json::object o;
        for (int i = Pick(5); i > 0; --i) o[kKeys[Pick(std::size(kKeys))]] = Value(depth + 1);
        if (Pick(3) == 0) o["a"] = Value(depth + 1);
        return o;
      }
      default: {
        json::array a;
        for (int i = Pick(4); i > 0; --i) a.push_back(Value(depth + 1));
        return a;
      }
    }
  }

 private:
  int Pick(std::size_t n) { return static_cast<int>(rng_() % n); }
  std::mt19937 rng_;
};

// Random schema-shaped schemas: mostly accepted, so the accepted paths are
// exercised too.
class RandomSchema {
 public:
  explicit RandomSchema(unsigned seed) : rng_(seed) {}
  json::value Root() {
    json::value root = Object(0);
    root.get_object()["definitions"] = json::object{{"D", Leaf()}, {"E", Object(3)}};
    return root;
  }

 private:
  json::value Any(int depth) {
    switch (depth > 3 ? 0 : Pick(6)) {
      case 0:
        return Leaf();
      case 1:
        return Object(depth + 1);
      case 2:
        return json::object{{"type", "array"}, {"items", Any(depth + 1)}, {"minItems", Pick(3)}};
      case 3:
        return json::object{{"anyOf", json::array{Leaf(), Any(depth + 1)}}};
      case 4:
        return json::object{{"$ref", Pick(2) ? "#/definitions/D" : "#/definitions/E"}};
      default:
        return json::object{{"oneOf", json::array{json::object{{"type", "string"}}, json::object{{"type", "integer"}}}},
                            {"description", "d"}};
    }
  }
  json::value Leaf() {
    switch (Pick(5)) {
      case 0:
        return json::object{{"type", "string"}, {"maxLength", 20}, {"format", Pick(2) ? "uri" : "date"}};
      case 1:
        return json::object{{"type", "integer"}, {"minimum", 0}, {"maximum", 9}};
      case 2:
        return json::object{{"enum", json::array{"a", "b", nullptr}}};
      case 3:
        return json::object{{"type", json::array{"boolean", "null"}}};
      default:
        return json::object{{"const", 3}};
    }
  }
  json::value Object(int depth) {
    json::object properties;
    json::array required;
    for (int i = Pick(4) + 1; i > 0; --i) {
      std::string name = "p" + std::to_string(Pick(6));
      properties[name] = Any(depth);
      if (Pick(2) == 0) required.push_back(json::string(name));
    }
    return json::object{{"type", "object"}, {"properties", std::move(properties)}, {"required", std::move(required)}};
  }
  int Pick(std::size_t n) { return static_cast<int>(rng_() % n); }
  std::mt19937 rng_;
};

// What a strict-mode model could answer for `wire` (the vocabulary of
// RandomSchema only): every key present, nullable ones null half the time.
json::value StrictAnswer(const json::value& wire, const json::value& root, std::mt19937& rng, int depth = 0) {
  const json::object& s = wire.get_object();
  if (const auto* ref = s.if_contains("$ref")) {
    std::string_view name = std::string_view(ref->get_string()).substr(std::string_view("#/$defs/").size());
    return StrictAnswer(root.at("$defs").at(name), root, rng, depth + 1);
  }
  if (depth > 40) return nullptr;  // a required recursion has no finite instance
  bool deep = depth > 8;           // stop optional recursion (the Def E may refer to itself)
  if (const auto* branches = s.if_contains("anyOf")) {
    const auto& list = branches->get_array();
    return StrictAnswer(list[deep ? list.size() - 1 : rng() % list.size()], root, rng, depth + 1);
  }
  if (const auto* values = s.if_contains("enum")) return values->get_array()[rng() % values->get_array().size()];
  if (const auto* value = s.if_contains("const")) return *value;
  json::value type = s.at("type");
  if (type.is_array()) type = type.get_array()[deep ? type.get_array().size() - 1 : rng() % type.get_array().size()];
  std::string_view name = type.get_string();
  if (name == "object") {
    json::object out;
    for (const auto& [key, schema] : s.at("properties").get_object()) {
      out[key] = StrictAnswer(schema, root, rng, depth + 1);
    }
    return out;
  }
  if (name == "array") {
    json::array items;
    for (int i = deep ? 0 : 2; i > 0; --i) items.push_back(StrictAnswer(s.at("items"), root, rng, depth + 1));
    return items;
  }
  if (name == "string") return s.contains("format") ? "2024-01-02" : "https://a.example";
  if (name == "integer") return 3;
  if (name == "boolean") return true;
  return nullptr;
}

TEST(StrictMapBackTest, RandomSchemasRoundTrip) {
  RandomSchema random(99);
  std::mt19937 rng(5);
  int accepted = 0;
  int answered = 0;
  for (int i = 0; i < 500; ++i) {
    json::value schema = random.Root();
    auto original = validation::CompiledSchema::Compile(schema);
    ASSERT_TRUE(original.has_value()) << original.error().message;
    for (auto dialect : {StrictDialect::kOpenAi, StrictDialect::kAnthropic}) {
      auto strict = MakeStrictSchema(schema, dialect);
      if (!strict) continue;
      ++accepted;
      auto wire = validation::CompiledSchema::Compile(strict->wire);
      ASSERT_TRUE(wire.has_value()) << json::serialize(strict->wire);
      if (dialect == StrictDialect::kAnthropic) continue;
      json::value answer = StrictAnswer(strict->wire, strict->wire, rng);
      if (!(*wire)->Validate(answer).empty()) continue;  // see StrictAnswer
      ++answered;
      json::value mapped = MapBackStrictAnswer(answer, schema);
      auto errors = (*original)->Validate(mapped);
      EXPECT_TRUE(errors.empty()) << json::serialize(schema) << "\n"
                                  << json::serialize(mapped) << "\n"
                                  << errors.front().path << ": " << errors.front().message;
    }
  }
  EXPECT_GT(accepted, 600);
  EXPECT_GT(answered, 300);
}

TEST(StrictMapBackTest, RandomJsonNeverCrashesAndAcceptedWireCompiles) {
  RandomJson random(12345);
  int accepted = 0;
  for (int i = 0; i < 3000; ++i) {
    json::value schema = random.Value(0);
    if (i % 2 == 0 && schema.is_object()) schema.get_object()["type"] = "object";
    for (auto dialect : {StrictDialect::kOpenAi, StrictDialect::kAnthropic}) {
      auto strict = MakeStrictSchema(schema, dialect);
      if (strict) {
        ++accepted;
        EXPECT_TRUE(validation::CompiledSchema::Compile(strict->wire).has_value()) << json::serialize(schema);
      } else {
        EXPECT_FALSE(strict.error().message.empty());
      }
    }
    (void)MapBackStrictAnswer(random.Value(0), schema);
  }
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace skillrunner::generation
