#include "tests/support/loopback_server.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/algorithm/string/case_conv.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/parallel_group.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/status.hpp>
#include <boost/beast/http/string_body.hpp>
#include <cctype>
#include <deque>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace skillrunner::test_support {

namespace asio = boost::asio;
namespace beast_http = boost::beast::http;
using Tcp = asio::ip::tcp;

namespace {

std::string Lower(std::string_view text) { return boost::algorithm::to_lower_copy(std::string(text)); }

bool HasHeader(const ScriptedResponse& response, std::string_view name) {
  return std::any_of(response.headers.begin(), response.headers.end(),
                     [&](const auto& header) { return Lower(header.first) == name; });
}

std::string StatusLineAndHeaders(const ScriptedResponse& response, bool keep_alive) {
  std::string head = "HTTP/1.1 " + std::to_string(response.status) + " " +
                     std::string(beast_http::obsolete_reason(static_cast<beast_http::status>(response.status))) +
                     "\r\n";
  for (const auto& [name, value] : response.headers) head += name + ": " + value + "\r\n";
  if (!HasHeader(response, "content-type")) head += "Content-Type: application/json\r\n";
  if (!keep_alive) head += "Connection: close\r\n";
  if (response.chunked) {
    head += "Transfer-Encoding: chunked\r\n";
  } else {
    head += "Content-Length: " + std::to_string(response.body.size()) + "\r\n";
  }
  return head + "\r\n";
}

std::string ChunkedBody(const std::string& body) {
  std::string out;
  std::size_t step = std::max<std::size_t>(1, (body.size() + 2) / 3);
  for (std::size_t at = 0; at < body.size(); at += step) {
    std::string piece = body.substr(at, step);
    char size[32];
    std::snprintf(size, sizeof size, "%zx\r\n", piece.size());
    out += size + piece + "\r\n";
  }
  return out + "0\r\n\r\n";
}

}  // namespace

std::string RecordedRequest::Header(const std::string& name) const {
  for (const auto& [key, value] : headers) {
    if (key == name) return value;
  }
  return {};
}

struct LoopbackServer::Impl {
  mutable std::mutex mutex;
  std::deque<ScriptedResponse> script;
  ScriptedResponse fallback;
  std::function<std::optional<ScriptedResponse>(const std::string&)> responder;
  std::function<std::optional<ScriptedResponse>(const RecordedRequest&)> router;
  bool recording = true;
  std::vector<RecordedRequest> recorded;
  std::atomic<std::size_t> request_count{0};
  std::atomic<int> accepted{0};
  std::atomic<int> closed{0};
  std::atomic<int> open{0};
  std::atomic<int> max_open{0};
  std::atomic<int> answering{0};
  std::atomic<int> max_answering{0};
  std::uint16_t port = 0;
  bool tls = false;
  double rate_per_second = 0;
  int retry_after_s = 1;
  std::chrono::steady_clock::time_point last_let_through{};
  std::size_t refused = 0;

  // nginx limit_req without burst: at most one request each 1/rate.
  std::optional<ScriptedResponse> RateLimitedLocked(std::chrono::steady_clock::time_point now) {
    if (rate_per_second <= 0) return std::nullopt;
    auto spacing = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(1.0 / rate_per_second));
    if (last_let_through.time_since_epoch().count() == 0 || now - last_let_through >= spacing) {
      last_let_through = now;
      return std::nullopt;
    }
    ++refused;
    return ScriptedResponse{429,
                            {{"Retry-After", std::to_string(retry_after_s)}},
                            R"({"error":{"message":"Rate limit reached for requests","type":"requests",)"
                            R"("param":null,"code":"rate_limit_exceeded"}})"};
  }

  std::optional<asio::ssl::context> tls_context;
  std::optional<asio::io_context> io;
  std::optional<Tcp::acceptor> acceptor;
  std::thread thread;

  ScriptedResponse Next(beast_http::request<beast_http::string_body>& request) {
    std::lock_guard lock(mutex);
    ++request_count;
    const auto now = std::chrono::steady_clock::now();
    std::optional<ScriptedResponse> refusal = RateLimitedLocked(now);
    std::optional<ScriptedResponse> computed;
    RecordedRequest record{
        std::string(request.method_string()), std::string(request.target()), {}, std::move(request.body()), now,
        refusal ? refusal->status : 0};
    for (const auto& field : request) {
      record.headers.emplace_back(Lower(field.name_string()), std::string(field.value()));
    }
    if (!refusal && router) computed = router(record);
    if (!refusal && !computed && script.empty() && responder) computed = responder(record.body);
    if (recording) recorded.push_back(std::move(record));
    if (refusal) return *refusal;
    if (computed) return *computed;
    if (script.empty()) return fallback;
    ScriptedResponse next = std::move(script.front());
    script.pop_front();
    return next;
  }
};

