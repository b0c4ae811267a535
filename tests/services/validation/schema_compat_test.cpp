// Which schema changes break a skill's callers (schema registries' BACKWARD rule), on each side.
#include "services/validation/schema_compat.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace skillrunner::validation {
namespace {
namespace json = boost::json;

std::vector<SchemaBreak> Input(std::string_view before, std::string_view after) {
  return BreakingChanges(SchemaSide::kInput, json::parse(before), json::parse(after));
}
std::vector<SchemaBreak> Output(std::string_view before, std::string_view after) {
  return BreakingChanges(SchemaSide::kOutput, json::parse(before), json::parse(after));
}
using Breaks = std::vector<SchemaBreak>;

constexpr const char* kInvoice = R"({"type":"object","required":["total","currency"],"properties":{
  "total":{"type":"number"},"currency":{"enum":["EUR","USD"]},"note":{"type":"string"},
  "lines":{"type":"array","items":{"$ref":"#/definitions/line"}}},
  "definitions":{"line":{"type":"object","required":["amount"],"properties":{"amount":{"type":"number"}}}}})";

TEST(SchemaCompatTest, AnOptionalMemberAddedBreaksNeitherSide) {
  const std::string after = R"({"type":"object","required":["total","currency"],"properties":{
    "total":{"type":"number"},"currency":{"enum":["EUR","USD"]},"note":{"type":"string"},"due":{"type":"string"},
    "lines":{"type":"array","items":{"$ref":"#/definitions/line"}}},
    "definitions":{"line":{"type":"object","required":["amount"],"properties":{"amount":{"type":"number"}}}}})";
  EXPECT_EQ(Input(kInvoice, after), Breaks{});
  EXPECT_EQ(Output(kInvoice, after), Breaks{});
  EXPECT_EQ(Input(kInvoice, kInvoice), Breaks{});
}

TEST(SchemaCompatTest, AnInputBreaksWhenItNeedsMoreOrTakesLess) {
  EXPECT_EQ(Input(R"({"type":"object","properties":{"tier":{"type":"string"}}})",
                  R"({"type":"object","required":["tier"],"properties":{"tier":{"type":"string"}}})"),
            (Breaks{{"/tier", "a required member \"tier\" was added"}}));
  EXPECT_EQ(Input(R"({"type":["string","null"]})", R"({"type":"string"})"),
            (Breaks{{"", "the type narrowed: it no longer takes null"}}));
  EXPECT_EQ(Input(R"({"type":"number"})", R"({"type":"integer"})"),
            (Breaks{{"", "the type narrowed: it no longer takes number"}}));
  EXPECT_EQ(Input(R"({"properties":{"c":{"enum":["EUR","USD"]}}})", R"({"properties":{"c":{"enum":["EUR"]}}})"),
            (Breaks{{"/c", "the enum narrowed: it no longer takes \"USD\""}}));
  EXPECT_EQ(Input(R"({"properties":{"c":{"type":"string"}}})", R"({"properties":{"c":{"const":"EUR"}}})"),
            (Breaks{{"/c", "the enum narrowed: it no longer takes any value"}}));
  // Widening an input is compatible: it still takes everything it took.
  EXPECT_EQ(Input(R"({"type":"integer","enum":[1,2]})", R"({"type":"number","enum":[1,2,3]})"), Breaks{});
}

TEST(SchemaCompatTest, AnOutputBreaksWhenItGivesLessOrSomethingNew) {
  EXPECT_EQ(Output(kInvoice, R"({"type":"object","required":["total"],"properties":{
    "total":{"type":["number","string"]},"currency":{"enum":["EUR","USD","GBP"]},
    "lines":{"type":"array","items":{"$ref":"#/definitions/line"}}},
    "definitions":{"line":{"type":"object","required":["amount"],"properties":{"amount":{"type":"string"}}}}})"),
            (Breaks{{"/currency", "\"currency\" is no longer always present"},
                    {"/note", "the member \"note\" was removed"},
                    {"/total", "the type widened: it may now be string"},
                    {"/currency", "the enum widened: it may now be \"GBP\""},
                    {"/lines/*/amount", "the type widened: it may now be string"}}));
  // Narrowing an output is compatible: every new output reads as an old one.
  EXPECT_EQ(Output(R"({"type":"number","enum":[1,2,3]})", R"({"type":"integer","enum":[1,2]})"), Breaks{});
  EXPECT_EQ(Output(R"({"properties":{"c":{"enum":["EUR"]}}})", R"({"properties":{"c":{"type":"string"}}})"),
            (Breaks{{"/c", "the enum widened: it may now be any value"}}));
}

TEST(SchemaCompatTest, ARecursiveSchemaIsComparedToABoundedDepth) {
  constexpr const char* kTree =
      R"({"$ref":"#/definitions/node","definitions":{"node":{"type":"object","properties":{
      "children":{"type":"array","items":{"$ref":"#/definitions/node"}}}}}})";
  EXPECT_EQ(Output(kTree, kTree), Breaks{});
}

}  // namespace
}  // namespace skillrunner::validation
