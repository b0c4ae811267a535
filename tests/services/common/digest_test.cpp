#include "services/common/digest.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace skillrunner {
namespace {

TEST(DigestTest, Sha256HexIsTheStandardDigest) {
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

// Members sorted at every depth (arrays keep their order), no whitespace, numbers as written.
TEST(DigestTest, CanonicalJsonSortsMembersAtEveryDepth) {
  auto value = boost::json::parse(R"({"type": "object", "required": ["b", "a"],
      "properties": {"b": {"type": "number", "maximum": 0.5}, "a": {"minimum": 1, "type": "integer"}}})");
  EXPECT_EQ(CanonicalJson(value),
            R"({"properties":{"a":{"minimum":1,"type":"integer"},"b":{"maximum":0.5,"type":"number"}},)"
            R"("required":["b","a"],"type":"object"})");
  auto reordered = boost::json::parse(R"({"required": ["b", "a"], "type": "object",
      "properties": {"a": {"type": "integer", "minimum": 1}, "b": {"maximum": 0.5, "type": "number"}}})");
  EXPECT_EQ(CanonicalJson(reordered), CanonicalJson(value));
}

}  // namespace
}  // namespace skillrunner
