#include "services/http/connection_pool.h"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/this_coro.hpp>
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

ConnectionPool::ConnectionPool(asio::any_io_executor executor, std::size_t max_per_host,
                               std::chrono::milliseconds idle_timeout, const Clock& clock)
    : strand_(asio::make_strand(std::move(executor))),
      max_per_host_(std::max<std::size_t>(1, max_per_host)),
      idle_timeout_(idle_timeout),
      clock_(clock) {}

asio::awaitable<Lease> ConnectionPool::Acquire(std::string key) {
  auto work = AcquireOnStrand(shared_from_this(), std::move(key));
  co_return co_await asio::co_spawn(strand_, std::move(work), asio::use_awaitable);
}

asio::awaitable<Lease> ConnectionPool::AcquireOnStrand(std::shared_ptr<ConnectionPool> self,
                                                       std::string key) {
  // Cancellation must not throw past the queue bookkeeping below.
  co_await asio::this_coro::throw_if_cancelled(false);
  HostState& host = self->hosts_[key];
  self->CloseExpired(host);
  if (host.waiters.empty()) {
    if (auto idle = self->TakeIdle(host)) {
      ++host.leased;
      co_return Lease(self, std::move(key), std::move(idle));
    }
    if (host.leased + host.idle.size() < self->max_per_host_) {
      ++host.leased;
      co_return Lease(self, std::move(key), nullptr);
    }
  }
  asio::cancellation_state state = co_await asio::this_coro::cancellation_state;
  if (state.cancelled() != asio::cancellation_type::none) co_return Lease();
  auto waiter = std::make_shared<Waiter>(self->strand_);
  host.waiters.push_back(waiter);
  // Release() cancels the timer after granting; the caller's cancellation
  // cancels it without granting.
  co_await waiter->timer.async_wait(asio::as_tuple(asio::use_awaitable));
  if (!waiter->granted) {
    std::erase(host.waiters, waiter);
    co_return Lease();
  }
  co_return Lease(self, std::move(key), std::move(waiter->connection));
}

std::shared_ptr<Connection> ConnectionPool::TakeIdle(HostState& host) {
  while (!host.idle.empty()) {
    std::shared_ptr<Connection> connection = std::move(host.idle.back());
    host.idle.pop_back();
    if (connection->LooksReusable()) return connection;
    connection->Close();
  }
  return nullptr;
}

void ConnectionPool::CloseExpired(HostState& host) {
  auto now = clock_.Now();
  auto fresh = std::find_if(host.idle.begin(), host.idle.end(), [&](const auto& connection) {
    return now - connection->idle_since < idle_timeout_;
  });
  for (auto it = host.idle.begin(); it != fresh; ++it) (*it)->Close();
  host.idle.erase(host.idle.begin(), fresh);
}

void ConnectionPool::Release(std::string key, std::shared_ptr<Connection> connection) {
  asio::post(strand_, [self = shared_from_this(), key = std::move(key),
                       connection = std::move(connection)]() mutable {
    self->ReleaseOnStrand(key, std::move(connection));
  });
}

void ConnectionPool::ReleaseOnStrand(const std::string& key,
                                     std::shared_ptr<Connection> connection) {
  HostState& host = hosts_[key];
  if (connection && shut_down_) {
    connection->Close();
    connection.reset();
  }
  CloseExpired(host);
  if (!host.waiters.empty()) {
    // The slot passes to the oldest waiter, with this connection if healthy.
    std::shared_ptr<Waiter> waiter = std::move(host.waiters.front());
    host.waiters.pop_front();
    if (connection && !connection->LooksReusable()) {
      connection->Close();
      connection.reset();
    }
    waiter->granted = true;
    waiter->connection = connection ? std::move(connection) : TakeIdle(host);
    waiter->timer.cancel();
    return;
  }
  --host.leased;
  if (connection) {
    connection->idle_since = clock_.Now();
    host.idle.push_back(std::move(connection));
  }
}

void ConnectionPool::Shutdown() {
  asio::post(strand_, [self = shared_from_this()] {
    self->shut_down_ = true;
    for (auto& [key, host] : self->hosts_) {
      for (auto& connection : host.idle) connection->Close();
      host.idle.clear();
    }
  });
}

}  // namespace skillrunner::http
