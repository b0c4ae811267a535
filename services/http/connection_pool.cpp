#include "services/http/connection_pool.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/error.hpp>
#include <boost/asio/execution/context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/query.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>

namespace skillrunner::http {

namespace asio = boost::asio;

Lease::Lease(std::shared_ptr<ConnectionPool> pool, std::string key, std::shared_ptr<Connection> conn)
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
  HostState* host = nullptr;
  {
    std::lock_guard lock(mutex_);
    host = &hosts_[key];  // a node of the map: the address stays
    CloseExpiredLocked(*host, closing);
    grant = TryTakeLocked(*host, ContextOf(executor), closing);
  }
  CloseAll(closing);
  if (grant.slot) co_return Lease(shared_from_this(), std::move(key), std::move(grant.connection));
  if (state.cancelled() != asio::cancellation_type::none) co_return Lease();
  auto token = asio::as_tuple(asio::use_awaitable);
  auto [ec, connection] = co_await asio::async_initiate<decltype(token), WaitSignature>(
      [this, host, &executor](auto handler) {
        asio::cancellation_slot slot = asio::get_associated_cancellation_slot(handler);
        Enqueue(*host, executor, std::move(handler), slot);
      },
      token);
  // Cancelled while queued: the slot was never granted.
  if (ec) co_return Lease();
  co_return Lease(shared_from_this(), std::move(key), std::move(connection));
}

void ConnectionPool::Enqueue(HostState& host, const asio::any_io_executor& executor,
                             asio::any_completion_handler<WaitSignature> handler, asio::cancellation_slot slot) {
  auto waiter = std::make_shared<Waiter>(Waiter{executor, ContextOf(executor), std::move(handler)});
  std::vector<std::shared_ptr<Connection>> closing;
  Grant grant;
  {
    std::lock_guard lock(mutex_);
    grant = TryTakeLocked(host, waiter->context, closing);  // a release since the fast path looked
    if (!grant.slot) host.waiters.push_back(waiter);
  }
  CloseAll(closing);
  if (grant.slot) return Complete(std::move(waiter), {}, std::move(grant.connection));
  // The handler (posted when completed) clears the slot before it runs, and
  // until then the waiter is alive: `raw` never names another waiter. The
  // pool is held weakly (the queue holds the handler, which holds the slot).
  if (slot.is_connected()) {
    slot.assign([pool = weak_from_this(), host = &host, raw = waiter.get()](asio::cancellation_type) {
      if (auto self = pool.lock()) self->CancelWaiter(*host, raw);
    });
  }
}

void ConnectionPool::CancelWaiter(HostState& host, const Waiter* target) {
  std::shared_ptr<Waiter> waiter;
  {
    std::lock_guard lock(mutex_);
    auto it = std::find_if(host.waiters.begin(), host.waiters.end(),
                           [target](const auto& queued) { return queued.get() == target; });
    if (it == host.waiters.end()) return;  // granted already: the lease is on its way
    waiter = std::move(*it);
    host.waiters.erase(it);
  }
  Complete(std::move(waiter), asio::error::operation_aborted, nullptr);
}

void ConnectionPool::Complete(std::shared_ptr<Waiter> waiter, boost::system::error_code ec,
                              std::shared_ptr<Connection> connection) {
  // Runs on the waiting request's own executor, never inline.
  asio::post(waiter->executor,
             [handler = std::move(waiter->handler), ec, connection = std::move(connection)]() mutable {
               std::move(handler)(ec, std::move(connection));
             });
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
  auto fresh = std::find_if(host.idle.begin(), host.idle.end(),
                            [&](const auto& connection) { return now - connection->idle_since < idle_timeout_; });
  for (auto it = host.idle.begin(); it != fresh; ++it) closing.push_back(std::move(*it));
  host.idle.erase(host.idle.begin(), fresh);
}

void ConnectionPool::Release(std::string key, std::shared_ptr<Connection> connection) {
  std::vector<std::shared_ptr<Connection>> closing;
  std::shared_ptr<Waiter> woken;
  std::shared_ptr<Connection> handed;
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
      if (connection && ContextOf(*connection) != woken->context) closing.push_back(std::move(connection));
      handed = connection ? std::move(connection) : TakeIdleLocked(host, woken->context, closing);
    } else {
      --host.leased;
      if (connection) {
        connection->idle_since = clock_.Now();
        host.idle.push_back(std::move(connection));
      }
    }
  }
  CloseAll(closing);
  if (woken) Complete(std::move(woken), {}, std::move(handed));
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
