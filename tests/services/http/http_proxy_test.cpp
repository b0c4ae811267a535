// HTTPS through an HTTP CONNECT proxy (a tiny one, below), NO_PROXY, and the
// environment variables.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cstdlib>
#include <mutex>
#include <optional>
#include <thread>

#include "services/http/http_client.h"
#include "tests/services/http/http_test_util.h"
#include "tests/support/loopback_server.h"
#include "tests/support/temp_tree.h"
#include "tests/support/test_certificates.h"

namespace skillrunner::http {
namespace {

using namespace http_testing;
using namespace boost::asio::experimental::awaitable_operators;
using test_support::GenerateTestCertificates;
using test_support::LoopbackServer;
using test_support::LoopbackTls;
using test_support::TestCertificates;
using Tcp = asio::ip::tcp;

// Accepts, reads the CONNECT request, records its first line, connects to
// 127.0.0.1 on the requested port (whatever the host name), answers
// `status`, then pipes bytes both ways until either side closes.
class ConnectProxy {
 public:
  explicit ConnectProxy(int status = 200) : status_(status), acceptor_(io_, {asio::ip::make_address("127.0.0.1"), 0}) {
    asio::co_spawn(io_, Listen(), RethrowIfFailed);
    thread_ = std::thread([this] { io_.run(); });
  }
  ~ConnectProxy() {
    io_.stop();
    thread_.join();
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port()); }
  std::vector<std::string> connect_lines() const {
    std::lock_guard lock(mutex_);
    return lines_;
  }
  int connections() const { return connections_.load(); }

 private:
  asio::awaitable<void> Listen() {
    for (;;) {
      auto [ec, socket] = co_await acceptor_.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      ++connections_;
      asio::co_spawn(io_, Session(std::move(socket)), [](std::exception_ptr) {});
    }
  }

  asio::awaitable<void> Session(Tcp::socket client) {
    std::string head;
    auto into = asio::dynamic_buffer(head);
    co_await asio::async_read_until(client, into, "\r\n\r\n", asio::use_awaitable);
    std::string line = head.substr(0, head.find("\r\n"));
    {
      std::lock_guard lock(mutex_);
      lines_.push_back(line);
    }
    if (status_ != 200) {
      std::string refusal = "HTTP/1.1 " + std::to_string(status_) +
                            " Forbidden\r\n"
                            "Content-Length: 0\r\nConnection: close\r\n\r\n";
      co_await asio::async_write(client, asio::buffer(refusal), asio::use_awaitable);
      co_return;
    }
    std::string authority = line.substr(8, line.rfind(' ') - 8);  // "CONNECT " ... " HTTP/1.1"
    auto port = static_cast<std::uint16_t>(std::stoi(authority.substr(authority.rfind(':') + 1)));
    Tcp::socket upstream(io_);
    Tcp::endpoint target(asio::ip::make_address("127.0.0.1"), port);
    co_await upstream.async_connect(target, asio::use_awaitable);
    std::string established = "HTTP/1.1 200 Connection established\r\n\r\n";
    co_await asio::async_write(client, asio::buffer(established), asio::use_awaitable);
    auto both_ways = Pipe(client, upstream) || Pipe(upstream, client);
    co_await std::move(both_ways);
  }

  static asio::awaitable<void> Pipe(Tcp::socket& from, Tcp::socket& to) {
    char data[16 * 1024];
    for (;;) {
      auto [read_ec, n] = co_await from.async_read_some(asio::buffer(data), asio::as_tuple(asio::use_awaitable));
      if (read_ec) break;
      auto [write_ec, written] =
          co_await asio::async_write(to, asio::buffer(data, n), asio::as_tuple(asio::use_awaitable));
      (void)written;
      if (write_ec) break;
    }
    boost::system::error_code ignored;
    to.shutdown(Tcp::socket::shutdown_send, ignored);
  }

  int status_;
  asio::io_context io_;
  Tcp::acceptor acceptor_;
  std::thread thread_;
  mutable std::mutex mutex_;
  std::vector<std::string> lines_;
  std::atomic<int> connections_{0};
};

class HttpProxyTest : public ::testing::Test {
 protected:
  HttpProxyTest()
      : certificates_(GenerateTestCertificates(tree_.root(), {"DNS:llm.test", "DNS:localhost", "IP:127.0.0.1"})),
        server_(LoopbackTls{certificates_.cert_file, certificates_.key_file}) {
    server_.SetDefault({.body = R"({"via":"tunnel"})"});
  }

