// Early abort: completed members checked against the output schema.
#include "services/generation/stream_check.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace skillrunner::generation {
namespace {
namespace json = boost::json;

const char* kSchema = R"({
  "type": "object", "required": ["category", "score", "lines"],
  "properties": {
    "category": {"enum": ["bug", "feature"]},
    "score": {"type": "number", "minimum": 0, "maximum": 10},
    "lines": {"type": "array", "items": {"$ref": "#/definitions/line"}},
    "either": {"anyOf": [{"enum": [1]}, {"enum": [2]}]}
  },
  "definitions": {"line": {"type": "object", "required": ["amount"],
                           "properties": {"amount": {"exclusiveMinimum": 0}}}}})";

// The errors after feeding `text`, and after each of its prefixes (none
// should come before the value they name is complete).
std::vector<FieldError> FirstErrors(std::string_view text, std::size_t* at = nullptr, bool skip_nulls = false) {
  const json::value schema = json::parse(kSchema);
  StreamCheck check(schema, skip_nulls);
  PartialJson parser;
  for (std::size_t i = 0; i < text.size(); ++i) {
    parser.Feed(text.substr(i, 1));
    auto errors = check.CheckNew(parser);
    if (!errors.empty()) {
      if (at != nullptr) *at = i + 1;
      return errors;
    }
  }
  return {};
}

TEST(StreamCheckTest, AnEnumBreaksOnceTheStringCloses) {
  std::size_t at = 0;
  const std::string text = R"({"category":"question","score":3})";
  EXPECT_EQ(FirstErrors(text, &at),
            (std::vector<FieldError>{{"/category", "expected one of [\"bug\",\"feature\"], found \"question\""}}));
  EXPECT_EQ(at, text.find("question") + std::string("question\"").size());
}

TEST(StreamCheckTest, ANumberOutOfRangeBreaksOnceSomethingFollowsIt) {
  std::size_t at = 0;
  const std::string text = R"({"category":"bug","score":11,"lines":[]})";
  EXPECT_EQ(FirstErrors(text, &at), (std::vector<FieldError>{{"/score", "expected at most 10, found 11"}}));
  EXPECT_EQ(at, text.find("11,") + 3);
}

TEST(StreamCheckTest, AMissingRequiredMemberBreaksWhenItsObjectCloses) {
  std::size_t at = 0;
  const std::string text = R"({"category":"bug","score":1,"lines":[{"amount":2},{"note":"x"}]})";
  EXPECT_EQ(FirstErrors(text, &at), (std::vector<FieldError>{{"/lines/1/amount", "required property is missing"}}));
  EXPECT_EQ(at, text.find("\"x\"}") + 4);
}

TEST(StreamCheckTest, ItemsAndRefsLeadToTheSubschema) {
  EXPECT_EQ(FirstErrors(R"({"lines":[{"amount":0}]})"),
            (std::vector<FieldError>{{"/lines/0/amount", "expected more than 0, found 0"}}));
}

TEST(StreamCheckTest, AValidAnswerAndBranchesOfAnyOfAreNotStopped) {
  EXPECT_EQ(FirstErrors(R"({"category":"bug","score":10,"lines":[{"amount":1}],"either":3})"),
            std::vector<FieldError>{});
}

TEST(StreamCheckTest, NullsAreSkippedForStrictWireAnswers) {
  EXPECT_EQ(FirstErrors(R"({"category":null,)", nullptr, true), std::vector<FieldError>{});
  EXPECT_FALSE(FirstErrors(R"({"category":null,)", nullptr, false).empty());
}

}  // namespace
}  // namespace skillrunner::generation
