#include "runner/server/json_rpc.h"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

#include "runner/server/line_framer.h"

namespace skillrunner::server {
namespace {
namespace json = boost::json;

std::string ErrorText(std::string_view line, std::size_t depth = 64) {
  auto parsed = ParseLine(line, depth);
  return std::holds_alternative<json::object>(parsed) ? json::serialize(std::get<json::object>(parsed)) : "";
}

TEST(JsonRpcTest, ParseErrorsGiveTheBytePosition) {
  EXPECT_EQ(ErrorText(R"({"a": tru})"),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error at byte 7: syntax error"}})");
  EXPECT_EQ(
      ErrorText(R"({"a":1} x)"),
      R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error at byte 9: unexpected text after the JSON value"}})");
  std::string deep(100, '[');
  EXPECT_NE(ErrorText(deep + std::string(100, ']'), 64).find("-32700"), std::string::npos);
  EXPECT_EQ(ErrorText("\"\xff\""),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error at byte 2: invalid UTF-8"}})");
  EXPECT_EQ(ErrorText("{\"text\":\"caf\xc3\""),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error at byte 13: invalid UTF-8"}})");
}

TEST(JsonRpcTest, RequestsAndNotificationsAreTold) {
  auto parsed = ParseLine(R"({"jsonrpc":"2.0","id":"a","method":"health","params":{"x":1},"auth":"t"})", 64);
  auto& line = std::get<ParsedLine>(parsed);
  ASSERT_FALSE(line.batch);
  const Call& call = std::get<Call>(line.messages.at(0));
  EXPECT_EQ(call.id, "a");
  EXPECT_FALSE(call.notification);
  EXPECT_EQ(call.method, "health");
  EXPECT_EQ(call.auth, "t");
  auto note = ParseLine(R"({"jsonrpc":"2.0","method":"x"})", 64);
  EXPECT_TRUE(std::get<Call>(std::get<ParsedLine>(note).messages.at(0)).notification);
  auto bad = ParseLine(R"({"jsonrpc":"2.0","id":4,"method":"x","params":3})", 64);
  EXPECT_EQ(
      json::serialize(std::get<json::object>(std::get<ParsedLine>(bad).messages.at(0))),
      R"({"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"Invalid Request: \"params\" must be an object or an array"}})");
  auto no_method = ParseLine(R"({"jsonrpc":"2.0","id":5,"method":7})", 64);
  EXPECT_EQ(
      json::serialize(std::get<json::object>(std::get<ParsedLine>(no_method).messages.at(0))),
      R"({"jsonrpc":"2.0","id":5,"error":{"code":-32600,"message":"Invalid Request: \"method\" must be a string"}})");
  auto bad_auth = ParseLine(R"({"jsonrpc":"2.0","id":6,"method":"health","auth":1})", 64);
  EXPECT_EQ(
      json::serialize(std::get<json::object>(std::get<ParsedLine>(bad_auth).messages.at(0))),
      R"({"jsonrpc":"2.0","id":6,"error":{"code":-32600,"message":"Invalid Request: \"auth\" must be a string"}})");
  auto bad_id = ParseLine(R"({"jsonrpc":"2.0","id":{},"method":"x"})", 64);
  EXPECT_EQ(json::serialize(std::get<json::object>(std::get<ParsedLine>(bad_id).messages.at(0)).at("id")), "null");
}

TEST(LineFramerTest, SplitsAcrossChunksAndDropsCarriageReturns) {
  LineFramer framer(16);
  std::vector<std::string> lines;
  int oversized = 0;
  auto on_line = [&](std::string_view l) { lines.emplace_back(l); };
  auto on_big = [&] { ++oversized; };
  framer.Feed("ab", on_line, on_big);
  framer.Feed("c\r\nde\nf", on_line, on_big);
  framer.Feed("g\n", on_line, on_big);
  EXPECT_EQ(lines, (std::vector<std::string>{"abc", "de", "fg"}));
  EXPECT_EQ(oversized, 0);
}

TEST(LineFramerTest, AnOverLongLineIsReportedOnceAndSkippedToItsNewline) {
  LineFramer framer(8);
  std::vector<std::string> lines;
  int oversized = 0;
  auto on_line = [&](std::string_view l) { lines.emplace_back(l); };
  auto on_big = [&] { ++oversized; };
  framer.Feed("12345", on_line, on_big);
  framer.Feed("67890", on_line, on_big);  // past the cap: reported now
  EXPECT_EQ(oversized, 1);
  EXPECT_EQ(framer.buffered(), 0u);
  framer.Feed(std::string(1000, 'x'), on_line, on_big);
  framer.Feed("yy\nok\n", on_line, on_big);
  EXPECT_EQ(oversized, 1);
  EXPECT_EQ(lines, (std::vector<std::string>{"ok"}));
}

}  // namespace
}  // namespace skillrunner::server
