#include "services/http/http_client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <mutex>
#include <string>
#include <thread>

#include "tests/services/http/http_test_util.h"
#include "tests/support/loopback_server.h"

namespace skillrunner::http {
namespace {

using namespace http_testing;
using test_support::LoopbackServer;
using test_support::ScriptedResponse;
using namespace std::chrono_literals;

TEST(HttpClientTest, PostRoundTripSendsBodyAndHeadersAndReturnsTheResponse) {
  LoopbackServer server;
  server.Enqueue({.status = 201,
                  .headers = {{"X-Request-Id", "req-42"}, {"Content-Type", "application/json"}},
                  .body = R"({"ok":true})"});
  HttpRequest request = Post(server.base_url() + "/v1/chat/completions?beta=1", R"({"q":1})");
  request.headers.emplace_back("Authorization", "Bearer sk-test");

  Result result = SendOne(request);

  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->status, 201);
  EXPECT_EQ(result->body, R"({"ok":true})");
  EXPECT_EQ(result->Header("x-request-id"), "req-42");
  EXPECT_EQ(result->Header("X-REQUEST-ID"), "req-42");
  for (const auto& [name, value] : result->headers) {
    EXPECT_EQ(name, [&] {
      std::string lower = name;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      return lower;
    }());
  }
  auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].target, "/v1/chat/completions?beta=1");
  EXPECT_EQ(requests[0].body, R"({"q":1})");
  EXPECT_EQ(requests[0].Header("authorization"), "Bearer sk-test");
  EXPECT_EQ(requests[0].Header("content-type"), "application/json");
  EXPECT_EQ(requests[0].Header("content-length"), "7");
  EXPECT_EQ(requests[0].Header("host"), "127.0.0.1:" + std::to_string(server.port()));
}

TEST(HttpClientTest, TenSequentialRequestsShareOneConnection) {
  LoopbackServer server;
  server.SetDefault({.body = "{}"});
  std::vector<HttpRequest> requests(10, Get(server.base_url() + "/models"));

  auto results = SendSequentially({}, requests);

  for (const Result& result : results) ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(server.request_count(), 10u);
  EXPECT_EQ(server.connections_accepted(), 1);
}

TEST(HttpClientTest, ChunkedResponseIsReassembled) {
  LoopbackServer server;
  std::string body(10'000, 'x');
  body += "end";
  server.Enqueue({.body = body, .chunked = true});

  Result result = SendOne(Get(server.base_url() + "/"));

  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->body, body);
  EXPECT_EQ(result->Header("transfer-encoding"), "chunked");
}

TEST(HttpClientTest, RefusedConnectionIsAConnectError) {
  std::uint16_t port = UnusedPort();
  Result result = SendOne(Get("http://127.0.0.1:" + std::to_string(port) + "/"));

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kConnect);
  EXPECT_EQ(result.error().message, "connect to 127.0.0.1:" + std::to_string(port) + " failed: Connection refused");
}

TEST(HttpClientTest, SlowServerHitsTheRequestTimeout) {
  LoopbackServer server;
  server.Enqueue({.body = "{}", .delay = 10s});
  HttpRequest request = Get(server.base_url() + "/");
  request.timeout = 200ms;

  auto start = Clock::now();
  Result result = SendOne(request);

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kTimeout);
  EXPECT_EQ(result.error().message, "timed out after 200 ms");
  EXPECT_GE(MillisSince(start), 190);
  EXPECT_LT(MillisSince(start), 5'000);
  EXPECT_TRUE(server.WaitForClosedConnections(1, 5s)) << "the timed-out connection stays open";
}

TEST(HttpClientTest, ConnectionClosedWithoutAnswerIsDroppedAndNotRetried) {
  LoopbackServer server;
  server.Enqueue({.drop_connection = true});

  Result result = SendOne(Post(server.base_url() + "/", "{}"));

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kDropped);
  EXPECT_EQ(result.error().message, "connection closed before the response was complete");
  EXPECT_EQ(server.request_count(), 1u);  // a fresh connection is never retried
}

