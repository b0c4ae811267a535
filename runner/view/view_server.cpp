#include "runner/view/view_server.h"

#include <spdlog/spdlog.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/serialize.hpp>
#include <boost/url/parse.hpp>
#include <boost/url/url.hpp>
#include <csignal>
#include <sstream>
#include <variant>

#include "runner/net/http_server.h"
#include "runner/net/listener.h"
#include "runner/view/view_api.h"
#include "runner/view/view_pages.h"

namespace skillrunner::view {
namespace asio = boost::asio;
namespace json = boost::json;
using tcp = asio::ip::tcp;

namespace {

constexpr std::size_t kMaxRequestBytes = 16 * 1024;
constexpr std::chrono::seconds kRequestTimeout{30};
constexpr std::string_view kCookie = "skillrunner_view_token";

using Request = net::HttpRequest;
using Response = net::HttpResponse;

Response AnswerJson(int status, const json::object& body) {
  Response response = Response::Json(status, json::serialize(body) + "\n");
  response.headers.emplace_back("Cache-Control", "no-store");
  return response;
}

Response AnswerError(int status, std::string_view code, std::string message) {
  return AnswerJson(status, json::object{{"error", json::object{{"code", code}, {"message", std::move(message)}}}});
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

// The token a request carries: its bearer header, else its cookie; "" when neither.
std::string_view CarriedToken(const Request& request) {
  std::string_view authorization = request.Header("Authorization");
  if (authorization.starts_with("Bearer ")) return authorization.substr(7);
  return CookieValue(request.Header("Cookie"), kCookie).value_or(std::string_view());
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

// A caller the identity rule refuses: 401 asking for the token, 403 for a certificate it refuses.
Response Refused(const net::Refusal& refusal) {
  using Kind = net::Refusal::Kind;
  if (refusal.kind == Kind::kNoToken || refusal.kind == Kind::kWrongToken) {
    Response response =
        AnswerError(401, "UNAUTHORIZED",
                    "this viewer needs its token: an Authorization: Bearer header, or open a link with ?token=");
    response.headers.emplace_back("WWW-Authenticate", "Bearer");
    return response;
  }
  return AnswerError(403, "FORBIDDEN", refusal.message);
}

net::HttpServerOptions ViewHttpOptions(const ServerOptions& options, std::shared_ptr<net::TlsServer> tls) {
  net::HttpServerOptions http;
  http.name = "view";
  http.tls = std::move(tls);
  http.identity = options.identity;
  http.header_limit = kMaxRequestBytes;
  http.body_limit = 0;
  http.idle_timeout = kRequestTimeout;
  http.write_timeout = kRequestTimeout;
  http.headers = {{"Content-Security-Policy", std::string(kContentSecurityPolicy)},
                  {"X-Content-Type-Options", "nosniff"},
                  {"Referrer-Policy", "no-referrer"}};
  if (http.tls) http.headers.emplace_back("Strict-Transport-Security", "max-age=31536000");
  return http;
}

}  // namespace

struct ViewServer::Impl {
  asio::io_context io{1};
  net::IdentityRule identity;
  std::unique_ptr<eval::HistoryReader> history;
  ViewApi api{*history};
  std::shared_ptr<net::TlsServer> tls;  // null: plain HTTP
  std::shared_ptr<net::HttpServer> http;
  asio::steady_timer tls_watch{io};

  Impl(net::IdentityRule rule, std::unique_ptr<eval::HistoryReader> h)
      : identity(std::move(rule)), history(std::move(h)) {}

  // No token, no tenant, no client certificates: loopback names only.
  bool Open() const { return identity.Open() && !(tls && tls->mutual()); }

  // Who calls, or the answer that refuses (or redirects) the request.
  std::variant<net::Peer, Response> Admit(const Request& request, const boost::urls::url_view& url,
                                          const net::TransportPeer& transport) {
    if (Open()) {
      if (LoopbackHost(request.Header("Host"))) return net::Peer{true, "", net::Via::kOpen};
      return AnswerError(403, "FORBIDDEN",
                         "this viewer serves loopback names only (Host: localhost, 127.0.0.1 or [::1])");
    }
    if (auto given = url.params().find("token"); given != url.params().end()) {
      const std::string token = (*given).value;
      auto who = net::Identify(identity, transport, token);
      if (!who && who.error().kind == net::Refusal::Kind::kWrongToken) {
        return AnswerError(401, "UNAUTHORIZED", "the token is wrong");
      }
      if (!who) return Refused(who.error());
      boost::urls::url clean(url);
      clean.params().erase("token");
      Response redirect;
      redirect.status = 303;
      redirect.headers = {{"Location", std::string(clean.buffer())},
                          {"Set-Cookie", std::string(kCookie) + "=" + token + "; Path=/; HttpOnly; SameSite=Strict"}};
      return redirect;
    }
    auto who = net::Identify(identity, transport, CarriedToken(request));
    if (!who) return Refused(who.error());
    return *who;
  }

  Response Route(const Request& request, const net::TransportPeer& transport, std::string& caller) {
    auto parsed = boost::urls::parse_origin_form(request.target);
    if (!parsed) return AnswerError(400, "INVALID_PARAMS", "the address is not valid");
    auto admitted = Admit(request, *parsed, transport);
    if (auto* answer = std::get_if<Response>(&admitted)) return std::move(*answer);
    caller = std::get<net::Peer>(admitted).Name();
    if (request.method != "GET") {
      Response refused = AnswerError(405, "METHOD_NOT_ALLOWED", "the viewer is read-only");
      refused.headers.emplace_back("Allow", "GET");
      return refused;
    }
    std::vector<std::string> segments;
    for (auto segment : parsed->segments()) segments.emplace_back(segment);
    if (!segments.empty() && segments.back().empty()) segments.pop_back();  // "/runs/x/"
    if (!segments.empty() && segments[0] == "api") {
      Query query;
      for (auto param : parsed->params()) query.emplace(param.key, param.value);
      ApiAnswer answer = api.Get(std::vector<std::string>(segments.begin() + 1, segments.end()), query);
      return AnswerJson(answer.status, answer.body);
    }
    if (segments.size() == 2 && segments[0] == "assets") {
      if (auto asset = FindAsset(segments[1])) {
        return Response{200, std::string(asset->content_type), std::string(asset->body), {}};
      }
    } else if (IsPage(segments)) {
      return Response{200, "text/html; charset=utf-8", ServedShell(), {}};
    }
    return Response::Text(404, "not found\n");
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
};

namespace {

// One request: its answer, and an access line naming the caller (the path without its query,
// which may hold a token).
asio::awaitable<void> Exchange(ViewServer::Impl& impl, net::HttpExchange& exchange) {
  std::string caller = "-";
  Response response = impl.Route(exchange.request(), exchange.peer(), caller);
  spdlog::info("view: {} {} {} {} {}", exchange.remote(), caller, exchange.request().method, exchange.request().Path(),
               response.status);
  co_await exchange.Answer(response);
}

}  // namespace

ViewServer::ViewServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ViewServer::~ViewServer() = default;

Result<std::unique_ptr<ViewServer>> ViewServer::Bind(const ServerOptions& options,
                                                     std::unique_ptr<eval::HistoryReader> history) {
  auto impl = std::make_unique<Impl>(options.identity, std::move(history));
  if (options.tls.enabled()) {
    auto tls = net::TlsServer::Load(options.tls);
    if (!tls) return std::unexpected(std::move(tls.error()));
    impl->tls = std::move(*tls);
  }
  std::ostringstream where;
  where << options.listen;
  auto listener = net::Listener::Tcp(impl->io, options.listen, where.str());
  if (!listener) return Fail(ErrorCode::kConfigInvalid, listener.error().message);
  Impl* raw = impl.get();
  impl->http =
      std::make_shared<net::HttpServer>(std::move(*listener), ViewHttpOptions(options, impl->tls),
                                        [raw](net::HttpExchange& exchange) { return Exchange(*raw, exchange); });
  return std::unique_ptr<ViewServer>(new ViewServer(std::move(impl)));
}

unsigned short ViewServer::port() const { return impl_->http->port(); }

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
  impl_->http->Start({&impl_->io}, [](std::exception_ptr failure) {
    if (failure) spdlog::error("view: the accept loop stopped on an exception");
  });
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
