#include "runner/server/metrics_endpoint.h"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/serialize.hpp>

namespace skillrunner::server {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;

namespace {

constexpr std::size_t kMaxRequestBytes = 8 * 1024;
constexpr std::chrono::seconds kRequestTimeout{10};

void Answer(http::response<http::string_body>& response, http::status status, std::string_view type, std::string body) {
  response.result(status);
  response.set(http::field::content_type, type);
  response.body() = std::move(body);
}

// What one request gets: /metrics, the probes, or 404.
void Route(const http::request<http::empty_body>& request, http::response<http::string_body>& response,
           ServerMetrics& metrics, const std::function<Probe()>& probe) {
  std::string_view target = request.target();
  if (auto query = target.find('?'); query != std::string_view::npos) target = target.substr(0, query);
  const bool get = request.method() == http::verb::get;
  if (get && target == "/metrics") {
    Answer(response, http::status::ok, "text/plain; version=0.0.4; charset=utf-8", metrics.Prometheus());
  } else if (get && (target == "/healthz" || target == "/readyz")) {
    Probe answer = probe();
    const bool fine = target == "/healthz" || answer.ready;
    Answer(response, fine ? http::status::ok : http::status::service_unavailable, "application/json",
           json::serialize(answer.body) + "\n");
  } else {
    Answer(response, http::status::not_found, "text/plain; charset=utf-8",
           "only GET /metrics, /healthz and /readyz are served here\n");
  }
}

template <class Stream>
asio::awaitable<void> ServeSession(Stream& stream, beast::tcp_stream& lowest, ServerMetrics& metrics,
                                   const std::function<Probe()>& probe, const std::atomic<bool>& closing) {
  beast::flat_buffer buffer(kMaxRequestBytes);
  while (!closing) {
    http::request_parser<http::empty_body> parser;
    parser.header_limit(kMaxRequestBytes);
    lowest.expires_after(kRequestTimeout);
    auto [ec, n] = co_await http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
    if (ec) break;
    const auto& request = parser.get();
    http::response<http::string_body> response;
    response.version(request.version());
    response.keep_alive(request.keep_alive() && !closing);
    Route(request, response, metrics, probe);
    response.prepare_payload();
    lowest.expires_after(kRequestTimeout);
    auto [write_ec, written] = co_await http::async_write(stream, response, asio::as_tuple(asio::use_awaitable));
    if (write_ec || !response.keep_alive()) break;
  }
  beast::error_code ignored;
  lowest.socket().shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
}

}  // namespace

struct MetricsEndpoint::Session {
  Session(asio::ip::tcp::socket socket, std::shared_ptr<asio::ssl::context> tls)
      : stream(std::move(socket)), context(std::move(tls)) {
    if (context) secure.emplace(stream, *context);
  }
  beast::tcp_stream stream;
  std::shared_ptr<asio::ssl::context> context;  // the session's for its life
  std::optional<asio::ssl::stream<beast::tcp_stream&>> secure;
};

namespace {

asio::awaitable<void> ServeSecure(std::shared_ptr<MetricsEndpoint::Session> session, ServerMetrics& metrics,
                                  const std::function<Probe()>& probe, const std::atomic<bool>& closing) {
  session->stream.expires_after(kRequestTimeout);
  auto [ec] =
      co_await session->secure->async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
  if (ec) {
    spdlog::debug("metrics endpoint: TLS handshake failed: {}", ec.message());
    session->stream.close();
    co_return;
  }
  co_await ServeSession(*session->secure, session->stream, metrics, probe, closing);
}

}  // namespace

MetricsEndpoint::MetricsEndpoint(asio::io_context& io, asio::ip::tcp::acceptor acceptor, ServerMetrics& metrics,
                                 std::function<Probe()> probe, std::shared_ptr<net::TlsServer> tls)
    : io_(io),
      acceptor_(std::move(acceptor)),
      metrics_(metrics),
      probe_(std::move(probe)),
      tls_(std::move(tls)),
      port_(acceptor_.local_endpoint().port()) {}

void MetricsEndpoint::Start(std::function<void(std::exception_ptr)> on_failure) {
  asio::co_spawn(
      acceptor_.get_executor(),
      [self = shared_from_this()]() -> asio::awaitable<void> {
        while (true) {
          auto [ec, socket] =
              co_await self->acceptor_.async_accept(asio::make_strand(self->io_), asio::as_tuple(asio::use_awaitable));
          if (ec == asio::error::operation_aborted || !self->acceptor_.is_open()) break;
          if (ec) continue;
          auto session = std::make_shared<Session>(std::move(socket), self->tls_ ? self->tls_->Current() : nullptr);
          self->Serve(std::move(session));
        }
      },
      std::move(on_failure));
}

void MetricsEndpoint::Serve(std::shared_ptr<Session> session) {
  std::uint64_t id = 0;
  {
    std::lock_guard lock(sessions_mutex_);
    id = ++next_session_;
    sessions_.emplace(id, session);
  }
  auto executor = session->stream.get_executor();
  auto serve = session->secure ? ServeSecure(session, metrics_, probe_, closing_)
                               : ServeSession(session->stream, session->stream, metrics_, probe_, closing_);
  asio::co_spawn(executor, std::move(serve), [self = shared_from_this(), session, id](std::exception_ptr) {
    std::lock_guard lock(self->sessions_mutex_);
    self->sessions_.erase(id);
  });
}

void MetricsEndpoint::Close() {
  closing_ = true;
  asio::post(acceptor_.get_executor(), [self = shared_from_this()] {
    boost::system::error_code ignored;
    self->acceptor_.close(ignored);
  });
  std::lock_guard lock(sessions_mutex_);
  for (auto& [id, weak] : sessions_) {
    if (auto session = weak.lock()) {
      asio::post(session->stream.get_executor(), [session] { session->stream.close(); });
    }
  }
}

}  // namespace skillrunner::server
