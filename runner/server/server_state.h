#pragma once

// Internals shared by the server's listeners and connections (not a public
// header: only runner/server/*.cpp include it).

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "runner/net/http_server.h"
#include "runner/net/listener.h"
#include "runner/server/metrics_endpoint.h"
#include "runner/server/server.h"

namespace skillrunner::server {

class Connection;

struct Server::State : std::enable_shared_from_this<Server::State> {
  using Strand = boost::asio::strand<boost::asio::io_context::executor_type>;

  State(boost::asio::io_context& io, ServerOptions options, SkillHost& host,
        std::vector<boost::asio::io_context*> workers);

  boost::asio::io_context& io;
  // Where connections live (round robin): each connection, its invocations
  // and their HTTP requests stay on one of them. Never empty.
  const std::vector<boost::asio::io_context*> workers;
  std::atomic<std::size_t> next_worker{0};
  boost::asio::io_context& NextWorker();
  ServerOptions options;
  SkillHost& host;
  ServerMetrics metrics;
  Clock& clock;
  const Clock::TimePoint started;
  std::atomic<bool> draining{false};
  // When the drain gives up on what is still in flight (set before `draining`).
  std::atomic<Clock::TimePoint::rep> drain_ends{0};
  // Milliseconds of the drain left (0 when over or not draining).
  std::int64_t DrainLeftMs() const;
  std::atomic<std::uint64_t> reloads{0};  // reloads that swapped the tree in service
  // The last reload's {ok, at, failed}; null before the first. Guarded by last_reload_mutex.
  std::mutex last_reload_mutex;
  boost::json::value last_reload;
  boost::json::value LastReload();
  // design.md §11.8: every TCP listener's TLS (null: plain), loaded by Start, re-read by Reload and
  // when its files change.
  std::shared_ptr<net::TlsServer> tls;
  std::shared_ptr<net::TlsServer> metrics_tls;  // --metrics-client-ca: the metrics listener's own; else null
  // The TLS files again when they changed: a new pair serves new connections; a broken one is logged,
  // in last_reload, and leaves the old one serving. Null when there was nothing to do.
  std::optional<boost::json::object> ReloadTls(bool force);
  // Looks at the TLS files every few seconds (a Kubernetes Secret that cert-manager renewed); on `strand`.
  std::optional<boost::asio::steady_timer> tls_watch;
  std::optional<Clock::TimePoint> expiry_warned;  // when the certificate's coming expiry was last logged
  // Prometheus lines of what is served: the tree's failed files, the certificate's expiry per listener.
  std::string ServingMetrics();
  // design.md §12.1: a warning 14 days before the certificate expires, then daily.
  void WarnOfExpiry();

  // Everything below is touched only on `strand`.
  Strand strand;
  std::shared_ptr<net::Listener> unix_listener;               // --socket
  std::vector<std::shared_ptr<net::Listener>> tcp_listeners;  // --listen, in order
  std::shared_ptr<net::HttpServer> metrics_endpoint;          // --metrics-listen
  std::vector<std::shared_ptr<FrontDoor>> front_doors;
  std::size_t front_doors_busy = 0;  // draining, with calls still in flight
  std::optional<boost::asio::signal_set> signals;
  boost::asio::steady_timer drain_timer;
  std::function<void()> on_stopped;
  bool stopped = false;

  // Connections register here so that a drain reaches them. Guarded by mutex.
  std::mutex connections_mutex;
  std::map<std::uint64_t, std::weak_ptr<Connection>> connections;
  std::uint64_t next_connection_id = 0;

  void AddConnection(const std::shared_ptr<Connection>& connection, std::uint64_t id);
  void RemoveConnection(std::uint64_t id);
  std::vector<std::shared_ptr<Connection>> LiveConnections();

  // Runs one reload and logs its outcome.
  SkillHost::ReloadReport Reload();
  // The health method's answer.
  boost::json::object Health();
  // What /healthz and /readyz answer. Thread-safe.
  Probe Readiness();
  // ok | degraded (a tree served without its `failed` files) | draining.
  std::string_view Status(const boost::json::array& failed) const;

  void BeginShutdown();  // on strand
  void CancelEverything(const std::string& reason);
  void DrainFrontDoors();  // on strand
  void FinishIfDrained();  // on strand
};

// Accept loops (listeners.cpp).
void StartAccepting(const std::shared_ptr<Server::State>& state);

// The completion handler of the server's long-lived loops (accepting,
// signals): a loop that ends by an exception logs it and shuts the server down
// cleanly (drain, socket removed) instead of leaving it deaf.
std::function<void(std::exception_ptr)> StopServerIfLoopFails(std::shared_ptr<Server::State> state, std::string loop);

}  // namespace skillrunner::server
