#include "services/http/http_client.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/system/system_error.hpp>
#include <exception>
#include <mutex>

#include "services/http/connection.h"
#include "services/http/connection_pool.h"
#include "services/http/exchange.h"
#include "services/http/http_error.h"
#include "services/http/http_url.h"
#include "services/http/tls_context.h"

namespace skillrunner::http {
namespace {

namespace asio = boost::asio;
using Result = std::expected<HttpResponse, HttpError>;

std::string PoolKey(const ParsedUrl& url) { return (url.https ? "https://" : "http://") + url.Authority(); }

// A provider sends every request to one URL: the last URL parsed on this
// thread is reused (parsing it was ~5% of a call's CPU over loopback HTTP).
std::expected<std::shared_ptr<const ParsedUrl>, std::string> ParseRemembered(const std::string& text) {
  thread_local std::string last_text;
  thread_local std::shared_ptr<const ParsedUrl> last;
  if (last && text == last_text) return last;
  auto parsed = ParseHttpUrl(text);
  if (!parsed) return std::unexpected(std::move(parsed.error().message));
  last = std::make_shared<const ParsedUrl>(std::move(*parsed));
  last_text = text;
  return last;
}

class HttpClientImpl final : public HttpClient, public std::enable_shared_from_this<HttpClientImpl> {
 public:
  HttpClientImpl(asio::any_io_executor executor, HttpClientOptions options)
      : executor_(executor),
        options_(std::move(options)),
        pool_(std::make_shared<ConnectionPool>(options_.max_connections_per_host, options_.idle_timeout,
                                               *options_.clock)) {
    settings_.connect_timeout = options_.connect_timeout;
    settings_.tls_verify = options_.tls_verify;
    settings_.https_proxy = options_.https_proxy;
    settings_.no_proxy = options_.no_proxy;
    if (!options_.https_proxy.empty()) SetProxy(options_.https_proxy);
  }

  ~HttpClientImpl() override { pool_->Shutdown(); }

  asio::awaitable<Result> Send(HttpRequest request) override {
    auto url = ParseRemembered(request.url);
    if (!url) co_return Fail(HttpErrorKind::kInvalidUrl, std::move(url.error()));
    co_return co_await SendBeforeDeadline(shared_from_this(), std::move(*url), std::move(request));
  }

 private:
  // The race of a request against its timeout (as SkillRunner's deadline
  // race): the attempt runs as a child coroutine on the caller's executor
  // with a cancellation signal of its own, emitted by the timer or by the
  // caller's cancellation, whichever comes first. No strand and no parallel
  // group: the caller's executor runs one handler at a time (the contract in
  // http_client.h), so the timer's handler never races the attempt.
  struct Race {
    asio::cancellation_signal signal;
    bool expired = false;
    bool cancelled = false;
  };

  static asio::awaitable<Result> SendBeforeDeadline(std::shared_ptr<HttpClientImpl> self,
                                                    std::shared_ptr<const ParsedUrl> url, HttpRequest request) {
    const auto executor = co_await asio::this_coro::executor;
    asio::cancellation_state outer = co_await asio::this_coro::cancellation_state;
    if (outer.cancelled() != asio::cancellation_type::none) co_return Cancelled();
    auto race = std::make_shared<Race>();
    asio::steady_timer deadline(executor, request.timeout);
    deadline.async_wait([race](const boost::system::error_code& ec) {
      if (ec || race->cancelled) return;
      race->expired = true;
      race->signal.emit(asio::cancellation_type::terminal);
    });
    asio::cancellation_slot caller = outer.slot();
    if (caller.is_connected()) {
      caller.assign([race](asio::cancellation_type) {
        if (race->expired) return;
        race->cancelled = true;
        race->signal.emit(asio::cancellation_type::terminal);
      });
    }
    auto attempt = self->Attempt(*url, request);
    auto [thrown, result] =
        co_await asio::co_spawn(executor, std::move(attempt),
                                asio::bind_cancellation_slot(race->signal.slot(), asio::as_tuple(asio::use_awaitable)));
    if (caller.is_connected()) caller.clear();
    deadline.cancel();
    if (race->expired) {
      co_return Fail(HttpErrorKind::kTimeout, "timed out after " + std::to_string(request.timeout.count()) + " ms");
    }
    if (race->cancelled) co_return Cancelled();
    if (thrown) co_return Fail(HttpErrorKind::kProtocol, "internal error in the HTTP client");
    co_return std::move(result);
  }

  void SetProxy(std::string proxy) {
    if (proxy.find("://") == std::string::npos) proxy = "http://" + proxy;
    auto parsed = ParseHttpUrl(proxy);
    if (!parsed) {
      settings_.proxy_error = "HTTPS_PROXY is not usable: " + parsed.error().message;
    } else if (parsed->https) {
      settings_.proxy_error = "HTTPS_PROXY must be an http:// proxy (TLS to the proxy is not supported)";
    } else {
      settings_.proxy = std::move(*parsed);
    }
  }

  // One request, with the keep-alive race retried once on a new connection.
  asio::awaitable<Result> Attempt(const ParsedUrl& url, const HttpRequest& request) {
    try {
      std::string key = PoolKey(url);
      Lease lease = co_await pool_->Acquire(std::move(key));
      if (!lease) co_return Cancelled();
      for (int round = 0;; ++round) {
        bool reused = lease.connection() != nullptr;
        if (!reused) {
          if (url.https) LoadTlsContext();
          auto opened = co_await OpenConnection(url, settings_);
          if (!opened) co_return std::unexpected(std::move(opened.error()));
          lease.Set(std::move(*opened));
        }
        ExchangeOutcome outcome = co_await Exchange(*lease.connection(), request, url, options_.max_response_bytes);
        if (outcome.response) {
          if (outcome.keep_alive) lease.Keep();
          co_return std::move(outcome.response);
        }
        bool stale = reused && round == 0 && outcome.nothing_received &&
                     outcome.response.error().kind == HttpErrorKind::kDropped;
        if (!stale) co_return std::move(outcome.response);
        // The server closed the pooled connection as we sent on it: the
        // request was not answered, so it goes once more on a new one.
        lease.connection()->Close();
        lease.Set(nullptr);
      }
    } catch (const boost::system::system_error& error) {
      if (error.code() == asio::error::operation_aborted) co_return Cancelled();
      co_return Fail(HttpErrorKind::kConnect, "request failed: " + error.code().message());
    } catch (const std::exception&) {
      co_return Fail(HttpErrorKind::kProtocol, "internal error in the HTTP client");
    }
  }

  // Loading the system CA store takes tens of milliseconds: only clients
  // that make https requests pay for it, once.
  void LoadTlsContext() {
    std::call_once(tls_once_, [this] {
      if (auto context = MakeTlsContext(options_)) {
        settings_.tls = std::move(*context);
      } else {
        settings_.tls_error = std::move(context.error().message);
      }
    });
  }

  asio::any_io_executor executor_;
  HttpClientOptions options_;
  std::once_flag tls_once_;
  std::shared_ptr<ConnectionPool> pool_;
  ConnectSettings settings_;
};

}  // namespace

std::shared_ptr<HttpClient> MakeHttpClient(asio::any_io_executor executor, HttpClientOptions options) {
  return std::make_shared<HttpClientImpl>(std::move(executor), std::move(options));
}

std::shared_ptr<HttpClient> MakeHttpClient(asio::any_io_executor executor) {
  return MakeHttpClient(std::move(executor), HttpClientOptions());
}

}  // namespace skillrunner::http
