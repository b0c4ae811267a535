#include "runner/view/view_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <csignal>
#include <sstream>

#include "runner/net/token.h"
#include "runner/view/view_api.h"
#include "runner/view/view_pages.h"

namespace skillrunner::view {
namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace json = boost::json;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kMaxRequestBytes = 16 * 1024;
constexpr std::chrono::seconds kRequestTimeout{30};
constexpr std::string_view kCookie = "skillrunner_view_token";

using Request = http::request<http::empty_body>;
using Response = http::response<http::string_body>;

void Answer(Response& response, http::status status, std::string_view type, std::string body) {
  response.result(status);
  response.set(http::field::content_type, type);
  response.body() = std::move(body);
}

void AnswerJson(Response& response, int status, const json::object& body) {
  Answer(response, static_cast<http::status>(status), "application/json", json::serialize(body) + "\n");
  response.set(http::field::cache_control, "no-store");
}

void AnswerError(Response& response, http::status status, std::string_view code, std::string message) {
  AnswerJson(response, static_cast<int>(status),
             json::object{{"error", json::object{{"code", code}, {"message", std::move(message)}}}});
}

// The value of cookie `name` in a Cookie header, if it is there.
std::optional<std::string_view> CookieValue(std::string_view header, std::string_view name) {
  while (!header.empty()) {
    std::size_t end = header.find(';');
    std::string_view pair = header.substr(0, end);
    header = end == std::string_view::npos ? std::string_view() : header.substr(end + 1);
    while (!pair.empty() && pair.front() == ' ') pair.remove_prefix(1);
    if (pair.starts_with(name) && pair.size() > name.size() && pair[name.size()] == '=') {
      return pair.substr(name.size() + 1);
    }
  }
  return std::nullopt;
}

bool CarriesToken(const Request& request, const std::string& token) {
  std::string_view authorization = request[http::field::authorization];
  if (authorization.starts_with("Bearer ") && net::TokensEqual(authorization.substr(7), token)) return true;
  auto cookie = CookieValue(request[http::field::cookie], kCookie);
  return cookie && net::TokensEqual(*cookie, token);
}

// Whether the Host header names this machine's loopback (localhost, 127.x.y.z, [::1]), any port.
bool LoopbackHost(std::string_view host) {
  if (host.starts_with("[::1]")) return host.size() == 5 || host[5] == ':';
  std::string_view name = host.substr(0, host.find(':'));
  if (name == "localhost") return true;
  boost::system::error_code ec;
  auto address = asio::ip::make_address_v4(name, ec);
  return !ec && address.is_loopback();
}

bool IsPage(const std::vector<std::string>& s) {
  if (s.empty()) return true;
  const std::string& kind = s[0];
  return (kind == "suites" && s.size() == 2) || (kind == "runs" && s.size() == 2) ||
         (kind == "compare" && (s.size() == 2 || s.size() == 3)) || (kind == "cases" && s.size() == 4) ||
         (kind == "rollouts" && s.size() == 1) || (kind == "versions" && s.size() == 2);
}

}  // namespace

struct ViewServer::Impl {
  asio::io_context io{1};
  tcp::acceptor acceptor{io};
  std::optional<std::string> token;
  std::unique_ptr<eval::HistoryReader> history;
  ViewApi api{*history};

  std::shared_ptr<net::TlsServer> tls;  // null: plain HTTP
  asio::steady_timer tls_watch{io};

  Impl(std::optional<std::string> t, std::unique_ptr<eval::HistoryReader> h)
      : token(std::move(t)), history(std::move(h)) {}

  // false when the request may not go on (the answer says why, or redirects).
  bool Admit(const Request& request, const boost::urls::url_view& url, Response& response) {
    if (!token) {
      if (LoopbackHost(request[http::field::host])) return true;
      AnswerError(response, http::status::forbidden, "FORBIDDEN",
                  "this viewer serves loopback names only (Host: localhost, 127.0.0.1 or [::1])");
      return false;
    }
    if (auto given = url.params().find("token"); given != url.params().end()) {
      if (!net::TokensEqual((*given).value, *token)) {
        AnswerError(response, http::status::unauthorized, "UNAUTHORIZED", "the token is wrong");
        return false;
      }
      boost::urls::url clean(url);
      clean.params().erase("token");
      response.result(http::status::see_other);
      response.set(http::field::location, clean.buffer());
      response.set(http::field::set_cookie,
                   std::string(kCookie) + "=" + *token + "; Path=/; HttpOnly; SameSite=Strict");
      return false;
    }
    if (CarriesToken(request, *token)) return true;
    AnswerError(response, http::status::unauthorized, "UNAUTHORIZED",
                "this viewer needs its token: an Authorization: Bearer header, or open a link with ?token=");
    response.set(http::field::www_authenticate, "Bearer");
    return false;
  }

  void Route(const Request& request, Response& response) {
    auto parsed = boost::urls::parse_origin_form(request.target());
    if (!parsed) return AnswerError(response, http::status::bad_request, "INVALID_PARAMS", "the address is not valid");
    if (!Admit(request, *parsed, response)) return;
    if (request.method() != http::verb::get) {
      response.set(http::field::allow, "GET");
      return AnswerError(response, http::status::method_not_allowed, "METHOD_NOT_ALLOWED", "the viewer is read-only");
    }
    std::vector<std::string> segments;
    for (auto segment : parsed->segments()) segments.emplace_back(segment);
    if (!segments.empty() && segments.back().empty()) segments.pop_back();  // "/runs/x/"
    if (!segments.empty() && segments[0] == "api") {
      Query query;
      for (auto param : parsed->params()) query.emplace(param.key, param.value);
      ApiAnswer answer = api.Get(std::vector<std::string>(segments.begin() + 1, segments.end()), query);
      return AnswerJson(response, answer.status, answer.body);
    }
    if (segments.size() == 2 && segments[0] == "assets") {
      if (auto asset = FindAsset(segments[1]))
        return Answer(response, http::status::ok, asset->content_type, std::string(asset->body));
    } else if (IsPage(segments)) {
      return Answer(response, http::status::ok, "text/html; charset=utf-8", ServedShell());
    }
    Answer(response, http::status::not_found, "text/plain; charset=utf-8", "not found\n");
  }

