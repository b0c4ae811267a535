#pragma once

// The JSON-lines socket server (design.md §6): newline-delimited JSON-RPC 2.0 on
// a Unix socket and/or TCP, many requests in flight per connection, answers
// written whole as they complete, bounded everywhere, graceful drain.

#include <boost/asio/io_context.hpp>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runner/server/front_door.h"
#include "runner/server/server_metrics.h"
#include "runner/server/server_options.h"
#include "runner/server/skill_host.h"
#include "services/common/error.h"

namespace skillrunner::server {

class Server {
 public:
  // `io` may be run by any number of threads; `host` must outlive the server.
  // Connections (and what they run) are spread over `workers` (none: `io`
  // alone); give one io_context per thread, each run by that thread only, so
  // that an invocation never hops between threads. They must outlive the
  // server, and be kept running (a work guard) until OnStopped.
  Server(boost::asio::io_context& io, ServerOptions options, SkillHost& host,
         std::vector<boost::asio::io_context*> workers = {});
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // design.md §11.8: the TLS of every TCP listener (options.tls), loaded once (Start does it too);
  // null without TLS. Front doors that listen on TCP share it, reloads included.
  Result<std::shared_ptr<net::TlsServer>> LoadTls();
  // Opens every listener. Fails (nothing left open) with a message naming the
  // listener: CONFIG_INVALID for options that cannot work (nothing to listen
  // on, a bad address, a non-loopback address without --allow-remote or
  // without a token), INTERNAL for what the system refused (address in use,
  // a live server on the socket).
  Result<void> Start();

  // Ports actually bound, in the order of options.listen (useful with port 0).
  std::vector<unsigned short> tcp_ports() const;
  unsigned short metrics_port() const;

  // SIGTERM/SIGINT → Shutdown(); SIGHUP → reload. Call before Start, while the io_context does not
  // run yet: the handlers are installed at once, so a signal sent as soon as the socket listens is
  // handled (queued until the loop runs), never the default action (SIGHUP would end the process).
  void HandleSignals();

  // Stops accepting, lets in-flight invocations finish within the drain
  // timeout, cancels the rest (they are answered CANCELLED), flushes, closes
  // every connection and removes the socket file. When it is done nothing is
  // left on `io`, so io.run() returns. Thread-safe; idempotent.
  void Shutdown();

  // Called once when the drain has finished (before io.run() returns).
  void OnStopped(std::function<void()> callback);

  ServerMetrics& metrics();

  // Another way in (MCP): opened by Start, told of reloads, drained and
  // cancelled with the connections. Call before Start. A server with one
  // needs no listener of its own.
  void AddFrontDoor(std::shared_ptr<FrontDoor> door);

  struct State;

 private:
  std::shared_ptr<State> state_;
};

}  // namespace skillrunner::server
