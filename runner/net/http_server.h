#pragma once

// The HTTP/1.1 server every HTTP door runs on (design.md §12.1): serve's
// metrics listener, /mcp and `view`. It takes connections from a Listener,
// handshakes TLS with the door's TlsServer (plain text on a TLS port gets the
// plain answer of plain_text.h), tells who the connection is by the door's
// identity rule, reads each request within the header and body limits and the
// idle deadline, and hands it to the door's handler, which answers it whole
// or as a stream of chunks (server-sent events). Every answer carries the
// door's headers (security headers, Server). Close stops accepting and closes
// the connections that wait for a request; one in an exchange ends after it.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/net/peer.h"
#include "runner/net/tls_server.h"

namespace skillrunner::net {

class Listener;

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: path and query
  unsigned version = 11;
  bool keep_alive = true;
  HttpHeaders headers;
  std::string body;
  // The first header named `name` (case-insensitive); "" when there is none.
  std::string_view Header(std::string_view name) const;
  bool Has(std::string_view name) const;
  std::string_view Path() const;  // the target without its query
};

struct HttpResponse {
  int status = 200;
  std::string content_type;  // none when empty
  std::string body;
  HttpHeaders headers;
  static HttpResponse Text(int status, std::string body);  // text/plain; charset=utf-8
  static HttpResponse Json(int status, std::string body);  // application/json
};

// One request on its connection's strand: the handler answers it once, whole or as a stream.
class HttpExchange {
 public:
  virtual ~HttpExchange() = default;
  virtual const HttpRequest& request() const = 0;
  // Who the connection is by its transport (a verified client certificate), decided at the handshake.
  virtual const TransportPeer& peer() const = 0;
  virtual const std::string& remote() const = 0;  // "tcp:ADDRESS:PORT"
  virtual bool tls() const = 0;
  virtual boost::asio::any_io_executor executor() const = 0;
  // The whole answer. `response` is the caller's variable (GCC 12 destroyed temporaries handed
  // to a coroutine twice). false: the connection is over.
  virtual boost::asio::awaitable<bool> Answer(HttpResponse& response) = 0;
  // A chunked answer: its head, each chunk (`text` outlives the write), then the end.
  virtual boost::asio::awaitable<bool> StartChunks(HttpResponse& head) = 0;
  virtual boost::asio::awaitable<bool> Chunk(std::string_view text) = 0;
  virtual boost::asio::awaitable<bool> EndChunks() = 0;
};

using HttpHandler = std::function<boost::asio::awaitable<void>(HttpExchange&)>;
// A handler that answers at once.
HttpHandler AnswerAtOnce(std::function<HttpResponse(const HttpRequest&, const TransportPeer&)> answer);

struct HttpServerOptions {
  std::string name;                // for logs: "metrics", "mcp", "view"
  std::shared_ptr<TlsServer> tls;  // null: plain HTTP
  IdentityRule identity;           // who a client certificate is (design.md §12.1)
  std::size_t header_limit = 16 * 1024;
  std::size_t body_limit = 0;                      // bytes of body a request may carry
  std::chrono::milliseconds idle_timeout{30000};   // waiting for a request (and the handshake)
  std::chrono::milliseconds write_timeout{30000};  // each write
  HttpHeaders headers;                             // on every answer (security headers of the door)
  // The answer to a body over body_limit (the connection then closes); a 413 in text by default.
  std::function<HttpResponse(std::size_t limit)> too_large;
};

class HttpServer : public std::enable_shared_from_this<HttpServer> {
 public:
  HttpServer(std::shared_ptr<Listener> listener, HttpServerOptions options, HttpHandler handler);
  ~HttpServer();
  // Accepts on `workers` (round robin; never empty) until Close.
  void Start(std::vector<boost::asio::io_context*> workers, std::function<void(std::exception_ptr)> on_failure);
  void StopAccepting();  // thread-safe
  void Close();          // thread-safe
  unsigned short port() const;
  bool tls() const;

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace skillrunner::net
