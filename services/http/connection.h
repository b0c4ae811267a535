#pragma once

// Internal to services/http (includes Asio and Beast): never include it from
// a header outside services/http.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <chrono>
#include <expected>
#include <memory>
#include <optional>
#include <string>

#include "services/common/clock.h"
#include "services/http/http_client.h"
#include "services/http/http_url.h"

namespace skillrunner::http {

using Tcp = boost::asio::ip::tcp;
using TlsStream = boost::asio::ssl::stream<Tcp::socket>;

// One HTTP/1.1 connection: a TCP socket, or TLS over one. Used by one request
// at a time (the pool hands it over), so it needs no locking.
class Connection {
 public:
  explicit Connection(boost::asio::any_io_executor executor) : socket_(std::move(executor)) {}
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // The TCP socket under everything (connect, CONNECT tunnel, options).
  Tcp::socket& socket() { return tls_ ? tls_->next_layer() : socket_; }
  bool is_tls() const { return tls_ != nullptr; }
  TlsStream& tls() { return *tls_; }
  // Bytes read past the end of the previous response (normally none).
  boost::beast::flat_buffer& buffer() { return buffer_; }

  // Moves the TCP socket under a TLS stream (before the handshake).
  void WrapInTls(boost::asio::ssl::context& context) {
    tls_ = std::make_unique<TlsStream>(std::move(socket_), context);
  }
  // Closes the socket at once (no TLS close_notify: nobody waits for it).
  void Close();
  // False when the peer has closed the connection or sent unsolicited bytes
  // while it sat in the pool. Never blocks.
  bool LooksReusable();

  Clock::TimePoint idle_since{};

 private:
  Tcp::socket socket_;
  std::unique_ptr<TlsStream> tls_;
  boost::beast::flat_buffer buffer_;
};

// How to open connections; fixed for a client's lifetime.
struct ConnectSettings {
  std::chrono::milliseconds connect_timeout{5'000};
  std::shared_ptr<boost::asio::ssl::context> tls;  // null: tls_error says why
  std::string tls_error;
  bool tls_verify = true;
  std::string https_proxy;         // as configured; empty = no proxy
  std::optional<ParsedUrl> proxy;  // https_proxy, parsed
  std::string proxy_error;         // https_proxy set but unusable
  std::string no_proxy;
};

// Resolves, connects (bounded by connect_timeout), tunnels through the proxy
// when the settings ask for it, and does the TLS handshake for https URLs.
// Runs on the calling coroutine's executor, and the socket belongs to that
// executor's io_context; per-operation cancellation ends it.
boost::asio::awaitable<std::expected<std::shared_ptr<Connection>, HttpError>> OpenConnection(
    const ParsedUrl& url, const ConnectSettings& settings);

}  // namespace skillrunner::http
