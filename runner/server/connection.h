#pragma once

// One client connection of the socket server. Everything it owns is touched
// on its strand only; the public methods may be called from any thread.

#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/generic/stream_protocol.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/server/json_rpc.h"
#include "runner/server/line_framer.h"
#include "runner/server/server_state.h"
#include "services/common/clock.h"

namespace skillrunner {
class StreamEvents;  // services/common/stream_events.h
}  // namespace skillrunner

namespace boost::asio::ssl {
class context;
}  // namespace boost::asio::ssl

namespace skillrunner::server {

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Socket = boost::asio::generic::stream_protocol::socket;

  // `socket` must be bound to a strand of its own. With `tls`, the connection handshakes first and
  // speaks TLS (design.md §11.8); it keeps that context for its life.
  Connection(std::shared_ptr<Server::State> state, Socket socket, bool is_unix, std::string peer, std::uint64_t id,
             std::shared_ptr<boost::asio::ssl::context> tls = nullptr);
  ~Connection();

  void Start();
  // Shutdown: refuse new requests; close once everything in flight is answered.
  void Drain();
  // Cancels every invocation in flight; each is still answered (CANCELLED).
  // Sends a notification line (a whole JSON-RPC notification) once the connection is authenticated.
  void Notify(std::string line);
  // Cancels every invocation in flight; their CANCELLED answers say "cancelled: `reason`".
  void CancelAll(std::string reason);
  // Closes at once and cancels what is in flight (nothing more is written).
  void Abort(std::string reason);

 private:
  // An invocation in flight: the signal that cancels it, emitted on the
  // strand it runs on (the connection's), and its metrics label.
  struct InFlight {
    std::shared_ptr<boost::asio::cancellation_signal> signal = std::make_shared<boost::asio::cancellation_signal>();
    boost::asio::any_io_executor strand;
    std::string skill;
    std::shared_ptr<StreamEvents> events;  // options.stream: its notifications
    // Why the server cancelled it (empty: the client's $/cancel or hang-up); read by its answer.
    std::shared_ptr<std::string> cancel_reason = std::make_shared<std::string>();
    void Cancel(std::string reason = {});
  };
  // The answers of one batch line, sent as one array when the last arrives.
  struct Batch {
    std::vector<std::optional<boost::json::object>> answers;
    std::size_t pending = 0;
  };
  // Where one request's answer goes: the socket, a batch slot, or nowhere.
  struct Reply {
    std::shared_ptr<Batch> batch;
    std::size_t slot = 0;
    bool notification = false;
  };

  boost::asio::awaitable<void> ReadLoop();
  boost::asio::awaitable<void> WriteLoop();
  boost::asio::awaitable<void> IdleWatch();

  void HandleLine(std::string_view line);
  void HandleCall(Call call, Reply reply);
  void StartInvoke(Call call, Reply reply, const std::string& tenant);
  // Answers -32001 OVERLOADED while draining or at a limit of invocations
  // in flight; true when it did.
  bool RefusedForLoad(const Call& call, const Reply& reply);
  // design.md §10.7: events that go out as skills.partial / skills.reset
  // notifications carrying `id`, before the invocation's answer.
  StreamEvents* StartStream(InFlight& flight, const boost::json::value& id, std::chrono::milliseconds interval);
  // $/cancel {id}: cancels that invocation of this connection (-32602 without an id).
  void HandleCancel(const Call& call, const Reply& reply);
  void Answer(const Reply& reply, boost::json::object answer);
  void AnswerText(const Reply& reply, std::string line);
  void Send(std::string line);
  void CloseIfDone();
  void CloseSocket();
  // Who sent this request (design.md §12.1): its own "auth" token, else the one the connection's
  // `auth` call gave, else the connection itself (its client certificate, the Unix socket).
  std::expected<net::Peer, net::Refusal> Caller(const Call& call) const;
  // The `auth` method: the connection's caller from now on, or why not.
  void Authenticate(const Call& call, const Reply& reply);
  // Whether a notification may go to this connection: its caller is known.
  bool Known() const { return session_peer_ || (transport_peer_ && *transport_peer_); }

  // The TLS handshake, then the read loop; a client certificate (mutual TLS) says who the connection is.
  boost::asio::awaitable<void> Handshake();

  struct Tls;  // the TLS stream over socket_ (connection.cpp)
  std::shared_ptr<Server::State> state_;
  Socket socket_;
  std::unique_ptr<Tls> tls_;
  bool is_unix_;
  std::string peer_;
  std::uint64_t id_;
  net::TransportPeer transport_peer_;      // what the socket or its certificate says
  std::optional<net::Peer> session_peer_;  // what a successful `auth` said
  int failed_auth_ = 0;
  LineFramer framer_;
  std::vector<char> read_buffer_;
  boost::asio::steady_timer idle_timer_;
  Clock::TimePoint last_activity_;
  Clock::TimePoint last_write_progress_;

  std::map<std::string, std::shared_ptr<InFlight>> in_flight_;  // by IdKey (or "#n" for notifications)
  std::uint64_t anonymous_ = 0;
  std::deque<std::string> write_queue_;
  std::size_t queued_bytes_ = 0;
  bool writing_ = false;
  bool read_done_ = false;  // the client sent EOF (or reading stopped)
  bool draining_ = false;
  bool closed_ = false;
};

}  // namespace skillrunner::server
