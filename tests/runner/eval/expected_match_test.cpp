// `expected: exact | subset` checks of a case's output.
#include "runner/eval/expected_match.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace skillrunner::eval {
namespace {
namespace json = boost::json;

std::vector<FieldError> Compare(ExpectedMode mode, std::string_view expected, std::string_view output) {
  return CompareExpected(mode, json::parse(expected), json::parse(output));
}

TEST(EvalExpectedMatchTest, SubsetIgnoresExtraMembersAndComparesNumbersByValue) {
  EXPECT_TRUE(
      Compare(ExpectedMode::kSubset, R"({"name": "Ada", "n": 1})", R"({"name": "Ada", "n": 1.0, "email": "a@b.c"})")
          .empty());
  EXPECT_TRUE(Compare(ExpectedMode::kSubset, "{}", R"({"anything": true})").empty());
}

TEST(EvalExpectedMatchTest, SubsetReportsEveryMismatchingPointer) {
  EXPECT_EQ(Compare(ExpectedMode::kSubset, R"({"name": "Ada", "address": {"city": "London", "zip": "N1"}, "a/b": 1})",
                    R"({"name": "Grace", "address": {"city": "London"}, "a/b": "1"})"),
            (std::vector<FieldError>{
                {"/name", "expected \"Ada\", found \"Grace\""},
                {"/address/zip", "missing; expected \"N1\""},
                {"/a~1b", "expected 1, found \"1\""},
            }));
  EXPECT_EQ(Compare(ExpectedMode::kSubset, R"({"a": {"b": 1}})", R"({"a": [1]})"),
            (std::vector<FieldError>{{"/a", "expected an object, found [1]"}}));
}

TEST(EvalExpectedMatchTest, NumbersAreShownAsWritten) {
  EXPECT_EQ(
      Compare(ExpectedMode::kSubset, R"({"total": 12.5, "items": [0.1]})", R"({"total": 33, "items": 2.5})"),
      (std::vector<FieldError>{{"/total", "expected 12.5, found 33"}, {"/items", "expected an array, found 2.5"}}));
}

TEST(EvalExpectedMatchTest, SubsetArraysAreSetsInAnyOrder) {
  EXPECT_TRUE(Compare(ExpectedMode::kSubset, R"({"tags": ["b", {"w": "x"}]})",
                      R"({"tags": [{"w": "x", "count": 2}, "a", "b"]})")
                  .empty());
  EXPECT_EQ(Compare(ExpectedMode::kSubset, R"({"tags": ["b", "z"]})", R"({"tags": ["a", "b"]})"),
            (std::vector<FieldError>{{"/tags", "no element matches \"z\""}}));
}

TEST(EvalExpectedMatchTest, ExactNeedsTheWholeOutput) {
  EXPECT_TRUE(Compare(ExpectedMode::kExact, R"({"a": [1, 2]})", R"({"a": [1, 2]})").empty());
  EXPECT_EQ(Compare(ExpectedMode::kExact, R"({"a": [1, 2]})", R"({"a": [1, 2], "b": 0})"),
            (std::vector<FieldError>{{"", "expected exactly {\"a\":[1,2]}, found {\"a\":[1,2],\"b\":0}"}}));
}

}  // namespace
}  // namespace skillrunner::eval
