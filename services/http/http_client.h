#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <expected>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "services/common/clock.h"

namespace skillrunner::http {

struct HttpRequest {
  std::string method = "POST";
  std::string url;  // absolute: http://host:port/path or https://...
  // Sent as given (Host, Content-Length, Connection are set by the client).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;
  // Bound on the whole exchange (waiting for a connection, connect, TLS,
  // write, read). The caller's own cancellation also ends it.
  std::chrono::milliseconds timeout{600'000};
  // Streaming (server-sent events): when set, the body of a 2xx answer is
  // handed over piece by piece as it arrives (and still collected in `body`);
  // `false` stops reading it: the connection is closed and the response comes
  // back with what arrived and `stopped` set. Other answers are read whole.
  std::function<bool(std::string_view)> on_body;
};

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  bool stopped = false;  // HttpRequest::on_body asked to stop before the body ended

  // The first header with this name (case-insensitive), if any.
  std::optional<std::string_view> Header(std::string_view name) const;
};

enum class HttpErrorKind {
  kInvalidUrl,  // not an http(s) URL we can reach
  kConnect,     // DNS, refused, unreachable, proxy refused CONNECT
  kTls,         // handshake or certificate verification failed
  kTimeout,     // the request's timeout passed
  kDropped,     // the connection closed before a whole response arrived
  kProtocol,    // the peer spoke something that is not HTTP/1.1
  kTooLarge,    // the response exceeded max_response_bytes
  kCancelled,   // the caller cancelled
};

struct HttpError {
  HttpErrorKind kind = HttpErrorKind::kConnect;
  std::string message;  // never contains header values (keys live there)
};

std::string_view HttpErrorKindName(HttpErrorKind kind);

struct HttpClientOptions {
  std::size_t max_connections_per_host = 64;  // beyond it requests queue, FIFO
  std::chrono::milliseconds connect_timeout{5'000};
  std::chrono::milliseconds idle_timeout{60'000};  // pooled connections close after this
  const Clock* clock = &RealClock();               // idle times; must outlive the client
  std::size_t max_response_bytes = 64 * 1024 * 1024;
  bool tls_verify = true;  // off only when a user says so explicitly
  std::string ca_file;     // extra CA bundle (PEM), added to the system store
  // A client certificate (PEM, then its chain) and its key, for a server that asks for one (mutual
  // TLS); empty: none.
  std::string client_cert_file;
  std::string client_key_file;
  // Proxy for https:// URLs (CONNECT), normally from HTTPS_PROXY / NO_PROXY.
  std::string https_proxy;  // http://host:port; empty = none
  std::string no_proxy;     // comma list of hosts/domains/IPs; "*" = all
};

// HTTPS_PROXY/https_proxy and NO_PROXY/no_proxy from the environment.
HttpClientOptions WithProxyFromEnvironment(HttpClientOptions options);

// One asynchronous HTTP/1.1 client (Beast + OpenSSL) with keep-alive pools per
// (scheme, host, port). Send may be called concurrently from coroutines on any
// thread, each on an executor that runs one handler at a time (a strand, or
// an io_context run by one thread): the request runs there, on the caller's
// executor, without a hop. Cancellation (per-operation cancellation slot of
// the awaiting coroutine) aborts the request and closes its connection.
class HttpClient {
 public:
  virtual ~HttpClient() = default;
  virtual boost::asio::awaitable<std::expected<HttpResponse, HttpError>> Send(HttpRequest request) = 0;
};

// The client must be destroyed before its io_context.
std::shared_ptr<HttpClient> MakeHttpClient(boost::asio::any_io_executor executor, HttpClientOptions options);
// The same with default options. An overload, not a default argument: inside
// a coroutine, g++ 12 moves a defaulted (or `{}`) class-type argument
// bitwise, and the strings in it then free a pointer into the coroutine
// frame. (So pass a named HttpClientOptions from coroutines, never `{}`.)
std::shared_ptr<HttpClient> MakeHttpClient(boost::asio::any_io_executor executor);

}  // namespace skillrunner::http
