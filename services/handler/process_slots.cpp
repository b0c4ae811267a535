#include "services/handler/process_slots.h"

#include <sched.h>

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/cancellation_state.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <cmath>
#include <deque>
#include <fstream>
#include <sstream>

namespace skillrunner::handler {
namespace asio = boost::asio;
using std::chrono::milliseconds;

namespace {

using Channel = asio::experimental::concurrent_channel<void(boost::system::error_code)>;

// One caller waiting for a place: handed one by Release (`granted`, under the
// state's lock) and woken through its channel, which any thread may send on.
struct Waiter {
  explicit Waiter(asio::any_io_executor executor) : channel(std::move(executor), 1) {}
  Channel channel;
  bool granted = false;
};

// A place held this long is worth this much weight in the mean (the last few dozen).
constexpr double kHoldWeight = 0.05;

}  // namespace

struct ProcessSlots::Slot::State {
  mutable std::mutex mutex;
  std::size_t capacity = 1;
  std::size_t in_use = 0;
  std::size_t most = 0;
  double mean_hold_ms = 0;  // how long a place is held, recently
  std::deque<std::shared_ptr<Waiter>> waiters;

  void TakeLocked() {
    ++in_use;
    most = std::max(most, in_use);
  }
  // Places free while waiters queue: each goes to the first of them.
  void HandOutLocked() {
    while (in_use < capacity && !waiters.empty()) {
      std::shared_ptr<Waiter> next = std::move(waiters.front());
      waiters.pop_front();
      next->granted = true;
      TakeLocked();
      next->channel.try_send(boost::system::error_code{});
    }
  }
  // A place held `held_ms` came back.
  void GiveBackLocked(double held_ms) {
    mean_hold_ms = mean_hold_ms == 0 ? held_ms : (1 - kHoldWeight) * mean_hold_ms + kHoldWeight * held_ms;
    --in_use;
    HandOutLocked();
  }
  // A wait that ended at its deadline: when a place may be free, had it queued `ahead` behind others.
  milliseconds RetryAfterLocked(std::size_t ahead) const {
    const double rounds = static_cast<double>(ahead + 1) / static_cast<double>(std::max<std::size_t>(capacity, 1));
    return milliseconds(std::max<std::int64_t>(100, std::llround(std::max(mean_hold_ms, 1.0) * rounds)));
  }
};

ProcessSlots::Slot::Slot(std::shared_ptr<State> state) : state_(std::move(state)), taken_(RealClock().Now()) {}

ProcessSlots::Slot& ProcessSlots::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    Release();
    state_ = std::move(other.state_);
    taken_ = other.taken_;
  }
  return *this;
}

ProcessSlots::Slot::~Slot() { Release(); }

void ProcessSlots::Slot::Release() {
  if (!state_) return;
  const double held_ms = std::chrono::duration<double, std::milli>(RealClock().Now() - taken_).count();
  std::lock_guard lock(state_->mutex);
  state_->GiveBackLocked(held_ms);
  state_.reset();
}

ProcessSlots::ProcessSlots(std::size_t capacity) : state_(std::make_shared<Slot::State>()) {
  state_->capacity = std::max<std::size_t>(capacity, 1);
}

ProcessSlots::~ProcessSlots() = default;

