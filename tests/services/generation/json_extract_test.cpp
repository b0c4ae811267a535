#include "services/generation/json_extract.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <random>

namespace skillrunner::generation {
namespace {

namespace json = boost::json;

// The extracted value and its repair ("-" for none), or "error: <message>".
std::string Extract(std::string_view text) {
  auto result = ExtractJson(text);
  if (!result) return "error: " + result.error().message;
  return json::serialize(result->value) + " " + result->repair.value_or("-");
}

TEST(JsonExtractTest, WholeTextNeedsNoRepair) {
  EXPECT_EQ(Extract(R"({"a":1})"), R"({"a":1} -)");
  EXPECT_EQ(Extract(" \n\t{\"a\": [1, 2]}\r\n  "), R"({"a":[1,2]} -)");
  EXPECT_EQ(Extract("[]"), "[] -");
  EXPECT_EQ(Extract("\"just a string\""), "\"just a string\" -");
  EXPECT_EQ(Extract("42"), "42 -");
}

TEST(JsonExtractTest, FencedWithAndWithoutLanguageTag) {
  EXPECT_EQ(Extract("```json\n{\"a\":1}\n```"), R"({"a":1} fence)");
  EXPECT_EQ(Extract("```\n{\"a\":1}\n```"), R"({"a":1} fence)");
  EXPECT_EQ(Extract("Sure! Here it is:\n\n```JSON\n{\"a\": \"x\"}\n```\nLet me know."), R"({"a":"x"} fence)");
  EXPECT_EQ(Extract("```{\"a\":1}```"), R"({"a":1} fence)");
  // A missing closing fence still yields the value.
  EXPECT_EQ(Extract("```json\n{\"a\":1}\n"), R"({"a":1} fence)");
}

TEST(JsonExtractTest, FirstFenceThatParsesWins) {
  EXPECT_EQ(Extract("```python\nprint(1)\n```\nand\n```json\n[1,2]\n```\n```json\n[3]\n```"), "[1,2] fence");
}

TEST(JsonExtractTest, OneValueInProse) {
  EXPECT_EQ(Extract(R"(Here is the result: {"a":1} Hope that helps.)"), R"({"a":1} prose)");
  EXPECT_EQ(Extract(R"(Here: {"a":"}"} done)"), R"({"a":"}"} prose)");
  EXPECT_EQ(Extract(R"(Use {curly} braces; answer: {"b":[1,{"c":"]"}]})"), R"({"b":[1,{"c":"]"}]} prose)");
  EXPECT_EQ(Extract("The list:\n[\"x\", \"y\"]\n"), R"(["x","y"] prose)");
}

TEST(JsonExtractTest, NumberListsLikeFootnotesDoNotCountAsASecondValue) {
  EXPECT_EQ(Extract(R"(As shown in [1], the answer is {"a":1}.)"), R"({"a":1} prose)");
}

// Decision: two values are ambiguous, never guessed.
TEST(JsonExtractTest, TwoValuesAreAnError) {
  auto result = ExtractJson(R"({"a":1} {"b":2})");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "more than one JSON value: a second one starts at line 1, column 9");
  EXPECT_EQ(result.error().offset, 8u);
  EXPECT_EQ(Extract("First {\"a\":1}\nthen\n  [\"b\"]"),
            "error: more than one JSON value: a second one starts at line 3, column 3");
}

TEST(JsonExtractTest, TruncatedJsonReportsWhereTheTextEnds) {
  auto result = ExtractJson("{\"a\": [1,\n  2");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().message, "incomplete JSON at line 2, column 4");
  EXPECT_EQ(result.error().offset, 13u);
  EXPECT_EQ(result.error().line, 2u);
  EXPECT_EQ(result.error().column, 4u);
}

// A cut answer is a parse failure, whatever complete values it holds: a judge's verdict cut after
// its first criterion is not that criterion's object.
TEST(JsonExtractTest, AnAnswerCutAfterACompleteInnerValueIsIncompleteNotThatValue) {
  EXPECT_EQ(Extract(R"({"criteria_results":[{"criterion_id":"a","verdict":"pass"},{"criterion_id":"b","ver)"),
            "error: incomplete JSON at line 1, column 84");
  EXPECT_EQ(Extract(R"(  [{"a":1}, {"b":)"), "error: incomplete JSON at line 1, column 18");
  // Prose before a value is still prose.
  EXPECT_EQ(Extract(R"(Here: {"a":1} and {"b":)"), R"({"a":1} prose)");
}

TEST(JsonExtractTest, SyntaxErrorsCarryTheParserPosition) {
  EXPECT_EQ(Extract(R"({"a":tru})"), "error: syntax error at line 1, column 6");
  EXPECT_EQ(Extract("[1,]"), "error: syntax error at line 1, column 4");
  EXPECT_EQ(Extract("{\"a\":1, // comment\n}"), "error: syntax error at line 1, column 9");
  EXPECT_EQ(Extract("{\"é\": x}"), "error: syntax error at line 1, column 7");
}

TEST(JsonExtractTest, EmptyAndNonJsonAnswers) {
  auto empty = ExtractJson("");
  ASSERT_FALSE(empty.has_value());
  EXPECT_EQ(empty.error().message, "the answer is empty");
  EXPECT_EQ(empty.error().offset, 0u);
  EXPECT_EQ(empty.error().line, 1u);
  EXPECT_EQ(empty.error().column, 1u);
  EXPECT_EQ(Extract(" \n\t "), "error: the answer is empty");
  EXPECT_EQ(Extract("I cannot help with that."), "error: syntax error at line 1, column 1");
  EXPECT_EQ(Extract("The answer is 42."), "error: syntax error at line 1, column 1");
}

TEST(JsonExtractTest, DeepNestingIsAnErrorNotAStackOverflow) {
  std::string deep(100000, '[');
  EXPECT_EQ(Extract(deep), "error: too deep at line 1, column 257");
  // In prose, each '[' fails at depth 257; the scan budget (8 bytes per byte
  // of text) runs out before the last 256 brackets would parse.
  EXPECT_EQ(Extract("prose " + deep + std::string(100000, ']')), "error: syntax error at line 1, column 1");
  std::string ok = std::string(256, '[') + std::string(256, ']');
  EXPECT_TRUE(ExtractJson(ok).has_value());
}

TEST(JsonExtractTest, RandomBytesNeverCrash) {
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]\",:`\\ \njson0123456789.eE-+truefalsn\x80\xff";
  for (int i = 0; i < 5000; ++i) {
    std::string text(rng() % 64, ' ');
    for (char& c : text) c = i % 2 ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
    auto result = ExtractJson(text);
    if (!result) {
      EXPECT_FALSE(result.error().message.empty());
      EXPECT_LE(result.error().offset, text.size());
    }
  }
}

TEST(JsonExtractTest, ManyUnclosedBracketsStayFast) {
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "[\"x\" ";
  auto result = ExtractJson(text);  // bounded scan: finishes, and finds nothing
  EXPECT_FALSE(result.has_value());
}

}  // namespace
}  // namespace skillrunner::generation
