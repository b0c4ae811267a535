#include "runner/server/metrics_endpoint.h"

#include <boost/json/serialize.hpp>

namespace skillrunner::server {
namespace json = boost::json;

namespace {

// What one request gets: /metrics, the probes, or 404.
net::HttpResponse Route(const net::HttpRequest& request, ServerMetrics& metrics, const std::function<Probe()>& probe) {
  const std::string_view path = request.Path();
  const bool get = request.method == "GET";
  if (get && path == "/metrics") {
    return net::HttpResponse{200, "text/plain; version=0.0.4; charset=utf-8", metrics.Prometheus(), {}};
  }
  if (get && (path == "/healthz" || path == "/readyz")) {
    Probe answer = probe();
    const bool fine = path == "/healthz" || answer.ready;
    return net::HttpResponse::Json(fine ? 200 : 503, json::serialize(answer.body) + "\n");
  }
  return net::HttpResponse::Text(404, "only GET /metrics, /healthz and /readyz are served here\n");
}

}  // namespace

net::HttpHandler MetricsRoutes(ServerMetrics& metrics, std::function<Probe()> probe) {
  return net::AnswerAtOnce(
      [&metrics, probe = std::move(probe)](const net::HttpRequest& request, const net::TransportPeer&) {
        return Route(request, metrics, probe);
      });
}

net::HttpServerOptions MetricsHttpOptions(std::shared_ptr<net::TlsServer> tls) {
  net::HttpServerOptions options;
  options.name = "metrics";
  options.tls = std::move(tls);
  options.header_limit = 8 * 1024;
  options.body_limit = 0;
  options.idle_timeout = std::chrono::seconds(10);
  options.write_timeout = std::chrono::seconds(10);
  return options;
}

}  // namespace skillrunner::server
