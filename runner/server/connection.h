#pragma once

// One client connection of the socket server: the bytes (design.md §12.1).
// It reads lines within the line limit, writes the queue of answers, watches
// for idleness and slow readers, speaks TLS when the listener does, and
// closes; what the lines mean is its RpcSession's. Everything it owns is
// touched on its strand only; the public methods may be called from any
// thread.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "runner/server/line_framer.h"
#include "runner/server/rpc_session.h"
#include "runner/server/server_state.h"
#include "services/common/clock.h"

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace skillrunner::server {

class Connection final : public Wire, public std::enable_shared_from_this<Connection> {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;

  // `socket` must be bound to a strand of its own. With `tls`, the connection handshakes first and
  // speaks TLS (design.md §11.8); it keeps that context for its life.
  Connection(std::shared_ptr<Server::State> state, Socket socket, bool is_unix, std::string peer, std::uint64_t id,
             std::shared_ptr<boost::asio::ssl::context> tls = nullptr);
  ~Connection() override;

  void Start();
  // Shutdown: refuse new requests; close once everything in flight is answered.
  void Drain();
  // Sends a notification line (a whole JSON-RPC notification) once the connection's caller is known.
  void Notify(std::string line);
  // Cancels every invocation in flight; their CANCELLED answers say "cancelled: `reason`".
  void CancelAll(std::string reason);
  // Closes at once and cancels what is in flight (nothing more is written).
  void Abort(std::string reason) override;

  // Wire (on the strand).
  void Send(std::string line) override;
  void Settled() override { CloseIfDone(); }
  boost::asio::any_io_executor executor() const override { return executor_; }
  std::shared_ptr<Wire> Hold() override { return shared_from_this(); }
  std::uint64_t id() const override { return id_; }
  const std::string& peer() const override { return peer_; }

 private:
  boost::asio::awaitable<void> ReadLoop();
  boost::asio::awaitable<void> WriteLoop();
  boost::asio::awaitable<void> IdleWatch();
  // The TLS handshake, then the read loop; a client certificate (mutual TLS) says who the connection is.
  boost::asio::awaitable<void> Handshake();
  void CloseIfDone();
  void CloseSocket();

  struct Tls;  // the TLS stream over socket_ (connection.cpp)
  std::shared_ptr<Server::State> state_;
  Socket socket_;
  boost::asio::any_io_executor executor_;  // socket_'s strand
  std::unique_ptr<Tls> tls_;
  bool is_unix_;
  std::string peer_;
  std::uint64_t id_;
  RpcSession session_;
  LineFramer framer_;
  std::vector<char> read_buffer_;
  boost::asio::steady_timer idle_timer_;
  Clock::TimePoint last_activity_;
  Clock::TimePoint last_write_progress_;

  std::deque<std::string> write_queue_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool read_done_ = false;  // the client sent EOF (or reading stopped)
  bool draining_ = false;
  bool closed_ = false;
};

}  // namespace skillrunner::server
