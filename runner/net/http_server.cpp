#include "runner/net/http_server.h"

#include <spdlog/spdlog.h>

#include <atomic>
#include <boost/algorithm/string/predicate.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/basic_stream.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>
#include <map>
#include <mutex>
#include <optional>

#include "runner/net/listener.h"
#include "runner/net/plain_text.h"

namespace skillrunner::net {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using generic = asio::generic::stream_protocol;

std::string_view HttpRequest::Header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (boost::algorithm::iequals(key, name)) return value;
  }
  return {};
}

bool HttpRequest::Has(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (boost::algorithm::iequals(key, name)) return true;
  }
  return false;
}

std::string_view HttpRequest::Path() const {
  std::string_view path = target;
  return path.substr(0, path.find('?'));
}

HttpResponse HttpResponse::Text(int status, std::string body) {
  return HttpResponse{status, "text/plain; charset=utf-8", std::move(body), {}};
}

HttpResponse HttpResponse::Json(int status, std::string body) {
  return HttpResponse{status, "application/json", std::move(body), {}};
}

namespace {

using Stream = beast::basic_stream<generic>;

asio::awaitable<void> AnswerWith(
    std::shared_ptr<std::function<HttpResponse(const HttpRequest&, const TransportPeer&)>> answer,
    HttpExchange& exchange) {
  HttpResponse response = (*answer)(exchange.request(), exchange.peer());
  co_await exchange.Answer(response);
}

HttpRequest FromBeast(http::request<http::string_body>&& parsed) {
  HttpRequest request;
  request.method = std::string(parsed.method_string());
  request.target = std::string(parsed.target());
  request.version = parsed.version();
  request.keep_alive = parsed.keep_alive();
  for (const auto& field : parsed) request.headers.emplace_back(field.name_string(), field.value());
  request.body = std::move(parsed.body());
  return request;
}

}  // namespace

HttpHandler AnswerAtOnce(std::function<HttpResponse(const HttpRequest&, const TransportPeer&)> answer) {
  auto shared =
      std::make_shared<std::function<HttpResponse(const HttpRequest&, const TransportPeer&)>>(std::move(answer));
  return [shared](HttpExchange& exchange) { return AnswerWith(shared, exchange); };
}

// One accepted connection: the bytes (TCP, or TLS over it with the context it began with).
struct HttpConnection {
  HttpConnection(Accepted accepted, std::shared_ptr<asio::ssl::context> context)
      : stream(std::move(accepted.socket)), tls_context(std::move(context)), remote(std::move(accepted.remote)) {
    if (tls_context) secure.emplace(stream, *tls_context);
  }
  Stream stream;
  std::shared_ptr<asio::ssl::context> tls_context;
  std::optional<asio::ssl::stream<Stream&>> secure;
  std::string remote;
  TransportPeer peer = std::optional<Peer>();
  bool busy = false;  // on the connection's strand only

  template <class Message>
  asio::awaitable<bool> Write(Message& message) {
    auto [ec, n] = secure ? co_await http::async_write(*secure, message, asio::as_tuple(asio::use_awaitable))
                          : co_await http::async_write(stream, message, asio::as_tuple(asio::use_awaitable));
    co_return !ec;
  }
  template <class Buffers>
  asio::awaitable<bool> WriteRaw(const Buffers& buffers) {
    auto [ec, n] = secure ? co_await asio::async_write(*secure, buffers, asio::as_tuple(asio::use_awaitable))
                          : co_await asio::async_write(stream, buffers, asio::as_tuple(asio::use_awaitable));
    co_return !ec;
  }
};

struct HttpServer::Impl : std::enable_shared_from_this<HttpServer::Impl> {
  std::shared_ptr<Listener> listener;
  HttpServerOptions options;
  HttpHandler handler;
  std::atomic<bool> closing{false};
  std::mutex mutex;
  std::map<std::uint64_t, std::shared_ptr<HttpConnection>> connections;
  std::uint64_t next_connection = 0;

