#include "runner/server/connection.h"

#include <poll.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>

#include "runner/net/peer.h"
#include "runner/net/plain_text.h"
#include "runner/net/tls_server.h"

namespace skillrunner::server {
namespace asio = boost::asio;

namespace {

// Per connection for its whole life: small, so that a thousand connections
// cost little (a longer line is gathered by the framer).
constexpr std::size_t kReadChunk = 16 * 1024;

// A Unix peer that closed its end entirely (not just its writing half).
bool PeerHungUp(int fd) {
  pollfd p{fd, POLLIN | POLLRDHUP, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLHUP) != 0;
}

}  // namespace

struct Connection::Tls {
  Tls(Socket& socket, std::shared_ptr<asio::ssl::context> held) : context(std::move(held)), stream(socket, *context) {}
  std::shared_ptr<asio::ssl::context> context;  // this connection's for its life (a reload swaps the server's)
  asio::ssl::stream<Socket&> stream;
};

Connection::Connection(std::shared_ptr<Server::State> state, Socket socket, bool is_unix, std::string peer,
                       std::uint64_t id, std::shared_ptr<asio::ssl::context> tls)
    : state_(std::move(state)),
      socket_(std::move(socket)),
      executor_(socket_.get_executor()),
      tls_(tls ? std::make_unique<Tls>(socket_, std::move(tls)) : nullptr),
      is_unix_(is_unix),
      peer_(std::move(peer)),
      id_(id),
      // The Unix socket's file mode is its access control; TCP needs a token or a certificate
      // when the server has a token or tenants (design.md §12.1).
      session_(state_, *this, net::PeerOfTransport(state_->options.identity, net::Transport{is_unix, std::nullopt})),
      framer_(state_->options.limits.max_line_bytes),
      read_buffer_(kReadChunk),
      idle_timer_(socket_.get_executor()),
      last_activity_(state_->clock.Now()) {}

Connection::~Connection() = default;

void Connection::Start() {
  auto self = shared_from_this();
  state_->metrics.AddConnections(1);
  spdlog::debug("connection {} opened ({})", id_, peer_);
  auto log_failure = [self](std::exception_ptr e) {
    if (!e) return;
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      spdlog::error("connection {}: internal error: {}", self->id_, ex.what());
    }
    self->Abort("internal error");
  };
  asio::co_spawn(socket_.get_executor(), tls_ ? Handshake() : ReadLoop(), log_failure);
  asio::co_spawn(socket_.get_executor(), IdleWatch(), log_failure);
}

asio::awaitable<void> Connection::Handshake() {
  auto self = shared_from_this();
  if (co_await net::RefusePlainText(socket_)) {  // design.md §12.1: told why, in its own protocol
    state_->metrics.RecordRejected("tls_required");
    spdlog::info("connection {} ({}): plain text on a TLS listener, answered and closed", id_, peer_);
    CloseSocket();
    co_return;
  }
  auto [ec] =
      co_await tls_->stream.async_handshake(asio::ssl::stream_base::server, asio::as_tuple(asio::use_awaitable));
  if (ec) {
    // A client that speaks no TLS, an old protocol, or (mutual TLS) shows no certificate the CA signed.
    state_->metrics.RecordRejected("tls_handshake");
    spdlog::info("connection {} ({}): TLS handshake failed: {}", id_, peer_, ec.message());
    CloseSocket();
    co_return;
  }
  if (std::optional<std::string> subject = net::VerifiedClientSubject(tls_->stream.native_handle())) {
    net::TransportPeer transport = net::PeerOfTransport(state_->options.identity, net::Transport{false, subject});
    spdlog::debug("connection {} ({}): client certificate {} ({})", id_, peer_, *subject,
                  transport ? "it is " + (*transport)->Name() : transport.error().message);
    session_.SetTransport(std::move(transport));
  }
  co_await ReadLoop();
}

void Connection::Drain() {
  asio::post(socket_.get_executor(), [self = shared_from_this()] {
    self->draining_ = true;
    self->session_.Drain();
    self->CloseIfDone();
  });
}

void Connection::Notify(std::string line) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), line = std::move(line)]() mutable {
    if (self->session_.Known() && !self->closed_) self->Send(std::move(line));
  });
}

void Connection::CancelAll(std::string reason) {
  asio::post(socket_.get_executor(),
             [self = shared_from_this(), reason = std::move(reason)] { self->session_.CancelAll(reason); });
}

void Connection::Abort(std::string reason) {
  asio::dispatch(socket_.get_executor(), [self = shared_from_this(), reason = std::move(reason)] {
    if (self->closed_) return;
    if (!self->session_.Idle()) {
      spdlog::info("connection {} closed ({}): cancelling {} invocation(s) in flight", self->id_, reason,
                   self->session_.in_flight());
    } else {
      spdlog::debug("connection {} closed ({})", self->id_, reason);
    }
    self->session_.CancelAll("");
    self->write_queue_.clear();
    self->queued_bytes_ = 0;
    self->CloseSocket();
  });
}

