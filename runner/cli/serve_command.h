#pragma once

#include <CLI/App.hpp>
#include <functional>

#include "runner/cli/environment.h"
#include "runner/server/server_options.h"

namespace skillrunner::cli {

struct ServeOptions {
  server::ServerOptions server;
  unsigned threads = 0;  // 0: one per core
  std::int64_t idle_timeout_ms = 0;
  std::int64_t drain_timeout_ms = 0;
  bool allow_broken = false;  // serve what loaded when skills or rubrics do not
  std::string mcp_listen;     // HOST:PORT of MCP's Streamable HTTP at /mcp; empty: none
  bool mcp_stdio = false;     // `skillrunner mcp`: one MCP session on stdin/stdout, no listener needed
};

struct CallOptions {
  std::string method;
  std::string params;  // JSON text; empty: none
  std::string socket;
  std::string connect;  // HOST:PORT
  std::int64_t timeout_ms = 0;
  // design.md §11.8: TLS to a server with --tls-cert; the server's certificate is checked against
  // `ca_file` (else the system's CAs) and the host; `cert_file` and `key_file` for mutual TLS.
  bool tls = false;
  std::string ca_file, cert_file, key_file;
};

struct ProbeOptions {
  std::string url;  // http://127.0.0.1:9464/readyz
  std::int64_t timeout_ms = 5000;
  std::string ca_file;    // https:// URLs: CAs to check the certificate against, besides the system's
  std::string cert_file;  // a client certificate for a listener that asks for one (mutual TLS)
  std::string key_file;
};

// Adds `serve`, `call` and `probe` to the command line; `run` is set to the chosen
// subcommand's action when it was parsed.
void AddServeCommands(CLI::App& app, const CommonOptions& common, std::function<int()>& run);

// `skillrunner serve`: runs until SIGTERM/SIGINT, then drains. Exit 0 after a
// clean stop, 2 when it cannot start (listener, config, or without
// --allow-broken any skill or rubric that does not load: every problem is
// printed first).
int Serve(const CommonOptions& common, ServeOptions options);

// Adds `mcp`: the tree as MCP tools over stdin/stdout (Serve with mcp_stdio).
void AddMcpCommand(CLI::App& app, const CommonOptions& common, std::function<int()>& run);

// `skillrunner call METHOD [PARAMS]`: one request, the answer on stdout.
// Exit 0 for a result, the design.md §6.1 status for an application error, 2 for
// protocol errors, 3 when the server cannot be reached or does not answer.
int Call(const CallOptions& options);

// `skillrunner probe URL`: one GET; exit 0 on a 2xx answer (one line on
// stdout), 1 on anything else (one line on stderr naming the status or why
// there was none). A health check for images without curl.
int Probe(const ProbeOptions& options);

}  // namespace skillrunner::cli
