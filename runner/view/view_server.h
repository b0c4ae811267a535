#pragma once

// `skillrunner view`'s HTTP/1.1 server (Boost.Beast, one thread): the pages,
// the assets and the JSON API of view_api.h, over a history opened read-only.
// Every answer carries Content-Security-Policy default-src 'self'.
//
// Who may look follows the one identity rule (net/peer.h): with a token or
// client certificates, every request needs one, from loopback too: a
// verified client certificate (a tenant's, or one of tls.admin_subjects), an
// `Authorization: Bearer TOKEN` header, or the HttpOnly cookie that a
// `?token=TOKEN` link sets (answered with a redirect to the same address
// without it, so the token does not stay in the address bar); else 401, or
// 403 for a certificate the rule refuses. With neither (loopback only), a
// request whose Host is not a loopback name is refused (403), so a web page
// elsewhere cannot read the history through a rebound DNS name. Each request
// is logged with its caller.

#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "runner/eval/history/history_reader.h"
#include "runner/net/peer.h"
#include "runner/net/tls_server.h"
#include "services/common/error.h"

namespace skillrunner::view {

struct ServerOptions {
  boost::asio::ip::tcp::endpoint listen;
  // The viewer's token is the admin's; tenants and admin subjects come from the config. Open (no
  // token, no tenant) only without client certificates, on loopback.
  net::IdentityRule identity;
  // design.md §11.8: HTTPS (--tls-cert, --tls-key, --tls-client-ca), re-read on SIGHUP and when the
  // files change; empty: plain HTTP.
  net::TlsFiles tls = {};
};

class ViewServer {
 public:
  // Binds the address (CONFIG_INVALID naming it when it cannot).
  static Result<std::unique_ptr<ViewServer>> Bind(const ServerOptions& options,
                                                  std::unique_ptr<eval::HistoryReader> history);
  ~ViewServer();
  ViewServer(const ViewServer&) = delete;
  ViewServer& operator=(const ViewServer&) = delete;

  unsigned short port() const;
  bool tls() const;
  // Serves until SIGINT or SIGTERM; `on_listening` is called once, when requests are taken.
  Result<void> Run(const std::function<void()>& on_listening);

  struct Impl;

 private:
  explicit ViewServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillrunner::view
