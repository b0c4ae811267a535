#include "services/common/json_text.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdint>
#include <limits>

namespace skillrunner {
namespace {

TEST(JsonTextTest, NumbersReadAsPeopleWriteThem) {
  auto value = boost::json::parse(R"({"t":0.2,"a":1.0,"b":1e300,"c":-3,"d":18446744073709551615,"s":"x\"y"})");
  EXPECT_EQ(CompactJson(value), R"({"t":0.2,"a":1.0,"b":1e+300,"c":-3,"d":18446744073709551615,"s":"x\"y"})");
  EXPECT_EQ(boost::json::parse(CompactJson(value)), value);
}

TEST(JsonTextTest, ABrokenUtf8ByteIsSaidAsSuchWithItsPlace) {
  EXPECT_EQ(ParseJsonText("{\"a\": [1,\n \"caf\xe9\"]}", 64).error(), "line 2, column 6: invalid UTF-8 at byte 16");
  EXPECT_EQ(ParseJsonText("{\"a\": tru}", 64).error(), "line 1, column 7: syntax error");
}

TEST(JsonTextTest, IntegersAreReadAsJsonSchemaCountsThem) {
  auto integer = [](std::string_view text) { return JsonInteger(boost::json::parse(text)); };
  EXPECT_EQ(integer("2"), 2);
  EXPECT_EQ(integer("2.0"), 2);
  EXPECT_EQ(integer("-3e2"), -300);
  EXPECT_EQ(integer("18446744073709551615"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(integer("1e30"), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(integer("-1e30"), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(integer("2.5"), std::nullopt);
  EXPECT_EQ(integer("\"2\""), std::nullopt);
  EXPECT_EQ(integer("null"), std::nullopt);
}

TEST(JsonTextTest, PrettyIndentsByTwoAndKeepsEmptyContainersShort) {
  auto value = boost::json::parse(R"({"a":[1,{}],"b":[]})");
  EXPECT_EQ(PrettyJson(value), "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}");
}

TEST(JsonTextTest, StringsAreEscapedExactlyAsBoostJsonEscapesThem) {
  std::string every_byte;
  for (int c = 0; c < 256; ++c) every_byte.push_back(static_cast<char>(c));
  for (std::string text :
       {every_byte, std::string("plain"), std::string(""), std::string("caf\xc3\xa9 \"q\" \\ /\x7f")}) {
    std::string out = "[";
    AppendJsonString(text, out);
    EXPECT_EQ(out, "[" + boost::json::serialize(boost::json::string(text)));
    boost::json::value value = {{"k\n" + text, text}, {"n", -7}, {"u", 18446744073709551615ULL}, {"b", true}};
    EXPECT_EQ(CompactJson(value), boost::json::serialize(value));
  }
}

}  // namespace
}  // namespace skillrunner