  template <class Stream>
  asio::awaitable<void> ServeOn(Stream& stream, beast::tcp_stream& lowest) {
    beast::flat_buffer buffer(kMaxRequestBytes);
    while (true) {
      http::request_parser<http::empty_body> parser;
      parser.header_limit(kMaxRequestBytes);
      lowest.expires_after(kRequestTimeout);
      auto [ec, n] = co_await http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
      if (ec) break;
      const Request& request = parser.get();
      Response response;
      response.version(request.version());
      response.keep_alive(request.keep_alive());
      response.set("Content-Security-Policy", kContentSecurityPolicy);
      response.set("X-Content-Type-Options", "nosniff");
      response.set("Referrer-Policy", "no-referrer");
      if (tls) response.set(http::field::strict_transport_security, "max-age=31536000");
      Route(request, response);
      response.prepare_payload();
      lowest.expires_after(kRequestTimeout);
      auto [write_ec, written] = co_await http::async_write(stream, response, asio::as_tuple(asio::use_awaitable));
      if (write_ec || !response.keep_alive()) break;
    }
    beast::error_code ignored;
    lowest.socket().shutdown(tcp::socket::shutdown_both, ignored);
  }

  asio::awaitable<void> Serve(tcp::socket socket) {
    beast::tcp_stream stream(std::move(socket));
    if (!tls) {
      co_await ServeOn(stream, stream);
      co_return;
    }
    std::shared_ptr<asio::ssl::context> context = tls->Current();  // this connection's for its life
    asio::ssl::stream<beast::tcp_stream&> secure(stream, *context);
    stream.expires_after(kRequestTimeout);
    auto [ec] = co_await secure.async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
    if (ec) co_return;
    co_await ServeOn(secure, stream);
  }

  // The certificate's files looked at every few seconds (SIGHUP forces it).
  asio::awaitable<void> WatchTls() {
    while (true) {
      tls_watch.expires_after(std::chrono::seconds(5));
      auto [ec] = co_await tls_watch.async_wait(asio::as_tuple(asio::use_awaitable));
      if (ec) co_return;
      ReloadTls(false);
    }
  }

  void ReloadTls(bool force) {
    auto reloaded = tls->Reload(force);
    if (!reloaded) {
      spdlog::error("the TLS certificate and key were not reloaded ({}); the previous pair still serves",
                    reloaded.error().message);
    } else if (*reloaded) {
      spdlog::info("TLS: new connections now get {}", tls->Describe());
    }
  }

  asio::awaitable<void> Accept() {
    while (true) {
      auto [ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
      if (ec == asio::error::operation_aborted) co_return;
      if (ec) continue;  // a connection that failed before it was ours (reset, out of descriptors)
      asio::co_spawn(io, Serve(std::move(socket)), asio::detached);
    }
  }
};

ViewServer::ViewServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ViewServer::~ViewServer() = default;

Result<std::unique_ptr<ViewServer>> ViewServer::Bind(const ServerOptions& options,
                                                     std::unique_ptr<eval::HistoryReader> history) {
  auto impl = std::make_unique<Impl>(options.token, std::move(history));
  if (options.tls.enabled()) {
    auto tls = net::TlsServer::Load(options.tls);
    if (!tls) return std::unexpected(std::move(tls.error()));
    impl->tls = std::move(*tls);
  }
  boost::system::error_code ec;
  impl->acceptor.open(options.listen.protocol(), ec);
  if (!ec) impl->acceptor.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) impl->acceptor.bind(options.listen, ec);
  if (!ec) impl->acceptor.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    std::ostringstream where;
    where << options.listen;
    return Fail(ErrorCode::kConfigInvalid, "cannot listen on " + where.str() + ": " + ec.message());
  }
  return std::unique_ptr<ViewServer>(new ViewServer(std::move(impl)));
}

unsigned short ViewServer::port() const { return impl_->acceptor.local_endpoint().port(); }

bool ViewServer::tls() const { return impl_->tls != nullptr; }

Result<void> ViewServer::Run(const std::function<void()>& on_listening) {
  asio::signal_set signals(impl_->io, SIGINT, SIGTERM, SIGHUP);
  std::function<void(const boost::system::error_code&, int)> on_signal = [&](const boost::system::error_code& ec,
                                                                             int signal) {
    if (ec) return;
    if (signal != SIGHUP) return impl_->io.stop();
    if (impl_->tls) impl_->ReloadTls(true);
    signals.async_wait(on_signal);
  };
  signals.async_wait(on_signal);
  asio::co_spawn(impl_->io, impl_->Accept(), asio::detached);
  if (impl_->tls) asio::co_spawn(impl_->io, impl_->WatchTls(), asio::detached);
  on_listening();
  try {
    impl_->io.run();
  } catch (const std::exception& e) {
    return Fail(ErrorCode::kInternal, std::string("the viewer stopped: ") + e.what());
  }
  return {};
}

}  // namespace skillrunner::view
