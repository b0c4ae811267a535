#include "runner/tree/yaml_json.h"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

namespace skillrunner {
namespace {

std::string Json(std::string_view yaml) {
  auto doc = ParseYaml(yaml);
  EXPECT_TRUE(doc.has_value()) << (doc ? "" : doc.error().message);
  return doc ? boost::json::serialize(doc->value) : "";
}

TEST(YamlJsonTest, FollowsTheYaml12CoreSchema) {
  EXPECT_EQ(Json("a: true\nb: yes\nc: on\nd: ~\ne:\nf: null\ng: 'true'\nh: \"12\""),
            R"({"a":true,"b":"yes","c":"on","d":null,"e":null,"f":null,"g":"true","h":"12"})");
  EXPECT_EQ(Json("a: 12\nb: -3\nc: 1.5\nd: 1e3\ne: 0x1F\nf: 0o17\ng: 012\nh: 1.2.3"),
            R"({"a":12,"b":-3,"c":1.5E0,"d":1E3,"e":31,"f":15,"g":12,"h":"1.2.3"})");
  EXPECT_EQ(Json("big: 18446744073709551615\nneg: -9223372036854775808"),
            R"({"big":18446744073709551615,"neg":-9223372036854775808})");
}

TEST(YamlJsonTest, ConvertsFlowAndBlockCollections) {
  EXPECT_EQ(Json("list: [1, two, {x: 3}]\nmap:\n  k: [ ]\n  m: {}"),
            R"({"list":[1,"two",{"x":3}],"map":{"k":[],"m":{}}})");
}

TEST(YamlJsonTest, RecordsWhereEachValueAndKeyWasWritten) {
  auto doc = ParseYaml("id: x\nprompt:\n  user: hello\nlist:\n  - a\n  - b\n");
  ASSERT_TRUE(doc);
  EXPECT_EQ(doc->positions.Find("/id").line, 1);
  EXPECT_EQ(doc->positions.Find("/id").column, 5);
  EXPECT_EQ(doc->positions.Find("/prompt/user").line, 3);
  EXPECT_EQ(doc->positions.Find("/prompt/user").column, 9);
  EXPECT_EQ(doc->positions.FindKey("/prompt/user").column, 3);
  EXPECT_EQ(doc->positions.Find("/list/1").line, 6);
  // An unknown path falls back to its nearest known ancestor.
  EXPECT_EQ(doc->positions.Find("/prompt/system").line, 3);
}

TEST(YamlJsonTest, SyntaxErrorsNameLineAndColumn) {
  auto doc = ParseYaml("id: x\ninput_schema: {type: object\n");
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().position.line, 3);
  EXPECT_EQ(doc.error().message, "end of map flow not found");
}

// yaml-cpp's Load read the first node and dropped the rest: a config written as a JSON object with
// a `key: value` line after it loaded as the object alone, the line silently ignored.
TEST(YamlJsonTest, WhatFollowsTheFirstDocumentIsAnErrorWhereItStarts) {
  auto doc = ParseYaml("{\"providers\": {}}\nbogus_key: 1\n");
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().message,
            "a second YAML document starts here; a file holds one (remove what follows the first, or a stray '---')");
  EXPECT_EQ(doc.error().position.line, 2);
  EXPECT_EQ(doc.error().position.column, 1);
  auto separated = ParseYaml("id: x\n---\nid: y\n");
  ASSERT_FALSE(separated);
  EXPECT_EQ(separated.error().position.line, 3);
  EXPECT_TRUE(ParseYaml("id: x\n")) << "one document";
  EXPECT_TRUE(ParseYaml("---\nid: x\n...\n")) << "one document with its markers";
  EXPECT_TRUE(ParseYaml("")) << "an empty file is one empty document";
}

TEST(YamlJsonTest, DuplicateKeysAreErrors) {
  auto doc = ParseYaml("id: x\nmodel: a\nmodel: b\n");
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().message, "duplicate key \"model\"");
  EXPECT_EQ(doc.error().position.line, 3);
  EXPECT_EQ(doc.error().position.column, 1);
}

// Found by tests/fuzz/skill_yaml_fuzz.cpp: a string of bytes that are not
// UTF-8 reached valijson's maxLength check, which read out of bounds.
TEST(YamlJsonTest, TextThatIsNotUtf8IsAnErrorAtItsValueOrKey) {
  auto value = ParseYaml("id: x\ndescription: \"caf\xe9 \x80\x80\x80\x80\x80\x80\x80\"\n");
  ASSERT_FALSE(value);
  EXPECT_EQ(value.error().message,
            "this value is not valid UTF-8 (a YAML file is UTF-8 text, or UTF-16 or UTF-32 with a byte order mark)");
  EXPECT_EQ(value.error().position.line, 2);
  EXPECT_EQ(value.error().position.column, 14);
  auto key = ParseYaml("id: x\nna\xffme: y\n");
  ASSERT_FALSE(key);
  EXPECT_EQ(key.error().message,
            "this key is not valid UTF-8 (a YAML file is UTF-8 text, or UTF-16 or UTF-32 with a byte order mark)");
  EXPECT_EQ(key.error().position.line, 2);
  EXPECT_EQ(key.error().position.column, 1);
  EXPECT_EQ(Json("name: \"caf\xc3\xa9 \xe2\x82\xac\""), "{\"name\":\"caf\xc3\xa9 \xe2\x82\xac\"}");
}

TEST(YamlJsonTest, AliasBombsHitTheNodeLimit) {
  std::string yaml = "a: &a [x, x, x, x, x, x, x, x, x, x]\n";
  char prev = 'a';
  for (char c = 'b'; c <= 'i'; ++c, ++prev) {
    yaml += std::string(1, c) + ": &" + c + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev +
            ", *" + prev + ", *" + prev + ", *" + prev + "]\n";
  }
  auto doc = ParseYaml(yaml);
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().message, "document has more than 1000000 nodes (after expanding aliases)");
}

TEST(YamlJsonTest, InfinityHasNoJsonEquivalent) {
  auto doc = ParseYaml("x: .inf\n");
  ASSERT_FALSE(doc);
  EXPECT_EQ(doc.error().message, "the YAML value .inf has no JSON equivalent");
  EXPECT_EQ(doc.error().position.line, 1);
}

TEST(YamlJsonTest, PointerTokensAreEscaped) { EXPECT_EQ(AppendPointer("/a", "b/c~d"), "/a/b~1c~0d"); }

}  // namespace
}  // namespace skillrunner
