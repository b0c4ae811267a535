#include "services/http/connection_pool.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
#include <exception>
#include <boost/asio/use_awaitable.hpp>
#include <algorithm>

namespace skillrunner::http {

namespace asio = boost::asio;

Lease::Lease(std::shared_ptr<ConnectionPool> pool, std::string key,
             std::shared_ptr<Connection> conn)
    : pool_(std::move(pool)), key_(std::move(key)), connection_(std::move(conn)) {}

Lease::Lease(Lease&& other) noexcept
    : pool_(std::move(other.pool_)),
      key_(std::move(other.key_)),
      connection_(std::move(other.connection_)),
      keep_(other.keep_) {
  other.pool_.reset();
  other.keep_ = false;
}

Lease& Lease::operator=(Lease&& other) noexcept {
  if (this != &other) {
    Reset();
    pool_ = std::move(other.pool_);
    key_ = std::move(other.key_);
    connection_ = std::move(other.connection_);
    keep_ = other.keep_;
    other.pool_.reset();
    other.keep_ = false;
  }
  return *this;
}

void Lease::Reset() {
  if (!pool_) return;
  std::shared_ptr<Connection> back;
  if (connection_ && keep_) {
    back = std::move(connection_);
  } else if (connection_) {
    connection_->Close();
  }
  connection_.reset();
  keep_ = false;
  std::shared_ptr<ConnectionPool> pool = std::move(pool_);
  pool_.reset();
  pool->Release(std::move(key_), std::move(back));
}

namespace {

void CloseAll(const std::vector<std::shared_ptr<Connection>>& connections) {
  for (const auto& connection : connections) connection->Close();
}

const void* ContextOf(const asio::any_io_executor& executor) {
  return &asio::query(executor, asio::execution::context);
}

const void* ContextOf(Connection& connection) { return ContextOf(connection.socket().get_executor()); }

}  // namespace

ConnectionPool::ConnectionPool(std::size_t max_per_host, std::chrono::milliseconds idle_timeout, const Clock& clock)
    : max_per_host_(std::max<std::size_t>(1, max_per_host)), idle_timeout_(idle_timeout), clock_(clock) {}

asio::awaitable<Lease> ConnectionPool::Acquire(std::string key) {
  asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
  const asio::any_io_executor executor = co_await asio::this_coro::executor;
  std::vector<std::shared_ptr<Connection>> closing;
  Grant grant;
  std::shared_ptr<Waiter> waiter;
  {
    std::lock_guard lock(mutex_);
    HostState& host = hosts_[key];
    CloseExpiredLocked(host, closing);
    grant = TryTakeLocked(host, ContextOf(executor), closing);
    if (!grant.slot && state.cancelled() == asio::cancellation_type::none) {
      waiter = std::make_shared<Waiter>(executor, ContextOf(executor));
      host.waiters.push_back(waiter);
    }
  }
  CloseAll(closing);
  if (grant.slot) co_return Lease(shared_from_this(), std::move(key), std::move(grant.connection));
  if (!waiter) co_return Lease();  // cancelled before it queued
  co_return co_await Wait(std::move(key), std::move(waiter));
}

asio::awaitable<Lease> ConnectionPool::Wait(std::string key, std::shared_ptr<Waiter> waiter) {
  // Release() grants under the mutex, then cancels the timer; the caller's
  // cancellation cancels it without granting. An exception (cancelled just
  // as it began to wait) must not leave the waiter queued.
  std::exception_ptr failure;
  try {
    co_await waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));
  } catch (...) {
    failure = std::current_exception();
  }
  bool granted = false;
  {
    std::lock_guard lock(mutex_);
    granted = waiter->granted;
    if (!granted) std::erase(hosts_[key].waiters, waiter);
  }
  // A slot granted to a caller that is unwinding goes back when its lease ends.
  Lease lease = granted ? Lease(shared_from_this(), std::move(key), std::move(waiter->connection)) : Lease();
  if (failure) std::rethrow_exception(failure);
  co_return lease;
}

