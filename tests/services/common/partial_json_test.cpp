// The incremental parser: the value so far and the complete pointers, for
// text split anywhere.
#include "services/common/partial_json.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <string>
#include <vector>

namespace skillrunner {
namespace {
namespace json = boost::json;

struct Snapshot {
  std::string value;
  std::vector<std::string> complete;
};

Snapshot Parse(std::string_view text, bool finish = true) {
  PartialJson parser;
  parser.Feed(text);
  if (finish) parser.Finish();
  return {json::serialize(parser.value()), parser.complete()};
}

std::string Canonical(std::string_view text) { return json::serialize(json::parse(text)); }

TEST(PartialJsonTest, UnfinishedStringsShowAsFarAsTheyGo) {
  EXPECT_EQ(Parse(R"({"title":"Hel)").value, R"({"title":"Hel"})");
  EXPECT_EQ(Parse(R"({"title":"Hel)").complete, std::vector<std::string>{});
  EXPECT_EQ(Parse(R"({"a":["x","y)").value, R"({"a":["x","y"]})");
  EXPECT_EQ(Parse(R"({"a":["x","y)").complete, std::vector<std::string>{"/a/0"});
}

TEST(PartialJsonTest, UnfinishedNumbersLiteralsAndKeysAreLeftOut) {
  EXPECT_EQ(Parse(R"({"n":12)", false).value, R"({})");
  EXPECT_EQ(Parse(R"({"n":12,)").value, R"({"n":12})");
  EXPECT_EQ(Parse(R"({"ok":tru)").value, R"({})");
  EXPECT_EQ(Parse(R"({"ok":true)").value, R"({"ok":true})");
  EXPECT_EQ(Parse(R"({"ok":true)").complete, std::vector<std::string>{"/ok"});
  EXPECT_EQ(Parse(R"({"a":1,"tit)").value, R"({"a":1})");
  EXPECT_EQ(Parse(R"({"a":1,"title":)").value, R"({"a":1})");
}

TEST(PartialJsonTest, CompletePointersAreCumulativeInTheOrderValuesEnded) {
  Snapshot s = Parse(R"({"a/b":{"x~":[1,{}]},"c":[],"d":null})");
  EXPECT_EQ(s.complete, (std::vector<std::string>{"/a~1b/x~0/0", "/a~1b/x~0/1", "/a~1b/x~0", "/a~1b", "/c", "/d", ""}));
}

TEST(PartialJsonTest, ARootNumberCompletesAtTheEnd) {
  EXPECT_EQ(Parse("42", false).value, "null");
  EXPECT_EQ(Parse("42").value, "42");
  EXPECT_EQ(Parse("42").complete, std::vector<std::string>{""});
}

TEST(PartialJsonTest, ProseAndFencesBeforeTheRootAreSkipped) {
  EXPECT_EQ(Parse("Here it is:\n```json\n{\"a\":1}\n```").value, R"({"a":1})");
  EXPECT_EQ(Parse("Here it is:\n```json\n{\"a\":1}\n```").complete, (std::vector<std::string>{"/a", ""}));
}

TEST(PartialJsonTest, EscapesAndUtf8AreHeldBackUntilWhole) {
  const std::string text = "{\"s\":\"caf\xC3\xA9 \\u00e9 \\ud83d\\ude00 \\\"q\\\"\"}";
  EXPECT_EQ(Parse(text.substr(0, 10)).value, R"({"s":"caf"})");                     // cut inside é
  EXPECT_EQ(Parse(text.substr(0, 15)).value, "{\"s\":\"caf\xC3\xA9 \"}");           // cut inside \u00e9
  EXPECT_EQ(Parse(text.substr(0, 25)).value, "{\"s\":\"caf\xC3\xA9 \xC3\xA9 \"}");  // after the high surrogate
  EXPECT_EQ(Parse(text).value, Canonical(text));
}

TEST(PartialJsonTest, TextThatCannotBeJsonStopsTheParse) {
  PartialJson parser;
  parser.Feed(R"({"a":"x" "b")");
  EXPECT_TRUE(parser.failed());
  EXPECT_EQ(json::serialize(parser.value()), R"({"a":"x"})");
  parser.Feed(R"(,"c":1})");
  EXPECT_EQ(json::serialize(parser.value()), R"({"a":"x"})");
}

// Every prefix's completed values are the final ones, and the complete list
// of a prefix is a prefix of the final list.
void ExpectGrowsTowards(const std::string& text) {
  const json::value final_value = json::parse(text);
  const Snapshot whole = Parse(text);
  ASSERT_EQ(whole.value, json::serialize(final_value));
  PartialJson bytewise;
  for (std::size_t i = 0; i < text.size(); ++i) {
    bytewise.Feed(text.substr(i, 1));
    const auto& complete = bytewise.complete();
    ASSERT_LE(complete.size(), whole.complete.size()) << i;
    for (std::size_t k = 0; k < complete.size(); ++k) {
      ASSERT_EQ(complete[k], whole.complete[k]) << "byte " << i;
      boost::system::error_code ec;
      ASSERT_EQ(*bytewise.value().find_pointer(complete[k], ec), *final_value.find_pointer(complete[k], ec)) << i;
    }
  }
  for (std::size_t split = 0; split <= text.size(); ++split) {
    PartialJson parser;
    parser.Feed(text.substr(0, split));
    parser.Feed(text.substr(split));
    parser.Finish();
    ASSERT_EQ(json::serialize(parser.value()), whole.value) << "split at " << split;
    ASSERT_EQ(parser.complete(), whole.complete) << "split at " << split;
  }
}

TEST(PartialJsonTest, SplitAtEveryByteBoundaryGivesTheSameValueAndPointers) {
  ExpectGrowsTowards(R"({"title":"Caf\u00e9 \ud83d\ude00 d\u00e9j\u00e0","category":"bug","score":-12.5e-1,)"
                     R"("tags":["a\"b","\\",[],{}],"ok":false,"none":null,"n":{"deep":[1,2,{"x":true}]}})");
  ExpectGrowsTowards("{\"s\":\"\xE2\x82\xAC \xF0\x9F\x98\x80 \xC3\xA9\"}");
  ExpectGrowsTowards(R"([1, 2.0, "x", {"a" : [ ] } ])");
}

}  // namespace
}  // namespace skillrunner