asio::awaitable<ProcessSlots::Waited> ProcessSlots::Acquire(Clock::TimePoint latest) {
  std::shared_ptr<Slot::State> state = state_;
  const auto executor = co_await asio::this_coro::executor;
  auto waiter = std::make_shared<Waiter>(executor);
  {
    std::lock_guard lock(state->mutex);
    if (state->waiters.empty() && state->in_use < state->capacity) {
      state->TakeLocked();
      co_return Waited{Slot(state)};
    }
    state->waiters.push_back(waiter);
  }
  // A cancelled caller still comes back here, to take its place out of the queue (or give back the
  // one it was handed meanwhile).
  const bool throw_if_cancelled = co_await asio::this_coro::throw_if_cancelled();
  co_await asio::this_coro::throw_if_cancelled(false);
  if (latest == Clock::TimePoint::max()) {
    co_await waiter->channel.async_receive(asio::as_tuple(asio::use_awaitable));
  } else {
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer timer(executor, latest);
    co_await (waiter->channel.async_receive(asio::as_tuple(asio::use_awaitable)) ||
              timer.async_wait(asio::as_tuple(asio::use_awaitable)));
  }
  co_await asio::this_coro::throw_if_cancelled(throw_if_cancelled);
  asio::cancellation_state cancellation = co_await asio::this_coro::cancellation_state;
  const bool cancelled = cancellation.cancelled() != asio::cancellation_type::none;
  std::optional<Slot> slot;
  Waited missed{std::nullopt, cancelled ? Missed::kCancelled : Missed::kDeadline};
  {
    std::lock_guard lock(state->mutex);
    if (waiter->granted) {
      slot.emplace(Slot(state));  // (given back below, outside the lock, when the caller went away)
    } else {
      auto it = std::find(state->waiters.begin(), state->waiters.end(), waiter);
      if (!cancelled)
        missed.retry_after = state->RetryAfterLocked(static_cast<std::size_t>(it - state->waiters.begin()));
      if (it != state->waiters.end()) state->waiters.erase(it);
    }
  }
  if (slot && !cancelled) co_return Waited{std::move(slot)};
  co_return missed;
}

void ProcessSlots::SetCapacity(std::size_t capacity) {
  std::lock_guard lock(state_->mutex);
  state_->capacity = std::max<std::size_t>(capacity, 1);
  state_->HandOutLocked();
}

std::size_t ProcessSlots::capacity() const {
  std::lock_guard lock(state_->mutex);
  return state_->capacity;
}

std::size_t ProcessSlots::in_use() const {
  std::lock_guard lock(state_->mutex);
  return state_->in_use;
}

std::size_t ProcessSlots::most_in_use() const {
  std::lock_guard lock(state_->mutex);
  return state_->most;
}

namespace {

// The cgroup v2 quota of this process, in cores ("max" or none: nullopt).
std::optional<double> CgroupCores() {
  std::ifstream self("/proc/self/cgroup");
  std::string line;
  std::string path;
  while (std::getline(self, line)) {
    if (line.starts_with("0::")) path = line.substr(3);
  }
  if (path.empty()) return std::nullopt;
  std::ifstream max("/sys/fs/cgroup" + path + "/cpu.max");
  std::string quota;
  double period = 0;
  if (!(max >> quota >> period) || quota == "max" || period <= 0) return std::nullopt;
  double value = 0;
  std::istringstream(quota) >> value;
  if (value <= 0) return std::nullopt;
  return value / period;
}

}  // namespace

std::size_t UsableCores() {
  std::size_t cores = 1;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) cores = std::max(1, CPU_COUNT(&set));
  if (auto quota = CgroupCores()) {
    cores = std::min(cores, static_cast<std::size_t>(std::max(1.0, std::ceil(*quota))));
  }
  return cores;
}

ProcessSlots& ProcessPools::Own(const std::string& skill_id, std::size_t capacity) {
  std::lock_guard lock(mutex_);
  auto [it, made] = own_.try_emplace(skill_id, nullptr);
  if (made) {
    it->second = std::make_unique<ProcessSlots>(capacity);
  } else if (it->second->capacity() != capacity) {
    it->second->SetCapacity(capacity);
  }
  return *it->second;
}

asio::awaitable<Result<ProcessOutcome>> PooledProcessRunner::Run(ProcessRequest request) {
  ProcessSlots::Waited waited = co_await slots_.Acquire(Clock::TimePoint::max());
  if (!waited.slot) co_return Fail(ErrorCode::kCancelled, "cancelled while waiting for a process place");
  co_return co_await inner_.Run(std::move(request));
}

}  // namespace skillrunner::handler
