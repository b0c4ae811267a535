#pragma once

// Internals of the Streamable HTTP door (mcp_http.cpp, mcp_http_exchange.cpp).

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "runner/mcp/mcp_http.h"
#include "runner/net/peer.h"
#include "services/common/clock.h"

namespace skillrunner::mcp {

// Messages from a session's strand to one HTTP exchange's coroutine (on its connection's strand).
class Mailbox : public std::enable_shared_from_this<Mailbox> {
 public:
  explicit Mailbox(boost::asio::any_io_executor executor);
  void Push(boost::json::object message);  // any thread
  void Shut();                             // any thread: Pop answers kShut once the queue is empty
  enum class Got { kMessage, kTimeout, kShut };
  struct Popped {
    Got got = Got::kShut;
    boost::json::object message;
  };
  // The next message, waiting at most `wait`. On the executor given.
  boost::asio::awaitable<Popped> Pop(std::chrono::steady_clock::duration wait);

 private:
  void Wake();
  boost::asio::steady_timer timer_;
  std::mutex mutex_;
  std::deque<boost::json::object> queue_;
  bool shut_ = false;
};

// A connection's stream: TCP, or TLS over it (design.md §11.8) with the context it began with.
struct McpStream {
  McpStream(boost::asio::ip::tcp::socket socket, std::shared_ptr<boost::asio::ssl::context> context)
      : tcp(std::move(socket)), tls_context(std::move(context)) {
    if (tls_context) tls.emplace(tcp, *tls_context);
  }
  boost::beast::tcp_stream tcp;
  std::shared_ptr<boost::asio::ssl::context> tls_context;
  std::optional<boost::asio::ssl::stream<boost::beast::tcp_stream&>> tls;
  // Who the connection is by its client certificate (design.md §12.1), set after the handshake.
  net::TransportPeer peer = std::optional<net::Peer>();
};

// An open connection: closed at once by Close while it waits for a request; one in an exchange
// finishes it first (its answer is written). `busy` is read and written on the stream's strand only.
struct LiveConnection {
  std::shared_ptr<McpStream> stream;
  bool busy = false;
};

// One MCP session as HTTP sees it.
struct HttpSession {
  std::shared_ptr<Session> session;
  std::string tenant;               // whose token opened it (only that token may use it)
  std::shared_ptr<Mailbox> stream;  // the GET stream's, while one is open
  std::chrono::steady_clock::time_point last_used = RealClock().Now();
  // Nothing in flight, no stream: a client that went away without DELETE leaves such sessions.
  bool Idle() const { return session->Idle() && !stream; }
};

struct HttpDoor::State : std::enable_shared_from_this<HttpDoor::State> {
  State(std::vector<boost::asio::io_context*> workers, boost::asio::ip::tcp::acceptor acceptor, HttpOptions options);

  std::vector<boost::asio::io_context*> workers;
  std::atomic<std::size_t> next_worker{0};
  boost::asio::ip::tcp::acceptor acceptor;
  const HttpOptions options;
  unsigned short port = 0;
  std::atomic<bool> draining{false};
  std::atomic<bool> closed{false};

  std::mutex mutex;  // guards what follows
  std::map<std::string, HttpSession> sessions;
  std::map<std::uint64_t, std::shared_ptr<LiveConnection>> connections;
  std::uint64_t next_connection = 0;
  std::size_t busy_sessions = 0;  // draining, with calls in flight
  std::function<void()> on_idle;

  // A new session for `tenant`: its id, or nullopt at max_sessions with none idle. Idle sessions
  // unused for kSessionIdle end first; at the bound, the one unused the longest makes room.
  std::optional<std::string> Open(const std::string& tenant);
  // The session `id` opened by `tenant`, or null.
  std::shared_ptr<Session> Find(const std::string& id, const std::string& tenant);
  void Erase(const std::string& id);
  // The session's GET stream; false when it has one open already (or is gone).
  bool AttachStream(const std::string& id, const std::shared_ptr<Mailbox>& stream);
  void DetachStream(const std::string& id, const std::shared_ptr<Mailbox>& stream);
  // A session's drain is over.
  void SessionIdle();
};

// Serves one accepted connection until it closes (mcp_http_exchange.cpp).
boost::asio::awaitable<void> ServeConnection(std::shared_ptr<HttpDoor::State> state,
                                             std::shared_ptr<LiveConnection> connection);

}  // namespace skillrunner::mcp
