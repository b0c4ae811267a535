// Server-sent events read from pieces split anywhere.
#include "services/providers/sse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace skillrunner::providers {
namespace {

std::vector<std::string> Events(const std::vector<std::string_view>& pieces) {
  SseParser parser;
  std::vector<std::string> out;
  for (std::string_view piece : pieces) {
    parser.Feed(piece, [&](const SseEvent& e) { out.push_back(e.event + "|" + e.data); });
  }
  return out;
}

TEST(SseParserTest, LineEndsCommentsMultiLineDataAndEventNames) {
  const std::string stream =
      ": keep-alive\r\n\r\nevent: message_start\r\ndata: {\"a\":1}\r\n\r\n"
      "data:first\ndata: second\n\nid: 7\nretry: 10\ndata: x\r\rdata: \xE2\x82\xAC\n\n";
  const std::vector<std::string> expected = {"message_start|{\"a\":1}", "|first\nsecond", "|x", "|\xE2\x82\xAC"};
  EXPECT_EQ(Events({stream}), expected);
  for (std::size_t split = 0; split <= stream.size(); ++split) {
    std::string_view all(stream);
    ASSERT_EQ(Events({all.substr(0, split), all.substr(split)}), expected) << "split at " << split;
  }
  std::vector<std::string_view> bytes;
  for (std::size_t i = 0; i < stream.size(); ++i) bytes.push_back(std::string_view(stream).substr(i, 1));
  EXPECT_EQ(Events(bytes), expected);
}

TEST(SseParserTest, AnEventWithoutItsBlankLineIsNotDispatched) {
  EXPECT_EQ(Events({"data: a\n\ndata: b\n"}), std::vector<std::string>{"|a"});
}

}  // namespace
}  // namespace skillrunner::providers
