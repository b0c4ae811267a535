#pragma once

// `--metrics-listen HOST:PORT`: GET /metrics in the Prometheus text format
// over plain HTTP/1.1 (Boost.Beast). Anything else is 404.

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <memory>

#include "runner/server/server_metrics.h"

namespace skillrunner::server {

class MetricsEndpoint : public std::enable_shared_from_this<MetricsEndpoint> {
 public:
  MetricsEndpoint(boost::asio::io_context& io, boost::asio::ip::tcp::acceptor acceptor, ServerMetrics& metrics);
  void Start();
  void Close();  // thread-safe
  unsigned short port() const { return port_; }

 private:
  boost::asio::io_context& io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  ServerMetrics& metrics_;
  unsigned short port_;
};

}  // namespace skillrunner::server
