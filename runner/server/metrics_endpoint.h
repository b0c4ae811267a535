#pragma once

// `--metrics-listen HOST:PORT`: the routes of the metrics listener (an
// net::HttpServer; HTTPS with the server's TLS, or its own client CAs), no token:
//   GET /metrics  the Prometheus text format;
//   GET /healthz  200 while the process serves (liveness);
//   GET /readyz   200, or 503 while the server drains or serves no skill
//                 (readiness).
// The probes answer the JSON body of Probe. Anything else is 404.

#include <boost/json/object.hpp>
#include <functional>

#include "runner/net/http_server.h"
#include "runner/server/server_metrics.h"

namespace skillrunner::server {

// A probe's answer: whether the server takes new work, and the body
// {status, state, failed: [{file, line, col, message}]}.
struct Probe {
  bool ready = false;
  boost::json::object body;
};

// `probe` is called for /healthz and /readyz, from any io thread.
net::HttpHandler MetricsRoutes(ServerMetrics& metrics, std::function<Probe()> probe);

// The metrics listener's HTTP options: small requests, short deadlines.
net::HttpServerOptions MetricsHttpOptions(std::shared_ptr<net::TlsServer> tls);

}  // namespace skillrunner::server
