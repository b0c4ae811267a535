#pragma once

// The JSON-RPC protocol of one connection of the socket server (design.md
// §12.1): a line's messages and batches, who calls (`auth`, a request's own
// token, the connection's certificate), skills.invoke with its streamed
// notifications, $/cancel, the other methods, and the answers. The bytes are
// its Connection's (connection.h), which it knows only as a Wire. Everything
// here runs on the connection's strand.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <cstdint>
#include <expected>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/net/peer.h"
#include "runner/server/json_rpc.h"
#include "runner/server/server_state.h"

namespace skillrunner {
class StreamEvents;  // services/common/stream_events.h
}  // namespace skillrunner

namespace skillrunner::server {

struct Done;  // invocation_answer.h

// What a session asks of the connection that carries it (on the connection's strand).
class Wire {
 public:
  virtual ~Wire() = default;
  // One line out (without its newline), after those queued before it.
  virtual void Send(std::string line) = 0;
  // Closes at once: nothing more is written.
  virtual void Abort(std::string reason) = 0;
  // Nothing is in flight any more: the connection closes if it is done (EOF, a drain).
  virtual void Settled() = 0;
  virtual boost::asio::any_io_executor executor() const = 0;
  // The connection, kept open while an answer is due.
  virtual std::shared_ptr<Wire> Hold() = 0;
  // What the connection is called in the logs: its number and its peer.
  virtual std::uint64_t id() const = 0;
  virtual const std::string& peer() const = 0;
};

class RpcSession {
 public:
  // `transport` is what the connection itself says of its caller (the Unix socket; a certificate
  // once TLS is up: SetTransport).
  RpcSession(std::shared_ptr<Server::State> state, Wire& wire, net::TransportPeer transport);
  ~RpcSession();
  RpcSession(const RpcSession&) = delete;
  RpcSession& operator=(const RpcSession&) = delete;

  void SetTransport(net::TransportPeer transport) { transport_peer_ = std::move(transport); }
  // One line the client sent (blank lines are skipped); a bug costs its answer, not the connection.
  void Line(std::string_view line);
  // A line over max_line_bytes was skipped.
  void LineTooLong();
  // No invocation in flight.
  bool Idle() const { return in_flight_.empty(); }
  std::size_t in_flight() const { return in_flight_.size(); }
  // Whether a notification may go to this connection: its caller is known.
  bool Known() const { return session_peer_ || (transport_peer_ && *transport_peer_); }
  // Refuses new invocations (the connection drains).
  void Drain() { draining_ = true; }
  // Cancels every invocation in flight; each is still answered, "cancelled: `reason`" (empty: the
  // client's $/cancel or hang-up).
  void CancelAll(const std::string& reason);

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

  void HandleLine(std::string_view line);
  void HandleCall(Call call, Reply reply);
  void StartInvoke(Call call, Reply reply, const std::string& tenant);
  // The answer of a finished invocation (on the connection's strand).
  void Finished(const std::string& key, const Reply& reply, const InFlight& flight, const boost::json::value& id,
                const std::string& tenant, std::exception_ptr failure, Done* done);
  // Answers -32001 OVERLOADED while draining or at a limit of invocations
  // in flight; true when it did.
  bool RefusedForLoad(const Call& call, const Reply& reply);
  // design.md §10.7: events that go out as skills.partial / skills.reset
  // notifications carrying `id`, before the invocation's answer.
  StreamEvents* StartStream(InFlight& flight, const boost::json::value& id, std::chrono::milliseconds interval);
  // $/cancel {id}: cancels that invocation of this connection (-32602 without an id).
  void HandleCancel(const Call& call, const Reply& reply);
  void Answer(const Reply& reply, boost::json::object answer);
  // Who sent this request (design.md §12.1): its own "auth" token, else the one the connection's
  // `auth` call gave, else the connection itself (its client certificate, the Unix socket).
  std::expected<net::Peer, net::Refusal> Caller(const Call& call) const;
  // The `auth` method: the connection's caller from now on, or why not.
  void Authenticate(const Call& call, const Reply& reply);

  std::shared_ptr<Server::State> state_;
  Wire& wire_;
  net::TransportPeer transport_peer_;      // what the socket or its certificate says
  std::optional<net::Peer> session_peer_;  // what a successful `auth` said
  int failed_auth_ = 0;
  std::map<std::string, std::shared_ptr<InFlight>> in_flight_;  // by IdKey (or "#n" for notifications)
  std::uint64_t anonymous_ = 0;
  bool draining_ = false;
};

}  // namespace skillrunner::server
