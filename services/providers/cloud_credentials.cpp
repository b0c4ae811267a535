#include "services/providers/cloud_credentials.h"

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <mutex>

#include "services/common/clock.h"

namespace skillrunner::providers {
namespace asio = boost::asio;
using Outcome = std::expected<CloudCredentials, ProviderError>;

std::vector<std::string> CloudCredentials::Secrets() const {
  std::vector<std::string> out;
  for (const std::string* s : {&secret, &session_token}) {
    if (!s->empty()) out.push_back(*s);
  }
  return out;
}

namespace {

// One fetch in flight and those waiting for it.
struct Flight {
  std::optional<Outcome> outcome;
  std::vector<std::function<void()>> waiters;  // each resumes one waiting coroutine on its own executor
};

}  // namespace

struct CredentialCache::State {
  CredentialFetch fetch;
  WallClock now;
  std::mutex mutex;
  std::optional<CloudCredentials> kept;
  std::shared_ptr<Flight> flight;  // null: no fetch runs

  bool Fresh(const CloudCredentials& c) const { return !c.expires || *c.expires - now() > kRefreshBeforeExpiry; }
};

CredentialCache::CredentialCache(CredentialFetch fetch, WallClock now) : state_(std::make_shared<State>()) {
  state_->fetch = std::move(fetch);
  state_->now = now ? std::move(now) : WallClock([] { return RealClock().WallNow(); });
}

CredentialCache::~CredentialCache() = default;

namespace {

// Waits until `flight` has its outcome.
asio::awaitable<void> WaitFor(std::shared_ptr<Flight> flight, std::mutex& mutex) {
  auto initiate = [flight, &mutex](auto handler) {
    std::unique_lock lock(mutex);
    auto held = std::make_shared<decltype(handler)>(std::move(handler));
    auto resume = [held] { asio::post(std::move(*held)); };
    if (flight->outcome) {
      lock.unlock();
      resume();
      return;
    }
    flight->waiters.push_back(std::move(resume));
  };
  co_await asio::async_initiate<const asio::use_awaitable_t<>&, void()>(initiate, asio::use_awaitable);
}

bool Cancelled(const Outcome& outcome) { return !outcome && outcome.error().kind == ProviderError::Kind::kCancelled; }

}  // namespace

asio::awaitable<Outcome> CredentialCache::Get() {
  std::shared_ptr<State> state = state_;
  for (;;) {
    std::shared_ptr<Flight> flight;
    bool mine = false;
    {
      std::lock_guard lock(state->mutex);
      if (state->kept && state->Fresh(*state->kept)) co_return *state->kept;
      if (!state->flight) {
        state->flight = std::make_shared<Flight>();
        mine = true;
      }
      flight = state->flight;
    }
    if (!mine) {
      co_await WaitFor(flight, state->mutex);
      std::lock_guard lock(state->mutex);
      if (!Cancelled(*flight->outcome)) co_return *flight->outcome;
      continue;  // the one fetching went away: fetch again
    }
    Outcome outcome = co_await state->fetch();
    std::vector<std::function<void()>> waiters;
    {
      std::lock_guard lock(state->mutex);
      if (outcome) state->kept = *outcome;
      flight->outcome = outcome;
      waiters.swap(flight->waiters);
      state->flight.reset();
    }
    for (auto& resume : waiters) resume();
    co_return outcome;
  }
}

ProviderError CredentialError(std::string what, int http_status, std::string message) {
  ProviderError error;
  error.kind = http_status == 0 ? ProviderError::Kind::kNetwork : ProviderError::Kind::kHttp;
  error.http_status = http_status;
  error.retryable = http_status == 0 || http_status >= 500;
  // A refused credential is not the model's 429: it does not feed the rate limit.
  error.rate_limited = false;
  error.type = "credentials";
  error.message = std::move(what) + ": " + std::move(message);
  return error;
}

}  // namespace skillrunner::providers
