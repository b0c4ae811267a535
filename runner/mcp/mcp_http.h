#pragma once

// `serve --mcp-listen HOST:PORT`: MCP's Streamable HTTP transport at /mcp
// (design.md §11.4, docs/mcp.md), HTTP/1.1 through Boost.Beast.
//   POST   one JSON-RPC message. A request is answered with application/json,
//          or as an SSE stream when it is a tools/call with a progressToken
//          (its progress notifications, then its answer); a notification gets
//          202. initialize opens a session and names it in Mcp-Session-Id,
//          which every later request carries (400 without, 404 unknown).
//   GET    the session's SSE stream of notifications/tools/list_changed.
//   DELETE ends the session.
// A token (the socket's SKILLRUNNER_TOKEN or a tenant's) comes as
// `Authorization: Bearer`; without one configured only loopback addresses
// may listen. A request whose Origin is not a loopback one is refused 403 (a
// browser page must not reach a local server), as is an MCP-Protocol-Version
// this server does not speak (400).

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runner/mcp/mcp_session.h"
#include "runner/server/front_door.h"
#include "runner/server/server_options.h"
#include "services/common/error.h"

namespace skillrunner::mcp {

struct HttpOptions {
  SessionOptions session;      // the caller is set per request, from its token
  net::IdentityRule identity;  // who a caller is (design.md §12.1); with no token and no tenant, no token is asked
  bool allow_remote = false;
  std::size_t max_body_bytes = 1 << 20;
  std::size_t max_depth = 64;
  // Sessions at once; beyond, the one unused the longest (nothing in flight, no stream) ends, and
  // with none such initialize is refused 503. An idle session unused for an hour ends anyway.
  std::size_t max_sessions = 4096;
  std::chrono::milliseconds idle_timeout{300000};  // a keep-alive connection with no request
  // design.md §11.8: HTTPS with the server's certificate (the one serve reloads); null: plain HTTP.
  std::shared_ptr<net::TlsServer> tls;
};

class HttpDoor final : public server::FrontDoor, public std::enable_shared_from_this<HttpDoor> {
 public:
  // Listens on `address`; connections go round robin over `workers` (never
  // empty). CONFIG_INVALID for a bad or non-loopback address without
  // allow_remote and a token; INTERNAL when the system refuses the port.
  static Result<std::shared_ptr<HttpDoor>> Listen(std::vector<boost::asio::io_context*> workers,
                                                  std::string_view address, HttpOptions options);
  ~HttpDoor() override;
  unsigned short port() const;

  void Open() override;
  void Reloaded() override;
  void Drain(std::function<void()> on_idle) override;
  void CancelAll(const std::string& reason) override;
  void Close() override;

  struct State;

 private:
  explicit HttpDoor(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace skillrunner::mcp