  void Adopt(Accepted accepted);
  asio::awaitable<bool> Handshake(std::shared_ptr<HttpConnection> connection);
  asio::awaitable<void> Serve(std::shared_ptr<HttpConnection> connection);
};

namespace {

http::response<http::string_body> ToBeast(const HttpServerOptions& options, const HttpRequest& request,
                                          HttpResponse& response) {
  http::response<http::string_body> message{static_cast<http::status>(response.status), request.version};
  for (const auto& [name, value] : options.headers) message.set(name, value);
  if (!response.content_type.empty()) message.set(http::field::content_type, response.content_type);
  for (const auto& [name, value] : response.headers) message.set(name, value);
  message.body() = std::move(response.body);
  return message;
}

class Exchange final : public HttpExchange {
 public:
  Exchange(HttpServer::Impl& server, HttpConnection& connection, HttpRequest request)
      : server_(server), connection_(connection), request_(std::move(request)) {}
  const HttpRequest& request() const override { return request_; }
  const TransportPeer& peer() const override { return connection_.peer; }
  const std::string& remote() const override { return connection_.remote; }
  bool tls() const override { return connection_.secure.has_value(); }
  asio::any_io_executor executor() const override { return connection_.stream.get_executor(); }

  asio::awaitable<bool> Answer(HttpResponse& response) override {
    auto message = ToBeast(server_.options, request_, response);
    message.keep_alive(KeepAlive());
    message.prepare_payload();
    connection_.stream.expires_after(server_.options.write_timeout);
    const bool written = co_await connection_.Write(message);
    kept_ = written && message.keep_alive();
    co_return kept_;
  }
  asio::awaitable<bool> StartChunks(HttpResponse& head) override {
    auto message = ToBeast(server_.options, request_, head);
    message.chunked(true);
    message.keep_alive(KeepAlive());
    http::response_serializer<http::string_body> serializer{message};
    connection_.stream.expires_after(server_.options.write_timeout);
    auto [ec, n] =
        connection_.secure
            ? co_await http::async_write_header(*connection_.secure, serializer, asio::as_tuple(asio::use_awaitable))
            : co_await http::async_write_header(connection_.stream, serializer, asio::as_tuple(asio::use_awaitable));
    co_return !ec;
  }
  asio::awaitable<bool> Chunk(std::string_view text) override {
    connection_.stream.expires_after(server_.options.write_timeout);
    const bool written = co_await connection_.WriteRaw(http::make_chunk(asio::buffer(text.data(), text.size())));
    co_return written;
  }
  asio::awaitable<bool> EndChunks() override {
    connection_.stream.expires_after(server_.options.write_timeout);
    const bool written = co_await connection_.WriteRaw(http::make_chunk_last());
    kept_ = written && KeepAlive();
    co_return kept_;
  }
  bool kept() const { return kept_; }

 private:
  bool KeepAlive() const { return request_.keep_alive && !server_.closing; }
  HttpServer::Impl& server_;
  HttpConnection& connection_;
  HttpRequest request_;
  bool kept_ = false;
};

}  // namespace

void HttpServer::Impl::Adopt(Accepted accepted) {
  auto connection =
      std::make_shared<HttpConnection>(std::move(accepted), options.tls ? options.tls->Current() : nullptr);
  std::uint64_t id = 0;
  {
    std::lock_guard lock(mutex);
    id = ++next_connection;
    connections.emplace(id, connection);
  }
  auto executor = connection->stream.get_executor();
  asio::co_spawn(executor, Serve(connection), [self = shared_from_this(), id](std::exception_ptr failure) {
    if (failure) spdlog::warn("{}: a connection ended on an exception", self->options.name);
    std::lock_guard lock(self->mutex);
    self->connections.erase(id);
  });
}

