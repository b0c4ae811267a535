#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "runner/net/peer.h"
#include "runner/net/tls_server.h"
#include "services/common/clock.h"
#include "services/telemetry/otlp_exporter.h"

namespace skillrunner::state {
class SharedState;
class TenantQuotas;
}  // namespace skillrunner::state

namespace skillrunner::server {

// Limits of the socket server; all are reported by `health`.
struct ServerLimits {
  std::size_t max_line_bytes = 1 << 20;
  std::size_t max_depth = 64;
  std::size_t max_in_flight_per_connection = 1024;
  std::size_t max_in_flight_total = 16384;
  std::size_t max_connections = 4096;  // beyond: new connections are closed at once
  std::size_t max_batch = 1000;        // requests in one batch line
  // A connection with nothing in flight and nothing sent for this long is
  // closed; so is one whose answers have not been read for this long.
  std::chrono::milliseconds idle_timeout{300000};
  // Answers queued for a client that does not read; beyond it the connection
  // is closed and its invocations cancelled.
  std::size_t max_write_queue_bytes = 16 << 20;
  // After SIGTERM: how long in-flight invocations may finish before they are cancelled.
  std::chrono::milliseconds drain_timeout{30000};
};

struct ServerOptions {
  std::string socket_path;          // Unix socket; empty: none
  std::string socket_group;         // chgrp the socket and make it 0660
  std::vector<std::string> listen;  // TCP HOST:PORT listeners
  bool allow_remote = false;        // permit non-loopback TCP addresses (token required)
  // Who a caller is (design.md §12.1): SKILLRUNNER_TOKEN, the tenants (their tokens and certificate
  // subjects; their invocations count against `quotas`) and tls.admin_subjects. With no token and no
  // tenant, TCP needs no auth (loopback only).
  net::IdentityRule identity;
  state::TenantQuotas* quotas = nullptr;  // must outlive the server; null: no tenants
  // Shared through Redis (health says whether it is reachable); null: none.
  std::shared_ptr<state::SharedState> shared_state;
  // The trace exporter (health and Prometheus report its drops); null: none.
  std::shared_ptr<telemetry::OtlpExporter> tracing;
  std::string metrics_listen;  // HOST:PORT of the Prometheus endpoint; empty: none
  // --metrics-client-ca: the CAs the metrics listener's clients must chain to; "none": no client
  // certificate asked (probes, Prometheus); empty: tls.client_ca_file, as every listener.
  std::string metrics_client_ca;
  std::string mcp_listen;  // HOST:PORT of MCP over HTTP (runner/mcp's door), for the certificate's metrics
  // design.md §11.8: TLS for every TCP listener (--tls-cert, --tls-key, --tls-client-ca); empty: plain.
  net::TlsFiles tls;
  ServerLimits limits;
  // Idle and write-progress times, uptime, invocation durations; must outlive
  // the server.
  Clock* clock = &RealClock();
};

}  // namespace skillrunner::server
