#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

#include "services/common/iso_time.h"
#include "services/common/json_pointer.h"
#include "services/common/text.h"
#include "services/common/utf8.h"

namespace skillrunner {
namespace {

TEST(SanitizeUtf8Test, KeepsValidTextAndReplacesEachInvalidByte) {
  EXPECT_EQ(SanitizeUtf8("plain é € 😀"), "plain é € 😀");
  EXPECT_EQ(SanitizeUtf8("a\xC3"), "a\xEF\xBF\xBD");                                // cut short
  EXPECT_EQ(SanitizeUtf8("\xC0\xAF"), "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong
  EXPECT_EQ(SanitizeUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
}

TEST(CodePointsTest, CountsCharactersNotBytes) {
  EXPECT_EQ(CodePoints(""), 0);
  EXPECT_EQ(CodePoints("abc"), 3);
  EXPECT_EQ(CodePoints("é€😀"), 3);
}

// The rule redaction uses for "a field under /input" and for a value that shows a masked field.
TEST(JsonPointerTest, APointerUnderARootAndMaskingAtOne) {
  EXPECT_EQ(PointerUnder("/input/a/b", "/input"), std::optional<std::string_view>("/a/b"));
  EXPECT_EQ(PointerUnder("/input", "/input"), std::optional<std::string_view>(""));
  EXPECT_EQ(PointerUnder("/inputs/a", "/input"), std::nullopt);
  EXPECT_EQ(PointerUnder("/output/a", "/input"), std::nullopt);
  EXPECT_EQ(PointerUnder("/a", ""), std::optional<std::string_view>("/a"));
  boost::json::value value = boost::json::parse(R"({"a":{"b":1},"c":2})");
  EXPECT_TRUE(MaskAt(value, "/a/b", "[redacted]"));
  EXPECT_FALSE(MaskAt(value, "/missing", "[redacted]"));
  EXPECT_EQ(value, boost::json::parse(R"({"a":{"b":"[redacted]"},"c":2})"));
  EXPECT_TRUE(MaskAt(value, "", "[redacted]"));
  EXPECT_EQ(value, "[redacted]");
}

TEST(JsonPointerTest, EscapesJoinsAndSplitsTokens) {
  EXPECT_EQ(EscapePointerToken("a/b~c"), "a~1b~0c");
  EXPECT_EQ(AppendPointer("/x", "a/b"), "/x/a~1b");
  EXPECT_EQ(MakePointer({}), "");
  EXPECT_EQ(MakePointer({"a/b", "0"}), "/a~1b/0");
  std::vector<std::string> tokens;
  ASSERT_TRUE(ParsePointer("/a~1b/0/~0", tokens));
  EXPECT_EQ(tokens, (std::vector<std::string>{"a/b", "0", "~"}));
  ASSERT_TRUE(ParsePointer("", tokens));
  EXPECT_TRUE(tokens.empty());
  ASSERT_TRUE(ParsePointer("/", tokens));
  EXPECT_EQ(tokens, (std::vector<std::string>{""}));
  EXPECT_FALSE(ParsePointer("a/b", tokens));
  EXPECT_FALSE(ParsePointer("/a~2", tokens));
  EXPECT_FALSE(ParsePointer("/a~", tokens));
}

TEST(ClosestNamesTest, NamesTheNearestCandidatesFirst) {
  std::vector<std::string> models{"gpt-4o", "gpt-4o-mini", "claude-sonnet-4-5", "llama3.1:8b"};
  EXPECT_EQ(ClosestNames("gpt-4o-mni", models), (std::vector<std::string>{"gpt-4o-mini"}));
  EXPECT_EQ(ClosestNames("abx", {"xyz", "abd", "abc"}), (std::vector<std::string>{"abd", "abc"}));
  EXPECT_EQ(ClosestNames("abx", {"xyz", "abd", "abc"}, 1), (std::vector<std::string>{"abd"}));
  EXPECT_TRUE(ClosestNames("mistral", models).empty());
  EXPECT_EQ(DidYouMean({"gpt-4o-mini", "gpt-4o"}), " (did you mean \"gpt-4o-mini\", \"gpt-4o\"?)");
  EXPECT_EQ(DidYouMean({}), "");
}

TEST(EditDistanceTest, CountsEdits) {
  EXPECT_EQ(EditDistance("requried", "required"), 2u);
  EXPECT_EQ(EditDistance("", "abc"), 3u);
  EXPECT_EQ(EditDistance("same", "same"), 0u);
}

// A swap of two neighbouring letters is one edit (the keyword-typo lint).
TEST(DamerauDistanceTest, CountsASwapAsOneEdit) {
  EXPECT_EQ(DamerauDistance("requried", "required"), 1u);
  EXPECT_EQ(DamerauDistance("propertes", "properties"), 1u);
  EXPECT_EQ(DamerauDistance("minLenght", "minLength"), 1u);
  EXPECT_EQ(DamerauDistance("", "abc"), 3u);
  EXPECT_EQ(DamerauDistance("abc", ""), 3u);
  EXPECT_EQ(DamerauDistance("same", "same"), 0u);
  EXPECT_EQ(DamerauDistance("ca", "abc"), 3u);  // optimal string alignment: no edit of a swapped pair
}

}  // namespace
}  // namespace skillrunner

namespace skillrunner {
namespace {

// IsoUtc's own form, and the RFC 3339 UTC forms STS and the metadata services write expirations in.
TEST(IsoTimeTest, ParsesIsoUtcAndTheCloudsExpirations) {
  const auto at = std::chrono::system_clock::from_time_t(1796187600);  // 2026-12-02T05:00:00Z
  EXPECT_EQ(ParseIsoUtc("2026-12-02T05:00:00Z"), at);
  EXPECT_EQ(ParseIsoUtc("2026-12-02T05:00:00+00:00"), at);
  EXPECT_EQ(ParseIsoUtc("2026-12-02T05:00:00.250Z"), at + std::chrono::milliseconds(250));
  EXPECT_EQ(ParseIsoUtc("2026-12-02T05:00:00.5Z"), at + std::chrono::milliseconds(500));
  EXPECT_EQ(ParseIsoUtc(IsoUtc(at + std::chrono::milliseconds(7))), at + std::chrono::milliseconds(7));
  EXPECT_EQ(ParseIsoUtc("2026-12-02T05:00:00"), std::nullopt);  // no zone: not UTC for sure
  EXPECT_EQ(ParseIsoUtc("2026-12-02T05:00:00+01:00"), std::nullopt);
  EXPECT_EQ(ParseIsoUtc("tomorrow"), std::nullopt);
}

}  // namespace
}  // namespace skillrunner
