// coercion: lax (design.md §9.2): lossless conversions where the schema asks for another type.
#include "services/generation/coercion.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace skillrunner::generation {
namespace {
namespace json = boost::json;

struct Coerced {
  std::string value;
  std::vector<std::string> pointers;
};

Coerced Coerce(const char* value, const char* schema) {
  json::value v = json::parse(value);
  auto pointers = CoerceToSchema(v, json::parse(schema));
  return {json::serialize(v), pointers};
}

TEST(CoercionTest, NumbersBooleansTextAndSingleValuesConvertWhereTheSchemaAsks) {
  auto out = Coerce(R"({"n": "42", "x": "2.5", "b": "false", "s": 7, "t": 2.5, "list": "one", "ok": 3})",
                    R"({"type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": "number"},
          "b": {"type": "boolean"}, "s": {"type": "string"}, "t": {"type": "string"},
          "list": {"type": "array", "items": {"type": "string"}}, "ok": {"type": "integer"}}})");
  EXPECT_EQ(out.value, R"({"n":42,"x":2.5E0,"b":false,"s":"7","t":"2.5","list":["one"],"ok":3})");
  EXPECT_EQ(out.pointers, (std::vector<std::string>{"/n", "/x", "/b", "/s", "/t", "/list"}));
}

TEST(CoercionTest, WhatWouldLoseOrChangeTextIsLeftForValidation) {
  auto out = Coerce(R"({"a": "2.5", "b": "042", "c": "1e2", "d": " 4", "e": "yes", "f": "TRUE"})",
                    R"({"properties": {"a": {"type": "integer"}, "b": {"type": "integer"},
                        "c": {"type": "number"}, "d": {"type": "integer"}, "e": {"type": "boolean"},
                        "f": {"type": "boolean"}}})");
  EXPECT_EQ(out.value, R"({"a":"2.5","b":"042","c":"1e2","d":" 4","e":"yes","f":"TRUE"})");
  EXPECT_TRUE(out.pointers.empty());
}

TEST(CoercionTest, ItFollowsItemsPrefixItemsAndAdditionalPropertiesButNotCombinators) {
  auto out = Coerce(
      R"({"rows": [{"id": "1"}, {"id": "2"}], "pair": ["3", "4"], "extra": {"k": "5"}, "either": "6",
          "a/b": "7"})",
      R"({"properties": {"rows": {"items": {"properties": {"id": {"type": "integer"}}}},
          "pair": {"prefixItems": [{"type": "integer"}, {"type": "string"}]},
          "extra": {"additionalProperties": {"type": "integer"}},
          "either": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
          "a/b": {"type": ["integer", "null"]}}})");
  EXPECT_EQ(out.value, R"({"rows":[{"id":1},{"id":2}],"pair":[3,"4"],"extra":{"k":5},"either":"6","a/b":7})");
  EXPECT_EQ(out.pointers, (std::vector<std::string>{"/rows/0/id", "/rows/1/id", "/pair/0", "/extra/k", "/a~1b"}));
}

}  // namespace
}  // namespace skillrunner::generation