// The TLS handshake, after a plain-text client is answered (design.md §12.1); who the connection is.
asio::awaitable<bool> HttpServer::Impl::Handshake(std::shared_ptr<HttpConnection> connection) {
  asio::steady_timer deadline(connection->stream.get_executor(), options.idle_timeout);
  deadline.async_wait([connection](boost::system::error_code ec) {
    if (!ec) connection->stream.socket().cancel();
  });
  const bool plain = co_await RefusePlainText(connection->stream.socket());
  deadline.cancel();
  if (plain) {
    spdlog::info("{}: {} spoke plain text to a TLS listener; answered and closed", options.name, connection->remote);
    co_return false;
  }
  connection->stream.expires_after(options.idle_timeout);
  auto [ec] =
      co_await connection->secure->async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
  if (ec) {
    spdlog::debug("{}: TLS handshake with {} failed: {}", options.name, connection->remote, ec.message());
    co_return false;
  }
  auto subject = VerifiedClientSubject(connection->secure->native_handle());
  connection->peer = PeerOfTransport(options.identity, Transport{false, std::move(subject)});
  co_return true;
}

asio::awaitable<void> HttpServer::Impl::Serve(std::shared_ptr<HttpConnection> connection) {
  if (!connection->secure) connection->peer = PeerOfTransport(options.identity, Transport{false, std::nullopt});
  const bool ready = !connection->secure || co_await Handshake(connection);
  beast::flat_buffer buffer;
  while (ready && !closing) {
    http::request_parser<http::string_body> parser;
    parser.header_limit(static_cast<std::uint32_t>(options.header_limit));
    parser.body_limit(options.body_limit);
    connection->stream.expires_after(options.idle_timeout);
    auto [ec, n] =
        connection->secure
            ? co_await http::async_read(*connection->secure, buffer, parser, asio::as_tuple(asio::use_awaitable))
            : co_await http::async_read(connection->stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
    if (ec == http::error::body_limit) {
      HttpResponse refused = options.too_large
                                 ? options.too_large(options.body_limit)
                                 : HttpResponse::Text(413, "the request's body is over " +
                                                               std::to_string(options.body_limit) + " bytes\n");
      Exchange exchange(*this, *connection, HttpRequest{});
      co_await exchange.Answer(refused);
      break;
    }
    if (ec) break;
    connection->busy = true;
    Exchange exchange(*this, *connection, FromBeast(parser.release()));
    co_await handler(exchange);
    connection->busy = false;
    if (!exchange.kept()) break;
  }
  beast::error_code ignored;
  connection->stream.socket().shutdown(generic::socket::shutdown_both, ignored);
  connection->stream.close();
}

HttpServer::HttpServer(std::shared_ptr<Listener> listener, HttpServerOptions options, HttpHandler handler)
    : impl_(std::make_shared<Impl>()) {
  impl_->listener = std::move(listener);
  impl_->options = std::move(options);
  impl_->handler = std::move(handler);
}

HttpServer::~HttpServer() { Close(); }

void HttpServer::Start(std::vector<asio::io_context*> workers, std::function<void(std::exception_ptr)> on_failure) {
  auto turn = std::make_shared<std::atomic<std::size_t>>(0);
  auto next = [workers = std::move(workers), turn]() -> asio::io_context& {
    return *workers[(*turn)++ % workers.size()];
  };
  std::weak_ptr<Impl> weak = impl_;
  impl_->listener->Start(
      std::move(next),
      [weak](Accepted accepted) {
        if (auto impl = weak.lock(); impl && !impl->closing) impl->Adopt(std::move(accepted));
      },
      std::move(on_failure));
}

void HttpServer::StopAccepting() { impl_->listener->Stop(); }

void HttpServer::Close() {
  impl_->closing = true;
  impl_->listener->Stop();
  std::lock_guard lock(impl_->mutex);
  for (auto& [id, connection] : impl_->connections) {
    asio::post(connection->stream.get_executor(), [connection] {
      if (!connection->busy) connection->stream.close();  // a busy one ends after its exchange
    });
  }
}

unsigned short HttpServer::port() const { return impl_->listener->port(); }

bool HttpServer::tls() const { return impl_->options.tls != nullptr; }

}  // namespace skillrunner::net