ConnectionPool::Grant ConnectionPool::TryTakeLocked(HostState& host, const void* context,
                                                    std::vector<std::shared_ptr<Connection>>& closing) {
  if (!host.waiters.empty()) return {};
  if (auto idle = TakeIdleLocked(host, context, closing)) {
    ++host.leased;
    return {true, std::move(idle)};
  }
  if (host.leased + host.idle.size() >= max_per_host_ && !host.idle.empty()) {
    // At the cap with only other contexts' connections idle: the oldest makes room.
    closing.push_back(std::move(host.idle.front()));
    host.idle.erase(host.idle.begin());
  }
  if (host.leased + host.idle.size() < max_per_host_) {
    ++host.leased;
    return {true, nullptr};
  }
  return {};
}

std::shared_ptr<Connection> ConnectionPool::TakeIdleLocked(HostState& host, const void* context,
                                                           std::vector<std::shared_ptr<Connection>>& closing) {
  for (std::size_t i = host.idle.size(); i-- > 0;) {
    if (ContextOf(*host.idle[i]) != context) continue;
    std::shared_ptr<Connection> connection = std::move(host.idle[i]);
    host.idle.erase(host.idle.begin() + static_cast<std::ptrdiff_t>(i));
    if (connection->LooksReusable()) return connection;
    closing.push_back(std::move(connection));
  }
  return nullptr;
}

std::shared_ptr<ConnectionPool::Waiter> ConnectionPool::PopWaiterLocked(HostState& host, const void* context) {
  auto it = std::find_if(host.waiters.begin(), host.waiters.end(),
                         [context](const auto& waiter) { return waiter->context == context; });
  if (it == host.waiters.end()) it = host.waiters.begin();
  std::shared_ptr<Waiter> waiter = std::move(*it);
  host.waiters.erase(it);
  return waiter;
}

void ConnectionPool::CloseExpiredLocked(HostState& host, std::vector<std::shared_ptr<Connection>>& closing) {
  auto now = clock_.Now();
  auto fresh = std::find_if(host.idle.begin(), host.idle.end(), [&](const auto& connection) {
    return now - connection->idle_since < idle_timeout_;
  });
  for (auto it = host.idle.begin(); it != fresh; ++it) closing.push_back(std::move(*it));
  host.idle.erase(host.idle.begin(), fresh);
}

void ConnectionPool::Release(std::string key, std::shared_ptr<Connection> connection) {
  std::vector<std::shared_ptr<Connection>> closing;
  std::shared_ptr<Waiter> woken;
  {
    std::lock_guard lock(mutex_);
    HostState& host = hosts_[key];
    if (connection && (shut_down_ || (!host.waiters.empty() && !connection->LooksReusable()))) {
      closing.push_back(std::move(connection));
      connection.reset();
    }
    CloseExpiredLocked(host, closing);
    if (!host.waiters.empty()) {
      // The slot passes to the oldest waiter on the connection's context, with
      // the connection; or to the oldest waiter, with an idle one of its own.
      woken = PopWaiterLocked(host, connection ? ContextOf(*connection) : nullptr);
      woken->granted = true;
      if (connection && ContextOf(*connection) != woken->context) closing.push_back(std::move(connection));
      woken->connection = connection ? std::move(connection) : TakeIdleLocked(host, woken->context, closing);
    } else {
      --host.leased;
      if (connection) {
        connection->idle_since = clock_.Now();
        host.idle.push_back(std::move(connection));
      }
    }
  }
  CloseAll(closing);
  // The timer is the waiter's: cancelled on its own executor.
  if (woken) asio::post(woken->timer.get_executor(), [woken] { woken->timer.cancel(); });
}

void ConnectionPool::Shutdown() {
  std::vector<std::shared_ptr<Connection>> closing;
  {
    std::lock_guard lock(mutex_);
    shut_down_ = true;
    for (auto& [key, host] : hosts_) {
      for (auto& connection : host.idle) closing.push_back(std::move(connection));
      host.idle.clear();
    }
  }
  CloseAll(closing);
}

}  // namespace skillrunner::http
