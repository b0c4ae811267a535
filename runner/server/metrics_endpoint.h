#pragma once

// `--metrics-listen HOST:PORT`: HTTP/1.1 (Boost.Beast; HTTPS with the server's TLS), no token:
//   GET /metrics  the Prometheus text format;
//   GET /healthz  200 while the process serves (liveness);
//   GET /readyz   200, or 503 while the server drains or serves no skill
//                 (readiness).
// The probes answer the JSON body of Probe. Anything else is 404.

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/json/object.hpp>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "runner/net/tls_server.h"
#include "runner/server/server_metrics.h"

namespace skillrunner::server {

// A probe's answer: whether the server takes new work, and the body
// {status, state, failed: [{file, line, col, message}]}.
struct Probe {
  bool ready = false;
  boost::json::object body;
};

class MetricsEndpoint : public std::enable_shared_from_this<MetricsEndpoint> {
 public:
  // `probe` is called for /healthz and /readyz, from any io thread.
  // With `tls`, every scrape connection handshakes with its current certificate first.
  MetricsEndpoint(boost::asio::io_context& io, boost::asio::ip::tcp::acceptor acceptor, ServerMetrics& metrics,
                  std::function<Probe()> probe, std::shared_ptr<net::TlsServer> tls = nullptr);
  // Starts the accept loop; `on_failure` gets the exception that ends it, if
  // one does (the server logs it and shuts down).
  void Start(std::function<void(std::exception_ptr)> on_failure);
  // Stops accepting and closes every open scrape connection (a keep-alive
  // scraper must not keep a stopping server alive). Thread-safe.
  void Close();
  unsigned short port() const { return port_; }

  struct Session;  // one scrape connection (metrics_endpoint.cpp)

 private:
  void Serve(std::shared_ptr<Session> session);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  ServerMetrics& metrics_;
  std::function<Probe()> probe_;
  std::shared_ptr<net::TlsServer> tls_;
  unsigned short port_;
  std::atomic<bool> closing_{false};
  std::mutex sessions_mutex_;
  std::map<std::uint64_t, std::weak_ptr<Session>> sessions_;
  std::uint64_t next_session_ = 0;
};

}  // namespace skillrunner::server
