#pragma once

// Helpers for the HTTP client tests: requests, a free port, and a client on
// a fresh io_context that sends requests one after another.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/this_coro.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <expected>
#include <string>
#include <utility>
#include <vector>

#include "services/http/http_client.h"
#include "tests/support/run_awaitable.h"

namespace skillrunner::http::http_testing {

namespace asio = boost::asio;
using Result = std::expected<HttpResponse, HttpError>;
using Clock = std::chrono::steady_clock;

inline HttpRequest Get(std::string url) {
  HttpRequest request;
  request.method = "GET";
  request.url = std::move(url);
  return request;
}

inline HttpRequest Post(std::string url, std::string body) {
  HttpRequest request;
  request.url = std::move(url);
  request.headers = {{"Content-Type", "application/json"}};
  request.body = std::move(body);
  return request;
}

// A port nobody listens on: bound, then released.
inline std::uint16_t UnusedPort() {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::make_address("127.0.0.1"), 0});
  std::uint16_t port = acceptor.local_endpoint().port();
  acceptor.close();
  return port;
}

inline asio::awaitable<std::vector<Result>> SendAll(HttpClientOptions options, std::vector<HttpRequest> requests) {
  auto executor = co_await asio::this_coro::executor;
  auto client = MakeHttpClient(executor, std::move(options));
  std::vector<Result> results;
  for (HttpRequest& request : requests) {
    Result result = co_await client->Send(request);
    results.push_back(std::move(result));
  }
  co_return results;
}

// One client, the requests sent in order, on a fresh io_context.
inline std::vector<Result> SendSequentially(HttpClientOptions options, std::vector<HttpRequest> requests) {
  return test_support::RunAwaitable(SendAll(std::move(options), std::move(requests)));
}

inline Result SendOne(HttpRequest request, HttpClientOptions options = {}) {
  return SendSequentially(std::move(options), {std::move(request)}).front();
}

// Completion handler for co_spawn in tests: a coroutine that threw fails loudly.
inline void RethrowIfFailed(std::exception_ptr error) {
  if (error) std::rethrow_exception(error);
}

inline long long MillisSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

}  // namespace skillrunner::http::http_testing
