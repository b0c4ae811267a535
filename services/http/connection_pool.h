#pragma once

// Internal to services/http (includes Asio): never include it from a header
// outside services/http.

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "services/http/connection.h"

#include "services/common/clock.h"

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
// two cross-thread posts and a coroutine per request). Only a request that
// waits is woken through its own executor. Acquire may be awaited from any
// executor, Lease released from any thread.
class ConnectionPool : public std::enable_shared_from_this<ConnectionPool> {
 public:
  // `clock` times idle connections and must outlive the pool.
  ConnectionPool(std::size_t max_per_host, std::chrono::milliseconds idle_timeout,
                 const Clock& clock = RealClock());

  // A slot for `key`, with the most recently used healthy idle connection if
  // there is one. Cancellation of the awaiting coroutine leaves the queue and
  // yields an empty Lease (or throws operation_aborted).
  boost::asio::awaitable<Lease> Acquire(std::string key);

  // Closes idle connections; later releases close theirs.
  void Shutdown();

 private:
  friend class Lease;
  // A request queued beyond the cap. Its timer lives on the request's own
  // executor; a release grants under the mutex and wakes it there.
  struct Waiter {
    Waiter(const boost::asio::any_io_executor& executor, const void* home)
        : timer(executor, boost::asio::steady_timer::time_point::max()), context(home) {}
    boost::asio::steady_timer timer;
    const void* context;  // the io context the request runs on
    bool granted = false;  // under the pool's mutex
    std::shared_ptr<Connection> connection;
  };
  struct HostState {
    std::size_t leased = 0;  // slots handed out (with or without a connection)
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
  boost::asio::awaitable<Lease> Wait(std::string key, std::shared_ptr<Waiter> waiter);
  void Release(std::string key, std::shared_ptr<Connection> connection);

  std::mutex mutex_;
  std::size_t max_per_host_;
  std::chrono::milliseconds idle_timeout_;
  const Clock& clock_;
  bool shut_down_ = false;
  std::unordered_map<std::string, HostState> hosts_;
};

}  // namespace skillrunner::http
