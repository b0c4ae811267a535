#include "services/http/connection.h"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <sys/socket.h>

#include <boost/algorithm/string/predicate.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/connect.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cerrno>
#include <vector>

#include "services/http/http_error.h"
#include "services/http/proxy_config.h"
#include "services/http/proxy_tunnel.h"
#include "services/http/tls_context.h"

namespace skillrunner::http {
namespace {

namespace asio = boost::asio;
using boost::system::error_code;
using Endpoints = std::vector<Tcp::endpoint>;
using Opened = std::expected<std::shared_ptr<Connection>, HttpError>;

bool IsIpLiteral(const std::string& host) {
  error_code ec;
  asio::ip::make_address(host, ec);
  return !ec;
}

asio::awaitable<std::expected<Endpoints, HttpError>> Resolve(const ParsedUrl& where, const std::string& label) {
  error_code ec;
  asio::ip::address address = asio::ip::make_address(where.host, ec);
  if (!ec) co_return Endpoints{Tcp::endpoint(address, where.port)};
  // "localhost" is loopback by definition (RFC 6761 §6.3), whatever /etc/hosts
  // or DNS say (minimal containers have no /etc/hosts); like curl, never ask.
  if (boost::algorithm::iequals(where.host, "localhost") || boost::algorithm::iends_with(where.host, ".localhost")) {
    co_return Endpoints{Tcp::endpoint(asio::ip::address_v4::loopback(), where.port),
                        Tcp::endpoint(asio::ip::address_v6::loopback(), where.port)};
  }
  // getaddrinfo runs on Asio's resolver thread; it cannot be interrupted, so
  // a cancelled request waits for it (bounded by the system resolver).
  auto executor = co_await asio::this_coro::executor;
  Tcp::resolver resolver(executor);
  std::string service = std::to_string(where.port);
  auto [resolve_ec, results] =
      co_await resolver.async_resolve(where.host, service, asio::as_tuple(asio::use_awaitable));
  if (resolve_ec == asio::error::operation_aborted) co_return Cancelled();
  if (resolve_ec) {
    co_return Fail(HttpErrorKind::kConnect, "connect to " + label + " failed: " + resolve_ec.message());
  }
  Endpoints endpoints;
  for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  co_return endpoints;
}

asio::awaitable<std::expected<void, HttpError>> ConnectSocket(Tcp::socket& socket, const Endpoints& endpoints,
                                                              std::chrono::milliseconds timeout,
                                                              const std::string& label) {
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, timeout);
  auto connect = asio::async_connect(socket, endpoints, asio::deferred);
  auto expiry = timer.async_wait(asio::deferred);
  auto group = asio::experimental::make_parallel_group(std::move(connect), std::move(expiry));
  auto [order, connect_ec, endpoint, timer_ec] =
      co_await group.async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
  (void)endpoint;
  if (order[0] == 1 && !timer_ec) {
    co_return Fail(HttpErrorKind::kTimeout,
                   "connect to " + label + " timed out after " + std::to_string(timeout.count()) + " ms");
  }
  if (connect_ec == asio::error::operation_aborted) co_return Cancelled();
  if (connect_ec) {
    co_return Fail(HttpErrorKind::kConnect, "connect to " + label + " failed: " + connect_ec.message());
  }
  error_code ignored;
  socket.set_option(Tcp::no_delay(true), ignored);
  co_return std::expected<void, HttpError>{};
}

asio::awaitable<std::expected<void, HttpError>> Handshake(Connection& connection, const ParsedUrl& url,
                                                          const ConnectSettings& settings) {
  connection.WrapInTls(*settings.tls);
  TlsStream& tls = connection.tls();
  // SNI carries names only (RFC 6066). The name check is OpenSSL's own (the
  // same RFC 6125 matching as asio::ssl::host_name_verification), because a
  // mismatch then reads "hostname mismatch" instead of a bare verify failure.
  SSL* ssl = tls.native_handle();
  if (IsIpLiteral(url.host)) {
    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), url.host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, url.host.c_str());
    SSL_set1_host(ssl, url.host.c_str());
  }
  auto [ec] = co_await tls.async_handshake(asio::ssl::stream_base::client, asio::as_tuple(asio::use_awaitable));
  if (ec == asio::error::operation_aborted) co_return Cancelled();
  if (ec) {
    long verify_result = SSL_get_verify_result(tls.native_handle());
    co_return Fail(HttpErrorKind::kTls,
                   "TLS handshake with " + url.Authority() + " failed: " + DescribeTlsError(ec, verify_result));
  }
  co_return std::expected<void, HttpError>{};
}

// The io_context under the calling coroutine's executor (a strand's, say):
// the socket belongs there, so its completions come back on that context's
// thread and the pool gives it only to requests on the same context.
asio::any_io_executor HomeExecutor(const asio::any_io_executor& executor) {
  using IoExecutor = asio::io_context::executor_type;
  if (const auto* strand = executor.target<asio::strand<IoExecutor>>()) return strand->get_inner_executor();
  return executor;
}

}  // namespace

void Connection::Close() {
  error_code ignored;
  socket().shutdown(Tcp::socket::shutdown_both, ignored);
  socket().close(ignored);
}

bool Connection::LooksReusable() {
  if (!socket().is_open() || buffer_.size() != 0) return false;
  char byte = 0;
  ssize_t got = ::recv(socket().native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  // 0: the peer closed; > 0: unsolicited bytes (or a TLS close_notify).
  return got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
}

asio::awaitable<Opened> OpenConnection(const ParsedUrl& url, const ConnectSettings& settings) {
  if (url.https && !settings.tls) co_return Fail(HttpErrorKind::kTls, settings.tls_error);
  // Plain http:// never goes through the proxy: HTTPS_PROXY is for https
  // URLs, and an HTTP_PROXY (absolute-form requests) is out of scope.
  bool via_proxy = url.https && UsesProxy(url.host, settings.https_proxy, settings.no_proxy);
  if (via_proxy && !settings.proxy) co_return Fail(HttpErrorKind::kConnect, settings.proxy_error);
  const ParsedUrl& dial = via_proxy ? *settings.proxy : url;
  std::string label = (via_proxy ? "proxy " : "") + dial.Authority();

  const asio::any_io_executor caller = co_await asio::this_coro::executor;
  auto connection = std::make_shared<Connection>(HomeExecutor(caller));
  auto endpoints = co_await Resolve(dial, label);
  if (!endpoints) co_return std::unexpected(std::move(endpoints.error()));
  auto connected = co_await ConnectSocket(connection->socket(), *endpoints, settings.connect_timeout, label);
  if (!connected) co_return std::unexpected(std::move(connected.error()));
  if (via_proxy) {
    auto tunnel = co_await OpenTunnel(*connection, url, *settings.proxy);
    if (!tunnel) co_return std::unexpected(std::move(tunnel.error()));
  }
  if (url.https) {
    auto secured = co_await Handshake(*connection, url, settings);
    if (!secured) co_return std::unexpected(std::move(secured.error()));
  }
  co_return connection;
}

}  // namespace skillrunner::http
