#pragma once

// Internals of the Streamable HTTP door (mcp_http.cpp, mcp_http_exchange.cpp).

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "runner/mcp/mcp_http.h"
#include "runner/net/http_server.h"
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
  State(std::vector<boost::asio::io_context*> workers, HttpOptions options);

  std::vector<boost::asio::io_context*> workers;
  std::atomic<std::size_t> next_worker{0};
  const HttpOptions options;
  std::shared_ptr<net::HttpServer> http;  // the connections and their requests
  std::atomic<bool> draining{false};

  std::mutex mutex;  // guards what follows
  std::map<std::string, HttpSession> sessions;
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

// What the door's HttpServer does with each request, and its options (mcp_http_exchange.cpp).
net::HttpHandler ExchangeHandler(std::weak_ptr<HttpDoor::State> state);
net::HttpServerOptions DoorHttpOptions(const HttpOptions& options);

}  // namespace skillrunner::mcp
