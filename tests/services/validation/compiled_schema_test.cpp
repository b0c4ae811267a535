#include "services/validation/compiled_schema.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/support/openai_spec.h"

namespace skillrunner::validation {
namespace {

std::shared_ptr<const CompiledSchema> MustCompile(std::string_view schema) {
  auto compiled = CompiledSchema::Compile(boost::json::parse(schema));
  EXPECT_TRUE(compiled.has_value()) << (compiled ? "" : compiled.error().message);
  return compiled ? *compiled : nullptr;
}

std::vector<FieldError> Check(std::string_view schema, std::string_view instance) {
  auto compiled = MustCompile(schema);
  if (!compiled) return {{"<compile>", "failed"}};
  return compiled->Validate(boost::json::parse(instance));
}

std::vector<FieldError> One(std::string path, std::string message) {
  return {FieldError{std::move(path), std::move(message)}};
}

TEST(CompiledSchemaTest, ValidInstanceHasNoErrors) {
  EXPECT_TRUE(Check(R"({"type":"object","properties":{"a":{"type":"string"}}})", R"({"a":"x"})").empty());
}

TEST(CompiledSchemaTest, TypeMessageNamesExpectedAndFound) {
  EXPECT_EQ(Check(R"({"properties":{"priority":{"type":"integer"}}})", R"({"priority":"high"})"),
            One("/priority", "expected integer, found string \"high\""));
  EXPECT_EQ(Check(R"({"type":["string","null"]})", "3"), One("", "expected string or null, found number 3"));
  EXPECT_EQ(Check(R"({"type":"string"})", "{}"), One("", "expected string, found object"));
  EXPECT_EQ(Check(R"({"type":"string"})", "[1]"), One("", "expected string, found array"));
  EXPECT_EQ(Check(R"({"type":"string"})", "true"), One("", "expected string, found boolean true"));
  EXPECT_EQ(Check(R"({"type":"string"})", "null"), One("", "expected string, found null"));
  EXPECT_EQ(Check(R"({"type":"integer"})", "1.5"), One("", "expected integer, found number 1.5"));
}

TEST(CompiledSchemaTest, LongFoundStringsAreTruncated) {
  EXPECT_EQ(Check(R"({"type":"integer"})", R"("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa")"),
            One("", "expected integer, found string \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…\""));
}

TEST(CompiledSchemaTest, RequiredPointsAtTheMissingProperty) {
  EXPECT_EQ(Check(R"({"required":["name","email"]})", R"({"name":"x"})"),
            One("/email", "required property is missing"));
}

TEST(CompiledSchemaTest, AdditionalPropertiesPointsAtEachOffender) {
  EXPECT_EQ(Check(R"({"properties":{"model":{}},"additionalProperties":false})", R"({"modle":1})"),
            One("/modle", "unexpected property \"modle\""));
  auto errors = Check(R"({"properties":{"a":{}},"patternProperties":{"^x":{}},"additionalProperties":false})",
                      R"({"a":1,"xa":2,"b":3,"c":4})");
  EXPECT_EQ(errors,
            (std::vector<FieldError>{{"/b", "unexpected property \"b\""}, {"/c", "unexpected property \"c\""}}));
}

TEST(CompiledSchemaTest, EnumAndConstMessages) {
  EXPECT_EQ(Check(R"({"enum":["low","medium","high"]})", R"("urgent")"),
            One("", "expected one of [\"low\",\"medium\",\"high\"], found \"urgent\""));
  EXPECT_EQ(Check(R"({"const":"x"})", R"("y")"), One("", "expected \"x\", found \"y\""));
}

TEST(CompiledSchemaTest, NumericBoundMessages) {
  EXPECT_EQ(Check(R"({"maximum":5})", "7"), One("", "expected at most 5, found 7"));
  EXPECT_EQ(Check(R"({"minimum":0})", "-1"), One("", "expected at least 0, found -1"));
  EXPECT_EQ(Check(R"({"exclusiveMinimum":0})", "0"), One("", "expected more than 0, found 0"));
  EXPECT_EQ(Check(R"({"exclusiveMaximum":10})", "10"), One("", "expected less than 10, found 10"));
  EXPECT_EQ(
      Check(R"({"$schema":"http://json-schema.org/draft-04/schema#","maximum":10,"exclusiveMaximum":true})", "10"),
      One("", "expected less than 10, found 10"));
  EXPECT_EQ(Check(R"({"multipleOf":2})", "4.5"), One("", "expected a multiple of 2, found 4.5"));
}

TEST(CompiledSchemaTest, SizeMessages) {
  EXPECT_EQ(Check(R"({"minLength":3})", R"("a")"), One("", "expected at least 3 characters, found 1"));
  EXPECT_EQ(Check(R"({"maxLength":2})", R"("héé")"), One("", "expected at most 2 characters, found 3"));
  EXPECT_EQ(Check(R"({"minLength":1})", R"("")"), One("", "expected at least 1 character, found 0"));
  EXPECT_EQ(Check(R"({"minItems":1})", "[]"), One("", "expected at least 1 item, found 0"));
  EXPECT_EQ(Check(R"({"maxItems":1})", "[1,2]"), One("", "expected at most 1 item, found 2"));
  EXPECT_EQ(Check(R"({"minProperties":1})", "{}"), One("", "expected at least 1 property, found 0"));
  EXPECT_EQ(Check(R"({"maxProperties":0})", R"({"a":1})"), One("", "expected at most 0 properties, found 1"));
}

TEST(CompiledSchemaTest, PatternAndFormatMessages) {
  EXPECT_EQ(Check(R"({"pattern":"^[a-z]+$"})", R"("ABC")"),
            One("", "expected a string matching \"^[a-z]+$\", found \"ABC\""));
  EXPECT_EQ(Check(R"({"format":"email"})", R"("bob@")"), One("", "expected format email, found \"bob@\""));
  EXPECT_TRUE(Check(R"({"format":"email"})", "12").empty());
}

TEST(CompiledSchemaTest, OtherKeywordMessages) {
  EXPECT_EQ(Check(R"({"uniqueItems":true})", "[1,2,1]"),
            One("", "expected unique items, found item 2 equal to item 0"));
  EXPECT_EQ(Check(R"({"dependencies":{"a":["b"]}})", R"({"a":1})"),
            One("/b", "required property is missing (required when \"a\" is present)"));
  EXPECT_EQ(Check(R"({"contains":{"type":"string"}})", "[1]"),
            One("", "expected an array with at least one item matching \"contains\", found none"));
  EXPECT_EQ(Check(R"({"not":{"type":"string"}})", R"("x")"),
            One("", "expected a value not matching the \"not\" schema, found \"x\""));
  EXPECT_EQ(Check(R"({"if":{"properties":{"a":{"const":1}}},"then":{"required":["b"]}})", R"({"a":1})"),
            One("/b", "required property is missing"));
  EXPECT_EQ(Check(R"({"properties":{"a":false}})", R"({"a":1})"), One("/a", "unexpected property \"a\""));
}

// Found by the skill_yaml fuzzer: valijson reported every equal pair, so
// n equal items made n(n-1)/2 errors (1,600 nulls: 176 MB of diagnostics).
TEST(CompiledSchemaTest, UniqueItemsReportsTheFirstRepeatOnlyAndComparesAsJsonSchemaDoes) {
  std::string many = "[";
  for (int i = 0; i < 5000; ++i) many += i == 0 ? "null" : ",null";
  many += "]";
  EXPECT_EQ(Check(R"({"uniqueItems":true})", many), One("", "expected unique items, found item 1 equal to item 0"));
  EXPECT_EQ(Check(R"({"uniqueItems":true})", R"([{"a":1,"b":[1.0]},{"b":[1],"a":1.0}])"),
            One("", "expected unique items, found item 1 equal to item 0"));
  EXPECT_EQ(Check(R"({"items":{"uniqueItems":true}})", R"([[1,2],["x","y",1.5,"y"]])"),
            One("/1", "expected unique items, found item 3 equal to item 1"));
  for (const char* unique : {R"([0,false,null,"0",[0],{"0":0}])", R"([1,1.5,"1",[1,[1]],[[1],1]])",
                             R"([{"a":1},{"a":1,"b":1}])", R"([9007199254740993,9007199254740992])"}) {
    EXPECT_TRUE(Check(R"({"uniqueItems":true})", unique).empty()) << unique;
  }
  EXPECT_TRUE(Check(R"({"uniqueItems":false})", "[1,1]").empty());
}

TEST(CompiledSchemaTest, AnyOfAndOneOfFailOnceAtTheirLocation) {
  EXPECT_EQ(
      Check(R"({"properties":{"a":{"anyOf":[{"type":"string","maxLength":1},{"type":"null"}]}}})", R"({"a":"long"})"),
      One("/a", "expected a value matching at least one anyOf branch, found string \"long\""));
  EXPECT_EQ(Check(R"({"oneOf":[{"minimum":5},{"maximum":0}]})", "1"),
            One("", "expected a value matching exactly one oneOf branch, found number 1 matching none"));
  // When the branches' types already rule the value out, say so.
  EXPECT_EQ(Check(R"({"properties":{"a":{"anyOf":[{"type":"integer"},{"type":["string","null"]}]}}})", R"({"a":1.5})"),
            One("/a", "expected integer, string or null, found number 1.5"));
  EXPECT_EQ(Check(R"({"oneOf":[{"type":"number"},{"minimum":0}]})", "1"),
            One("", "expected a value matching exactly one oneOf branch, found number 1 matching more than one"));
  EXPECT_TRUE(Check(R"({"anyOf":[{"type":"string"},{"type":"null"}]})", "null").empty());
}

TEST(CompiledSchemaTest, WrappersAreDroppedAndPathsAreNested) {
  auto errors = Check(R"({"properties":{"lines":{"items":{"properties":{"amount":{"type":"number"}}}}}})",
                      R"({"lines":[{"amount":1},{"amount":"x"}]})");
  EXPECT_EQ(errors, One("/lines/1/amount", "expected number, found string \"x\""));
}

TEST(CompiledSchemaTest, PointerTokensAreEscaped) {
  EXPECT_EQ(Check(R"({"properties":{"a/b":{"properties":{"c~d":{"type":"string"}}}}})", R"({"a/b":{"c~d":1}})"),
            One("/a~1b/c~0d", "expected string, found number 1"));
}

TEST(CompiledSchemaTest, IntegralDoubleIsAnInteger) {
  EXPECT_TRUE(Check(R"({"type":"integer"})", "30.0").empty());
  EXPECT_TRUE(Check(R"({"type":"integer","maximum":30})", "30.0").empty());
}

TEST(CompiledSchemaTest, BigUnsignedNumbersWork) {
  EXPECT_TRUE(Check(R"({"type":"integer"})", "18446744073709551615").empty());
  EXPECT_TRUE(Check(R"({"type":"integer","maximum":18446744073709551615})", "5").empty());
  EXPECT_EQ(Check(R"({"maximum":9223372036854775807})", "18446744073709551615"),
            One("", "expected at most 9223372036854775807, found 18446744073709551615"));
}

TEST(CompiledSchemaTest, DraftsAreChosenBySchemaKeyword) {
  for (const char* uri : {"http://json-schema.org/draft-07/schema#", "https://json-schema.org/draft-07/schema",
                          "http://json-schema.org/draft-06/schema#", "http://json-schema.org/draft-04/schema"}) {
    boost::json::value schema = {{"$schema", uri}};
    EXPECT_TRUE(CompiledSchema::Compile(schema).has_value()) << uri;
  }
  auto refused =
      CompiledSchema::Compile(boost::json::parse(R"({"$schema":"https://json-schema.org/draft/2020-12/schema"})"));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, ErrorCode::kConfigInvalid);
  EXPECT_NE(refused.error().message.find("https://json-schema.org/draft/2020-12/schema"), std::string::npos)
      << refused.error().message;
}

TEST(CompiledSchemaTest, DefsAreReadLikeDefinitions) {
  const char* schema = R"({"$defs":{"x":{"type":"string"}},"properties":{"a":{"$ref":"#/$defs/x"}}})";
  EXPECT_TRUE(Check(schema, R"({"a":"s"})").empty());
  EXPECT_EQ(Check(schema, R"({"a":1})"), One("/a", "expected string, found number 1"));
}

TEST(CompiledSchemaTest, MalformedSchemasAreCompileErrors) {
  for (const char* bad :
       {R"({"type":5})", R"({"minimum":"x"})", R"({"properties":[]})", R"({"pattern":"("})", R"({"$ref":"#/nowhere"})",
        R"({"$ref":"#"})", R"({"allOf":[{"$ref":"#"}]})",
        R"({"definitions":{"a":{"$ref":"#/definitions/b"},"b":{"$ref":"#/definitions/a"}},"$ref":"#/definitions/a"})",
        R"({"minLength":-1})", R"({"required":"a"})", "5"}) {
    auto compiled = CompiledSchema::Compile(boost::json::parse(bad));
    EXPECT_FALSE(compiled.has_value()) << bad;
    if (!compiled) {
      EXPECT_FALSE(compiled.error().message.empty());
    }
  }
}

// The skill_yaml fuzzer's stack overflow: valijson resolves the root's $ref
// chain in this document, so a relative document there meant the root again.
TEST(CompiledSchemaTest, ARelativeRefInTheRootsChainIsAnErrorNotARecursion) {
  auto root = CompiledSchema::Compile(boost::json::parse(R"({"$ref":"object"})"));
  ASSERT_FALSE(root.has_value());
  EXPECT_EQ(root.error().message,
            "unresolvable $ref \"object\" at the root: a relative URI names no document here "
            "(a place in this schema is \"#/...\")");
  auto chained = CompiledSchema::Compile(
      boost::json::parse(R"({"definitions":{"a":{"$ref":"other.json#/x"}},"$ref":"#/definitions/a"})"));
  ASSERT_FALSE(chained.has_value());
  EXPECT_EQ(chained.error().message,
            "unresolvable $ref \"other.json#/x\" at /definitions/a: a relative URI names no "
            "document here (a place in this schema is \"#/...\")");
  // Below the root a relative document is fetched like any other (here: no fetcher).
  auto nested = CompiledSchema::Compile(boost::json::parse(R"({"properties":{"a":{"$ref":"object"}}})"));
  ASSERT_FALSE(nested.has_value());
  EXPECT_EQ(nested.error().message, "invalid schema: remote $ref \"object\" cannot be resolved (no document fetcher)");
}

// The schema_strict fuzzer's UBSan report: GCC 12's std::regex reads a repetition count or a
// back-reference into a long with no overflow check. More than 9 digits there is refused
// before std::regex sees it, at the pattern's place.
TEST(CompiledSchemaTest, APatternWithACountOrBackReferenceOfMoreThanNineDigitsIsRefused) {
  auto count =
      CompiledSchema::Compile(boost::json::parse(R"({"properties":{"a":{"pattern":"x{1,99999999999999999999}"}}})"));
  ASSERT_FALSE(count.has_value());
  EXPECT_EQ(count.error().message,
            "invalid schema at /properties/a: \"pattern\" is an invalid regular expression "
            "\"x{1,99999999999999999999}\" (a repetition count or back-reference of more than 9 digits)");
  auto backref =
      CompiledSchema::Compile(boost::json::parse(R"({"patternProperties":{"(a)\\4444444444444444444444":{}}})"));
  ASSERT_FALSE(backref.has_value());
  EXPECT_EQ(backref.error().message,
            "invalid schema at the root: \"patternProperties\" has an invalid regular expression "
            "\"(a)\\4444444444444444444444\" (a repetition count or back-reference of more than 9 digits)");
  // Long digit runs elsewhere are literals.
  MustCompile(R"({"pattern":"^4111111111111111$"})");
  MustCompile(R"({"pattern":"^\\\\12345678901$"})");
}

TEST(CompiledSchemaTest, RecursionWithProgressIsFine) {
  const char* schema = R"({"properties":{"child":{"$ref":"#"},"n":{"type":"integer"}}})";
  EXPECT_EQ(Check(schema, R"({"child":{"child":{"n":"x"}}})"),
            One("/child/child/n", "expected integer, found string \"x\""));
}

TEST(CompiledSchemaTest, UnknownKeywordsAreIgnored) {
  EXPECT_TRUE(Check(R"({"nullable":true,"discriminator":{"propertyName":"x"},"x-oaiMeta":{}})", "1").empty());
}

TEST(CompiledSchemaTest, RemoteRefNeedsAFetcher) {
  boost::json::value schema = boost::json::parse(R"({"$ref":"http://example.com/s.json#/definitions/a"})");
  auto refused = CompiledSchema::Compile(schema);
  ASSERT_FALSE(refused.has_value());
  EXPECT_NE(refused.error().message.find("http://example.com/s.json"), std::string::npos) << refused.error().message;
  CompileOptions options;
  options.fetch = [](std::string_view uri) -> std::optional<boost::json::value> {
    if (uri != "http://example.com/s.json") return std::nullopt;
    return boost::json::parse(R"({"definitions":{"a":{"type":"string","format":"uuid"}}})");
  };
  auto compiled = CompiledSchema::Compile(schema, options);
  ASSERT_TRUE(compiled.has_value()) << compiled.error().message;
  EXPECT_TRUE((*compiled)->Validate(boost::json::parse(R"("123e4567-e89b-12d3-a456-426614174000")")).empty());
  EXPECT_EQ((*compiled)->Validate(boost::json::parse("1")), One("", "expected string, found number 1"));
}

TEST(CompiledSchemaTest, DeepInstancesAreRejectedAtTheRoot) {
  std::string deep(10000, '[');
  deep += std::string(10000, ']');
  auto compiled = MustCompile(R"({"items":{"$ref":"#"}})");
  auto errors = compiled->Validate(boost::json::parse(deep, {}, {.max_depth = 20000}));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "");
  std::string ok(500, '[');
  ok += std::string(500, ']');
  EXPECT_TRUE(compiled->Validate(boost::json::parse(ok, {}, {.max_depth = 1000})).empty());
}

TEST(CompiledSchemaTest, ConcurrentValidationGivesTheSameAnswers) {
  auto compiled = MustCompile(R"({"type":"object","required":["a"],"properties":{"a":{"type":"string","pattern":"^x"},
      "b":{"enum":[1,2]}},"additionalProperties":false})");
  const boost::json::value good = boost::json::parse(R"({"a":"xy","b":1})");
  const boost::json::value bad = boost::json::parse(R"({"a":"y","b":3,"c":0})");
  const auto expected_bad = compiled->Validate(bad);
  ASSERT_EQ(expected_bad.size(), 3u);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        if (!compiled->Validate(good).empty() || compiled->Validate(bad) != expected_bad) ++mismatches;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

std::optional<boost::json::value> ReadJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return boost::json::parse(text.str());
}

TEST(CompiledSchemaTest, OpenAiChatSchemasCompile) {
  const std::filesystem::path spec = test_support::OpenAiSpecDir();
  auto request = ReadJson(spec / "chat_request.schema.json");
  auto response = ReadJson(spec / "chat_response.schema.json");
  ASSERT_TRUE(request && response) << spec;
  // OpenAI's full schemas (SKILLRUNNER_OPENAI_SPEC_DIR) declare draft 2020-12,
  // which Compile refuses, but use only keywords draft 7 reads the same way.
  for (auto* document : {&*request, &*response}) document->as_object().erase("$schema");
  auto response_schema = CompiledSchema::Compile(*response);
  EXPECT_TRUE(response_schema.has_value()) << response_schema.error().message;
  auto request_schema = CompiledSchema::Compile(*request);
  ASSERT_TRUE(request_schema.has_value()) << request_schema.error().message;
  const char* minimal = R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi"}]})";
  EXPECT_EQ((*request_schema)->Validate(boost::json::parse(minimal)), std::vector<FieldError>{});
  auto hot = boost::json::parse(minimal);
  hot.as_object()["temperature"] = "hot";
  auto errors = (*request_schema)->Validate(hot);
  ASSERT_FALSE(errors.empty());
  for (const auto& error : errors) EXPECT_EQ(error.path, "/temperature") << error.message;
  auto seeded = boost::json::parse(minimal);
  seeded.as_object()["seed"] = 42;
  EXPECT_EQ((*request_schema)->Validate(seeded), std::vector<FieldError>{});
}

}  // namespace
}  // namespace skillrunner::validation
