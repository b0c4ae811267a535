#pragma once

// The places for child processes (design.md §12.0): at most `capacity`
// handlers, exec validators and exec checks run at once in one eval or serve,
// so that each has a core and its timeout, counted from its exec, measures
// its own work, not a wait for the CPU (16 python3 handlers started at once
// on 2 cores ran past a 5 s timeout that each needed 0.35 s of).
//
// A place is waited for in arrival order; the wait ends with the place, at
// the caller's deadline, or at its cancellation. Thread-safe: places are
// taken and given back from any thread.

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "services/common/clock.h"
#include "services/handler/process_runner.h"

namespace skillrunner::handler {

class ProcessSlots {
 public:
  // A held place, given back when destroyed (or moved from).
  class Slot {
   public:
    Slot() = default;
    Slot(Slot&& other) noexcept : state_(std::move(other.state_)), taken_(other.taken_) {}
    Slot& operator=(Slot&& other) noexcept;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot();
    explicit operator bool() const { return state_ != nullptr; }

   private:
    friend class ProcessSlots;
    struct State;
    explicit Slot(std::shared_ptr<State> state);
    void Release();
    std::shared_ptr<State> state_;
    Clock::TimePoint taken_{};
  };

  // How a wait ended without a place.
  enum class Missed { kDeadline, kCancelled };
  struct Waited {
    std::optional<Slot> slot;  // set: the place
    Missed missed = Missed::kDeadline;
    // Missed at the deadline: when a place may be free, from the places' recent holding times.
    std::chrono::milliseconds retry_after{0};
  };

  explicit ProcessSlots(std::size_t capacity);
  ~ProcessSlots();
  ProcessSlots(const ProcessSlots&) = delete;
  ProcessSlots& operator=(const ProcessSlots&) = delete;

  // Waits for a place until `latest` (steady time; TimePoint::max(): no
  // deadline) on the calling coroutine's executor; the coroutine's
  // cancellation ends the wait too.
  boost::asio::awaitable<Waited> Acquire(Clock::TimePoint latest);

  // More places wake waiters at once; fewer take effect as places come back.
  void SetCapacity(std::size_t capacity);
  std::size_t capacity() const;
  std::size_t in_use() const;       // places held now
  std::size_t most_in_use() const;  // the most held at once so far

 private:
  std::shared_ptr<Slot::State> state_;
};

// The usable cores of this process: its CPU affinity, capped by the cgroup's
// `cpu.max` quota where one is set (a container's CPU limit); 1 at least.
std::size_t UsableCores();

// The pools of one eval or serve: the shared one (handler_concurrency places),
// and a pool of its own for each skill that asks for one (`max_concurrent:`,
// for handlers that wait on I/O rather than compute).
class ProcessPools {
 public:
  explicit ProcessPools(std::size_t shared_capacity) : shared_(shared_capacity) {}
  ProcessSlots& shared() { return shared_; }
  // The skill's own pool of `capacity` places (made at its first use; a new
  // capacity, as after a reload, resizes it).
  ProcessSlots& Own(const std::string& skill_id, std::size_t capacity);

 private:
  ProcessSlots shared_;
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<ProcessSlots>, std::less<>> own_;
};

// A ProcessRunner whose every child waits for a place of `slots` first (no
// deadline but the caller's cancellation): exec validators and exec checks.
// `inner` and `slots` must outlive it.
class PooledProcessRunner : public ProcessRunner {
 public:
  PooledProcessRunner(ProcessRunner& inner, ProcessSlots& slots) : inner_(inner), slots_(slots) {}
  boost::asio::awaitable<Result<ProcessOutcome>> Run(ProcessRequest request) override;

 private:
  ProcessRunner& inner_;
  ProcessSlots& slots_;
};

}  // namespace skillrunner::handler