namespace {

using Impl = LoopbackServer::Impl;

// A request being answered (read, not yet written back), for max_in_flight().
struct Answering {
  explicit Answering(Impl* impl) : impl(impl) {
    const int now = ++impl->answering;
    int seen = impl->max_answering.load();
    while (now > seen && !impl->max_answering.compare_exchange_weak(seen, now)) {
    }
  }
  ~Answering() { --impl->answering; }
  Answering(const Answering&) = delete;
  Answering& operator=(const Answering&) = delete;
  Impl* impl;
};

// Waits `delay`; true when the client hung up meanwhile.
asio::awaitable<bool> DelayUnlessClosed(Tcp::socket& socket, std::chrono::milliseconds delay) {
  auto executor = co_await asio::this_coro::executor;
  asio::steady_timer timer(executor, delay);
  auto expiry = timer.async_wait(asio::deferred);
  auto hang_up = socket.async_wait(Tcp::socket::wait_read, asio::deferred);
  auto group = asio::experimental::make_parallel_group(std::move(expiry), std::move(hang_up));
  auto [order, timer_ec, wait_ec] = co_await group.async_wait(asio::experimental::wait_for_one(), asio::use_awaitable);
  (void)timer_ec;
  if (order[0] == 0) co_return false;
  char byte = 0;
  if (wait_ec || ::recv(socket.native_handle(), &byte, 1, MSG_PEEK | MSG_DONTWAIT) <= 0) {
    co_return true;
  }
  // Bytes arrived (a pipelined request, TLS records): finish the delay.
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  co_return false;
}

template <class Stream>
asio::awaitable<void> Serve(Impl* impl, Stream& stream, Tcp::socket& socket) {
  boost::beast::flat_buffer buffer;
  for (;;) {
    beast_http::request_parser<beast_http::string_body> parser;
    parser.body_limit(256 * 1024 * 1024);
    auto [read_ec, read] = co_await beast_http::async_read(stream, buffer, parser, asio::as_tuple(asio::use_awaitable));
    (void)read;
    if (read_ec) co_return;
    auto request = parser.release();
    bool keep_alive = request.keep_alive();
    ScriptedResponse response = impl->Next(request);
    Answering answering(impl);
    if (response.delay.count() > 0 && co_await DelayUnlessClosed(socket, response.delay)) {
      co_return;
    }
    if (response.drop_connection) co_return;
    std::string raw = StatusLineAndHeaders(response, keep_alive);
    if (response.truncate_body) {
      response.chunked = false;
      raw = StatusLineAndHeaders(response, keep_alive) + response.body.substr(0, response.body.size() / 2);
    } else {
      raw += response.chunked ? ChunkedBody(response.body) : response.body;
    }
    auto bytes = asio::buffer(raw);
    auto [write_ec, written] = co_await asio::async_write(stream, bytes, asio::as_tuple(asio::use_awaitable));
    (void)written;
    if (write_ec || response.truncate_body || !keep_alive || response.close_after_response) {
      co_return;
    }
  }
}

asio::awaitable<void> Session(Impl* impl, Tcp::socket socket) {
  int now_open = ++impl->open;
  int seen = impl->max_open.load();
  while (now_open > seen && !impl->max_open.compare_exchange_weak(seen, now_open)) {
  }
  if (impl->tls) {
    asio::ssl::stream<Tcp::socket> stream(std::move(socket), *impl->tls_context);
    auto [ec] = co_await stream.async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
    if (!ec) co_await Serve(impl, stream, stream.next_layer());
    boost::system::error_code ignored;
    stream.next_layer().close(ignored);
  } else {
    co_await Serve(impl, socket, socket);
    boost::system::error_code ignored;
    socket.shutdown(Tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
  }
  --impl->open;
  ++impl->closed;
}

asio::awaitable<void> Listen(Impl* impl) {
  for (;;) {
    auto [ec, socket] = co_await impl->acceptor->async_accept(asio::as_tuple(asio::use_awaitable));
    if (ec == asio::error::operation_aborted) co_return;
    if (ec) continue;
    boost::system::error_code ignored;
    socket.set_option(Tcp::no_delay(true), ignored);
    ++impl->accepted;
    asio::co_spawn(impl->acceptor->get_executor(), Session(impl, std::move(socket)), [](std::exception_ptr) {});
  }
}

}  // namespace

LoopbackServer::LoopbackServer(std::optional<LoopbackTls> tls) : impl_(std::make_unique<Impl>()) {
  impl_->io.emplace(1);
  if (tls) {
    impl_->tls = true;
    impl_->tls_context.emplace(asio::ssl::context::tls_server);
    impl_->tls_context->use_certificate_chain_file(tls->cert_file);
    impl_->tls_context->use_private_key_file(tls->key_file, asio::ssl::context::pem);
  }
  impl_->acceptor.emplace(*impl_->io, Tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
  impl_->port = impl_->acceptor->local_endpoint().port();
  asio::co_spawn(*impl_->io, Listen(impl_.get()), [](std::exception_ptr) {});
  impl_->thread = std::thread([io = &*impl_->io] { io->run(); });
}

LoopbackServer::~LoopbackServer() {
  impl_->io->stop();
  impl_->thread.join();
  // Coroutine frames (and their sockets) die with the io_context, while the
  // state they point at is still alive.
  impl_->acceptor.reset();
  impl_->io.reset();
}

std::string LoopbackServer::base_url() const {
  return std::string(impl_->tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(port());
}

std::uint16_t LoopbackServer::port() const { return impl_->port; }

RefusalCount RefusedAfter(const std::vector<RecordedRequest>& requests, std::chrono::steady_clock::duration after) {
  RefusalCount count;
  if (requests.empty()) return count;
  const auto from = requests.front().arrived + after;
  for (const auto& r : requests) {
    if (r.arrived < from) continue;
    ++count.requests;
    if (r.status == 429) ++count.refused;
  }
  return count;
}

std::string RefusalTimeline(const std::vector<RecordedRequest>& requests) {
  std::string timeline;
  for (const auto& r : requests) {
    auto slot = static_cast<std::size_t>((r.arrived - requests.front().arrived) / std::chrono::milliseconds(250));
    if (timeline.size() <= slot) timeline.resize(slot + 1, '.');
    if (timeline[slot] != 'x') timeline[slot] = r.status == 429 ? 'x' : 'o';
  }
  return timeline;
}

void LoopbackServer::SetRateLimit(double per_second, int retry_after_s) {
  std::lock_guard lock(impl_->mutex);
  impl_->rate_per_second = per_second;
  impl_->retry_after_s = retry_after_s;
}

std::size_t LoopbackServer::refused_count() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->refused;
}

void LoopbackServer::Enqueue(ScriptedResponse response) {
  std::lock_guard lock(impl_->mutex);
  impl_->script.push_back(std::move(response));
}

void LoopbackServer::SetDefault(ScriptedResponse response) {
  std::lock_guard lock(impl_->mutex);
  impl_->fallback = std::move(response);
}

void LoopbackServer::SetRouter(std::function<std::optional<ScriptedResponse>(const RecordedRequest& request)> router) {
  std::lock_guard lock(impl_->mutex);
  impl_->router = std::move(router);
}

void LoopbackServer::SetResponder(std::function<std::optional<ScriptedResponse>(const std::string& body)> responder) {
  std::lock_guard lock(impl_->mutex);
  impl_->responder = std::move(responder);
}

void LoopbackServer::SetRecording(bool on) {
  std::lock_guard lock(impl_->mutex);
  impl_->recording = on;
}

std::vector<RecordedRequest> LoopbackServer::requests() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->recorded;
}

std::size_t LoopbackServer::request_count() const { return impl_->request_count.load(); }
int LoopbackServer::connections_accepted() const { return impl_->accepted.load(); }
int LoopbackServer::connections_closed() const { return impl_->closed.load(); }
int LoopbackServer::max_open_connections() const { return impl_->max_open.load(); }
int LoopbackServer::max_in_flight() const { return impl_->max_answering.load(); }

bool LoopbackServer::WaitForClosedConnections(int count, std::chrono::milliseconds timeout) const {
  auto give_up = std::chrono::steady_clock::now() + timeout;
  while (connections_closed() < count) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace skillrunner::test_support
