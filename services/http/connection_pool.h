#pragma once

// Internal to services/http (includes Asio): never include it from a header
// outside services/http.

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "services/common/clock.h"
#include "services/http/connection.h"

namespace skillrunner::http {

class ConnectionPool;

// The right to have one connection open to a host: a slot under the cap,
// perhaps with an idle pooled connection in it. Move-only. Destroying it
// frees the slot; the connection goes back to the pool only after Keep(),
// otherwise it is closed on the spot (a cancelled or failed request never
// leaves a half-used connection behind).
class Lease {
 public:
  Lease() = default;
  Lease(std::shared_ptr<ConnectionPool> pool, std::string key, std::shared_ptr<Connection> conn);
  Lease(Lease&& other) noexcept;
  Lease& operator=(Lease&& other) noexcept;
  Lease(const Lease&) = delete;
  Lease& operator=(const Lease&) = delete;
  ~Lease() { Reset(); }

  explicit operator bool() const { return pool_ != nullptr; }
  // Null when the slot holds no connection yet (open one and Set it).
  const std::shared_ptr<Connection>& connection() const { return connection_; }
  void Set(std::shared_ptr<Connection> connection) { connection_ = std::move(connection); }
  // Return the connection to the pool when the lease ends.
  void Keep() { keep_ = true; }
  void Reset();

 private:
  std::shared_ptr<ConnectionPool> pool_;
  std::string key_;
  std::shared_ptr<Connection> connection_;
  bool keep_ = false;
};

// Keep-alive connections per (scheme, host, port), at most max_per_host each
// (idle ones included). Beyond the cap requests wait in FIFO order. A
// connection's socket belongs to the io_context of the request that opened it,
// and is handed only to requests on that context (a pool per io context under
// one cap): with an io_context per thread, a request never waits on another
// thread's reactor. At the cap, a request on a context with no idle
// connection of its own closes another context's oldest idle one. The state
// is behind one mutex held for a few lines: a request that finds a slot takes
// it on its own thread, without a hop to another executor (a strand here cost
// two cross-thread posts and a coroutine per request). A request that waits
// leaves its completion handler in the queue; a release hands the slot (and
// the connection) straight to it, posted once to the waiter's executor (no
// timer per wait: the request's own deadline cancels the wait). Acquire may be
// awaited from any executor, Lease released from any thread.
class ConnectionPool : public std::enable_shared_from_this<ConnectionPool> {
 public:
  // `clock` times idle connections and must outlive the pool.
  ConnectionPool(std::size_t max_per_host, std::chrono::milliseconds idle_timeout, const Clock& clock = RealClock());

  // A slot for `key`, with the most recently used healthy idle connection if
  // there is one. Cancellation of the awaiting coroutine leaves the queue and
  // yields an empty Lease (or throws operation_aborted).
  boost::asio::awaitable<Lease> Acquire(std::string key);

  // Closes idle connections; later releases close theirs.
  void Shutdown();

 private:
  friend class Lease;
  // What a waiter is completed with: success and the slot (with the
  // connection, if any), or operation_aborted when it was cancelled.
  using WaitSignature = void(boost::system::error_code, std::shared_ptr<Connection>);
  // A request queued beyond the cap. Whoever takes it out of the queue under
  // the mutex (a release, or the request's cancellation) completes it,
  // posted to the request's own executor.
  struct Waiter {
    boost::asio::any_io_executor executor;
    const void* context;  // the io context the request runs on
    boost::asio::any_completion_handler<WaitSignature> handler;
  };
  struct HostState {
    std::size_t leased = 0;                         // slots handed out (with or without a connection)
    std::vector<std::shared_ptr<Connection>> idle;  // oldest first
    std::deque<std::shared_ptr<Waiter>> waiters;
  };
  // What the fast path decided under the mutex.
  struct Grant {
    bool slot = false;
    std::shared_ptr<Connection> connection;
  };

  // Under the mutex: a free slot (with an idle connection when one is healthy),
  // or nothing when the request must queue. Closed connections come back in
  // `closing`, to be closed after the mutex is released.
  Grant TryTakeLocked(HostState& host, const void* context, std::vector<std::shared_ptr<Connection>>& closing);
  // The most recently used healthy idle connection of `context`.
  std::shared_ptr<Connection> TakeIdleLocked(HostState& host, const void* context,
                                             std::vector<std::shared_ptr<Connection>>& closing);
  // The waiter a connection of `context` goes to: the oldest on that context,
  // else the oldest (whose slot then comes without the connection).
  std::shared_ptr<Waiter> PopWaiterLocked(HostState& host, const void* context);
  void CloseExpiredLocked(HostState& host, std::vector<std::shared_ptr<Connection>>& closing);
  // Queues `handler` (or completes it at once when a slot came free since the
  // fast path looked).
  void Enqueue(HostState& host, const boost::asio::any_io_executor& executor,
               boost::asio::any_completion_handler<WaitSignature> handler, boost::asio::cancellation_slot slot);
  void CancelWaiter(HostState& host, const Waiter* waiter);
  static void Complete(std::shared_ptr<Waiter> waiter, boost::system::error_code ec,
                       std::shared_ptr<Connection> connection);
  void Release(std::string key, std::shared_ptr<Connection> connection);

  std::mutex mutex_;
  std::size_t max_per_host_;
  std::chrono::milliseconds idle_timeout_;
  const Clock& clock_;
  bool shut_down_ = false;
  std::unordered_map<std::string, HostState> hosts_;
};

}  // namespace skillrunner::http
