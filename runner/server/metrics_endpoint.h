#pragma once

// `--metrics-listen HOST:PORT`: GET /metrics in the Prometheus text format
// over plain HTTP/1.1 (Boost.Beast). Anything else is 404.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <atomic>
#include <map>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>

#include "runner/server/server_metrics.h"

namespace skillrunner::server {

class MetricsEndpoint : public std::enable_shared_from_this<MetricsEndpoint> {
 public:
  MetricsEndpoint(boost::asio::io_context& io, boost::asio::ip::tcp::acceptor acceptor, ServerMetrics& metrics);
  // Starts the accept loop; `on_failure` gets the exception that ends it, if
  // one does (the server logs it and shuts down).
  void Start(std::function<void(std::exception_ptr)> on_failure);
  // Stops accepting and closes every open scrape connection (a keep-alive
  // scraper must not keep a stopping server alive). Thread-safe.
  void Close();
  unsigned short port() const { return port_; }

 private:
  struct Session;
  void Serve(std::shared_ptr<Session> session);

  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  ServerMetrics& metrics_;
  unsigned short port_;
  std::atomic<bool> closing_{false};
  std::mutex sessions_mutex_;
  std::map<std::uint64_t, std::weak_ptr<Session>> sessions_;
  std::uint64_t next_session_ = 0;
};

}  // namespace skillrunner::server