asio::awaitable<void> Connection::ReadLoop() {
  auto self = shared_from_this();
  boost::system::error_code ec;
  while (!closed_) {
    auto [read_ec, n] =
        tls_ ? co_await tls_->stream.async_read_some(asio::buffer(read_buffer_), asio::as_tuple(asio::use_awaitable))
             : co_await socket_.async_read_some(asio::buffer(read_buffer_), asio::as_tuple(asio::use_awaitable));
    if (read_ec) {
      ec = read_ec;
      break;
    }
    last_activity_ = state_->clock.Now();
    framer_.Feed(
        std::string_view(read_buffer_.data(), n),
        [this](std::string_view line) {
          if (!closed_) session_.Line(line);
        },
        [this] { session_.LineTooLong(); });
  }
  read_done_ = true;
  if (closed_) co_return;
  if (ec != asio::error::eof) {
    Abort("read failed: " + ec.message());
  } else if (!is_unix_ || PeerHungUp(socket_.native_handle())) {
    // TCP cannot tell a closed client from one that only shut down its
    // sending half, so an EOF there is a disconnect; a Unix socket can tell.
    Abort("client disconnected");
  } else {
    CloseIfDone();  // a half-close: answer what is in flight, then close
  }
}

asio::awaitable<void> Connection::IdleWatch() {
  auto self = shared_from_this();
  const auto idle = state_->options.limits.idle_timeout;
  while (!closed_) {
    idle_timer_.expires_at(last_activity_ + idle);
    co_await idle_timer_.async_wait(asio::as_tuple(asio::use_awaitable));
    if (closed_) co_return;
    if (state_->clock.Now() < last_activity_ + idle) continue;
    if (writing_ && state_->clock.Now() - last_write_progress_ >= idle) {
      Abort("the client has not read its answers for " + std::to_string(idle.count()) + " ms");
      co_return;
    }
    if (!session_.Idle() || writing_) {
      last_activity_ = state_->clock.Now();  // busy is not idle
      continue;
    }
    Abort("idle for " + std::to_string(idle.count()) + " ms");
  }
}

asio::awaitable<void> Connection::WriteLoop() {
  auto self = shared_from_this();
  std::vector<std::string> batch;
  std::vector<asio::const_buffer> buffers;
  while (!write_queue_.empty() && !closed_) {
    batch.clear();
    buffers.clear();
    while (!write_queue_.empty() && batch.size() < 256) {
      batch.push_back(std::move(write_queue_.front()));
      write_queue_.pop_front();
    }
    for (const auto& line : batch) buffers.push_back(asio::buffer(line));
    auto [ec, n] = tls_ ? co_await asio::async_write(tls_->stream, buffers, asio::as_tuple(asio::use_awaitable))
                        : co_await asio::async_write(socket_, buffers, asio::as_tuple(asio::use_awaitable));
    if (closed_) break;
    queued_bytes_ -= std::min(queued_bytes_, n);
    last_write_progress_ = state_->clock.Now();
    if (ec) {
      writing_ = false;
      Abort("write failed: " + ec.message());
      co_return;
    }
    last_activity_ = state_->clock.Now();
  }
  writing_ = false;
  CloseIfDone();
}

void Connection::Send(std::string line) {
  if (closed_) return;
  line.push_back('\n');
  queued_bytes_ += line.size();
  if (queued_bytes_ > state_->options.limits.max_write_queue_bytes) {
    state_->metrics.RecordRejected("slow_reader");
    Abort("the client does not read its answers: more than " +
          std::to_string(state_->options.limits.max_write_queue_bytes) + " bytes queued");
    return;
  }
  write_queue_.push_back(std::move(line));
  if (!writing_) {
    writing_ = true;
    last_write_progress_ = state_->clock.Now();
    asio::co_spawn(socket_.get_executor(), WriteLoop(), [self = shared_from_this()](std::exception_ptr e) {
      if (e) self->Abort("internal error while writing");
    });
  }
}

void Connection::CloseIfDone() {
  if (closed_) return;
  if ((read_done_ || draining_) && session_.Idle() && write_queue_.empty() && !writing_) {
    CloseSocket();
  }
}

void Connection::CloseSocket() {
  if (closed_) return;
  closed_ = true;
  boost::system::error_code ignored;
  socket_.shutdown(Socket::shutdown_both, ignored);
  socket_.close(ignored);
  idle_timer_.cancel();
  state_->metrics.AddConnections(-1);
  spdlog::debug("connection {} closed", id_);
  state_->RemoveConnection(id_);
}

}  // namespace skillrunner::server