  HttpClientOptions Options(const ConnectProxy& proxy) const {
    HttpClientOptions options;
    options.ca_file = certificates_.ca_file;
    options.https_proxy = proxy.url();
    return options;
  }
  std::string Port() const { return std::to_string(server_.port()); }

  testing::TempTree tree_;
  TestCertificates certificates_;
  LoopbackServer server_;
};

TEST_F(HttpProxyTest, HttpsGoesThroughConnectTunnel) {
  ConnectProxy proxy;

  // llm.test is resolved by the proxy only (it maps every name to 127.0.0.1).
  Result result = SendOne(Get("https://llm.test:" + Port() + "/v1/models"), Options(proxy));

  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->body, R"({"via":"tunnel"})");
  ASSERT_EQ(proxy.connect_lines().size(), 1u);
  EXPECT_EQ(proxy.connect_lines()[0], "CONNECT llm.test:" + Port() + " HTTP/1.1");
  EXPECT_EQ(server_.requests().at(0).Header("host"), "llm.test:" + Port());
}

TEST_F(HttpProxyTest, TunnelledConnectionIsReused) {
  ConnectProxy proxy;
  std::vector<HttpRequest> requests(3, Get("https://llm.test:" + Port() + "/"));

  auto results = SendSequentially(Options(proxy), requests);

  for (const Result& result : results) ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(proxy.connections(), server_.connections_accepted());
  EXPECT_LE(proxy.connections(), 2);
}

TEST_F(HttpProxyTest, LoopbackHostsBypassTheProxy) {
  ConnectProxy proxy;

  Result result = SendOne(Get("https://localhost:" + Port() + "/"), Options(proxy));

  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(proxy.connections(), 0);
}

TEST_F(HttpProxyTest, RefusedConnectIsAConnectError) {
  ConnectProxy proxy(403);

  Result result = SendOne(Get("https://llm.test:" + Port() + "/"), Options(proxy));

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kConnect);
  EXPECT_EQ(result.error().message,
            "proxy " + proxy.url().substr(7) + " refused CONNECT to llm.test:" + Port() + ": HTTP 403");
}

TEST_F(HttpProxyTest, UnreachableProxyIsAConnectError) {
  std::uint16_t port = UnusedPort();
  HttpClientOptions options;
  options.https_proxy = "127.0.0.1:" + std::to_string(port);  // no scheme: http:// assumed

  Result result = SendOne(Get("https://llm.test:" + Port() + "/"), options);

  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, HttpErrorKind::kConnect);
  EXPECT_EQ(result.error().message,
            "connect to proxy 127.0.0.1:" + std::to_string(port) + " failed: Connection refused");
}

TEST_F(HttpProxyTest, PlainHttpNeverUsesTheProxy) {
  ConnectProxy proxy;
  LoopbackServer plain;
  HttpClientOptions options;
  options.https_proxy = proxy.url();

  Result result = SendOne(Get(plain.base_url() + "/"), options);

  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(proxy.connections(), 0);
}

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(HttpProxyEnvironmentTest, ReadsUpperThenLowerCaseVariables) {
  ScopedEnv upper_proxy("HTTPS_PROXY", "http://proxy.corp:3128");
  ScopedEnv lower_proxy("https_proxy", "http://ignored:1");
  ScopedEnv upper_no("NO_PROXY", nullptr);
  ScopedEnv lower_no("no_proxy", ".internal,10.0.0.1");

  HttpClientOptions options = WithProxyFromEnvironment({});

  EXPECT_EQ(options.https_proxy, "http://proxy.corp:3128");
  EXPECT_EQ(options.no_proxy, ".internal,10.0.0.1");
}

TEST(HttpProxyEnvironmentTest, NothingSetMeansNoProxy) {
  ScopedEnv a("HTTPS_PROXY", nullptr);
  ScopedEnv b("https_proxy", nullptr);
  ScopedEnv c("NO_PROXY", nullptr);
  ScopedEnv d("no_proxy", nullptr);

  HttpClientOptions options = WithProxyFromEnvironment({});

  EXPECT_EQ(options.https_proxy, "");
  EXPECT_EQ(options.no_proxy, "");
}

}  // namespace
}  // namespace skillrunner::http
