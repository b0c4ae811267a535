#include "services/common/json_text.h"

#include <boost/json/parse.hpp>
#include <gtest/gtest.h>

namespace skillrunner {
namespace {

TEST(JsonTextTest, NumbersReadAsPeopleWriteThem) {
  auto value = boost::json::parse(R"({"t":0.2,"a":1.0,"b":1e300,"c":-3,"d":18446744073709551615,"s":"x\"y"})");
  EXPECT_EQ(CompactJson(value), R"({"t":0.2,"a":1.0,"b":1e+300,"c":-3,"d":18446744073709551615,"s":"x\"y"})");
  EXPECT_EQ(boost::json::parse(CompactJson(value)), value);
}

TEST(JsonTextTest, PrettyIndentsByTwoAndKeepsEmptyContainersShort) {
  auto value = boost::json::parse(R"({"a":[1,{}],"b":[]})");
  EXPECT_EQ(PrettyJson(value), "{\n  \"a\": [\n    1,\n    {}\n  ],\n  \"b\": []\n}");
}

}  // namespace
}  // namespace skillrunner