TEST(HttpClientTest, TruncatedBodyIsDropped) {
  LoopbackServer server;
  server.Enqueue({.body = std::string(1000, 'a'), .truncate_body = true});

  Result result = SendOne(Get(server.base_url() + "/"));

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kDropped);
  EXPECT_EQ(result.error().message, "connection closed before the response was complete");
}

TEST(HttpClientTest, ResponseOverTheCapIsTooLarge) {
  LoopbackServer server;
  server.Enqueue({.body = std::string(4096, 'a')});
  server.Enqueue({.body = std::string(5000, 'b'), .chunked = true});
  HttpClientOptions options;
  options.max_response_bytes = 1024;

  auto results = SendSequentially(options, {Get(server.base_url() + "/"), Get(server.base_url() + "/")});

  for (const Result& result : results) {
    ASSERT_FALSE(result);
    EXPECT_EQ(result.error().kind, HttpErrorKind::kTooLarge);
    EXPECT_EQ(result.error().message, "response exceeds 1024 bytes");
  }
}

TEST(HttpClientTest, InvalidUrlIsReportedWithoutAConnection) {
  Result result = SendOne(Get("ftp://example.com/file"));

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kInvalidUrl);
  EXPECT_EQ(result.error().message, "unsupported URL scheme 'ftp' (want http or https)");
}

TEST(HttpClientTest, HeaderWithLineBreakIsRefusedWithoutEchoingItsValue) {
  LoopbackServer server;
  HttpRequest request = Get(server.base_url() + "/");
  request.headers.emplace_back("Authorization", "Bearer sk-secret\r\nX-Evil: 1");

  Result result = SendOne(request);

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kProtocol);
  EXPECT_EQ(result.error().message, "header 'Authorization' contains a line break");
  EXPECT_EQ(server.request_count(), 0u);
}

TEST(HttpClientTest, PeerThatDoesNotSpeakHttpIsAProtocolError) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  std::uint16_t port = acceptor.local_endpoint().port();
  std::thread peer([&] {
    asio::ip::tcp::socket socket = acceptor.accept();
    char request[256];
    boost::system::error_code ec;
    socket.read_some(asio::buffer(request), ec);
    asio::write(socket, asio::buffer(std::string("SSH-2.0-OpenSSH_9.2\r\n")), ec);
    socket.shutdown(asio::ip::tcp::socket::shutdown_send, ec);
    socket.read_some(asio::buffer(request), ec);  // until the client hangs up
  });

  Result result = SendOne(Get("http://127.0.0.1:" + std::to_string(port) + "/"));
  peer.join();

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kProtocol);
  EXPECT_EQ(result.error().message.rfind("invalid HTTP response: ", 0), 0u) << result.error().message;
}

// The client remembers the last URL it parsed on a thread: requests that
// alternate between servers (and paths) still go where each one says.
TEST(HttpClientTest, RequestsAlternatingBetweenUrlsEachReachTheirOwnServer) {
  LoopbackServer a;
  a.SetDefault({.body = "{\"from\":\"a\"}"});
  LoopbackServer b;
  b.SetDefault({.body = "{\"from\":\"b\"}"});
  auto results = SendSequentially({}, {Get(a.base_url() + "/x"), Get(b.base_url() + "/y"), Get(a.base_url() + "/z"),
                                       Get("http://[::1:bad"), Get(a.base_url() + "/x")});
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results[0]->body, "{\"from\":\"a\"}");
  EXPECT_EQ(results[1]->body, "{\"from\":\"b\"}");
  EXPECT_EQ(results[2]->body, "{\"from\":\"a\"}");
  ASSERT_FALSE(results[3]);
  EXPECT_EQ(results[3].error().kind, HttpErrorKind::kInvalidUrl);
  EXPECT_EQ(results[4]->body, "{\"from\":\"a\"}");
  ASSERT_EQ(a.requests().size(), 3u);
  EXPECT_EQ(a.requests()[0].target, "/x");
  EXPECT_EQ(a.requests()[1].target, "/z");
  ASSERT_EQ(b.requests().size(), 1u);
  EXPECT_EQ(b.requests()[0].target, "/y");
}

}  // namespace
}  // namespace skillrunner::http
