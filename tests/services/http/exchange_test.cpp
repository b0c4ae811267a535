// The client's exchange on an in-memory stream (exchange_stream.h), as the
// http_response fuzz target drives it.
#include <gtest/gtest.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <boost/beast/_experimental/test/stream.hpp>
#include <future>
#include <string>
#include <string_view>

#include "services/http/exchange_stream.h"

namespace skillrunner::http {
namespace {

// `response` read `read_size` bytes at a time after a POST, the server
// closing after it.
ExchangeOutcome ReadResponse(std::string_view response, std::size_t read_size) {
  boost::asio::io_context io;
  boost::beast::test::stream client(io);
  boost::beast::test::stream server(io);
  client.connect(server);
  client.read_size(read_size);
  client.append(response);
  client.close_remote();
  HttpRequest request;
  request.body = "{}";
  const ParsedUrl url = *ParseHttpUrl("http://127.0.0.1:8080/v1/chat/completions");
  boost::beast::flat_buffer buffer;
  auto outcome = boost::asio::co_spawn(
      io, exchange_detail::ExchangeOn(client, buffer, request, url, HttpClientOptions{}.max_response_bytes),
      boost::asio::use_future);
  io.run();
  return outcome.get();
}

// Found by tests/fuzz/http_response_fuzz.cpp: Beast 1.81's chunk parser
// asserts (in builds with assertions) when the last chunk came alone and one
// more byte follows; the parse itself is right.
TEST(ExchangeTest, AChunkedBodyReadOneByteAtATimeIsWhole) {
  constexpr std::string_view kResponse =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\n"
      "5\r\n{\"a\":\r\n2\r\n1}\r\n0\r\nTrailer: x\r\n\r\n";
  for (std::size_t read_size : {1u, 3u, 4096u}) {
    ExchangeOutcome outcome = ReadResponse(kResponse, read_size);
    ASSERT_TRUE(outcome.response) << outcome.response.error().message;
    EXPECT_EQ(outcome.response->status, 200);
    EXPECT_EQ(outcome.response->body, "{\"a\":1}");
    EXPECT_EQ(outcome.response->Header("content-type"), "application/json");
    EXPECT_TRUE(outcome.keep_alive);
  }
}

TEST(ExchangeTest, AResponseCutShortIsDroppedAndGarbageIsAProtocolError) {
  ExchangeOutcome cut = ReadResponse("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n{\"partial\"", 1);
  ASSERT_FALSE(cut.response);
  EXPECT_EQ(cut.response.error().kind, HttpErrorKind::kDropped);
  EXPECT_EQ(cut.response.error().message, "connection closed before the response was complete");
  ExchangeOutcome garbage = ReadResponse("SSH-2.0-OpenSSH_9.2\r\n", 64);
  ASSERT_FALSE(garbage.response);
  EXPECT_EQ(garbage.response.error().kind, HttpErrorKind::kProtocol);
  EXPECT_EQ(garbage.response.error().message, "invalid HTTP response: bad version");
}

}  // namespace
}  // namespace skillrunner::http
