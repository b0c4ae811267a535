// `skillrunner probe URL`: a health check for images without curl (Docker's
// HEALTHCHECK, an exec probe): one GET, exit 0 on a 2xx answer; https:// for a server with --tls-cert.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/use_future.hpp>
#include <cstdio>

#include "runner/cli/serve_command.h"
#include "services/http/http_client.h"

namespace skillrunner::cli {
namespace asio = boost::asio;

namespace {

constexpr int kHealthy = 0;
constexpr int kUnhealthy = 1;  // Docker reserves 2: every failure is 1

asio::awaitable<std::expected<http::HttpResponse, http::HttpError>> Get(asio::any_io_executor executor,
                                                                        http::HttpRequest request,
                                                                        const ProbeOptions& probe) {
  http::HttpClientOptions options;  // no proxy: a probe asks the process beside it
  options.connect_timeout = request.timeout;
  options.ca_file = probe.ca_file;
  options.client_cert_file = probe.cert_file;
  options.client_key_file = probe.key_file;
  auto client = http::MakeHttpClient(executor, options);
  co_return co_await client->Send(std::move(request));
}

}  // namespace

int Probe(const ProbeOptions& options) {
  http::HttpRequest request;
  request.method = "GET";
  request.url = options.url;
  request.timeout = std::chrono::milliseconds(options.timeout_ms);
  asio::io_context io;
  auto answer = asio::co_spawn(io, Get(io.get_executor(), std::move(request), options), asio::use_future);
  io.run();
  auto response = answer.get();
  if (!response) {
    std::fprintf(stderr, "skillrunner probe: %s: %s\n", options.url.c_str(), response.error().message.c_str());
    return kUnhealthy;
  }
  const bool healthy = response->status >= 200 && response->status < 300;
  std::fprintf(healthy ? stdout : stderr, "%s%s: HTTP %d\n", healthy ? "" : "skillrunner probe: ", options.url.c_str(),
               response->status);
  return healthy ? kHealthy : kUnhealthy;
}

}  // namespace skillrunner::cli
