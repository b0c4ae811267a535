#pragma once

// Limits, quotas and session memory shared by every process given the same
// `state.redis` URL (design.md §9.6). Each update is one Lua script, so it is
// atomic; keys are "<namespace>:<kind>:<name>" and expire when unused. When
// Redis is unreachable or slower than `timeout`, the state is degraded: the
// callers fall back to this process's share (limit / replicas_hint) and no
// invocation fails because of it; a probe each second reconnects, and
// sharing resumes when Redis answers in time again. Calls made while the
// first connection is still being tried wait for it (a process must not
// start on its own share only because it was fast).

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "services/common/clock.h"
#include "services/state/redis.h"

namespace skillrunner::state {

struct SharedStateOptions {
  RedisUrl url;
  std::string key_namespace = "skillrunner";
  int replicas_hint = 1;
  std::chrono::milliseconds timeout{100};
  std::chrono::milliseconds probe_interval{1000};
};

class SharedState : public std::enable_shared_from_this<SharedState> {
 public:
  // Starts connecting in the background on `executor`; until it has, the
  // state is degraded. `clock` must outlive it.
  static std::shared_ptr<SharedState> Start(boost::asio::any_io_executor executor, SharedStateOptions options,
                                            Clock& clock);
  ~SharedState();
  // Ends the background probe and closes the connection (at shutdown): commands after it answer
  // nullopt.
  void Stop();

  // Runs a Lua script atomically; nullopt (and degraded) when Redis did not
  // answer in time. A script error is a bug of ours: logged, nullopt.
  boost::asio::awaitable<std::optional<RedisReply>> Eval(std::string_view script, std::vector<std::string> keys,
                                                         std::vector<std::string> args);
  // A plain command, with the same degraded handling.
  boost::asio::awaitable<std::optional<RedisReply>> Run(std::vector<std::string> command);

  // "<namespace>:<kind>:<name>"
  std::string Key(std::string_view kind, std::string_view name) const;
  bool healthy() const { return healthy_; }
  int replicas_hint() const { return options_.replicas_hint; }
  const SharedStateOptions& options() const { return options_; }
  const boost::asio::any_io_executor& executor() const { return executor_; }
  // How often sharing was lost (for metrics).
  std::uint64_t degradations() const { return degradations_; }

 private:
  SharedState(boost::asio::any_io_executor executor, SharedStateOptions options, Clock& clock);
  boost::asio::awaitable<void> Probe();
  void Degrade(const std::string& why);

  boost::asio::any_io_executor executor_;
  SharedStateOptions options_;
  Clock& clock_;
  std::shared_ptr<RedisConnection> connection_;
  std::atomic<bool> healthy_{false};
  std::atomic<bool> settled_{false};  // the first connection attempt has ended, either way
  std::atomic<bool> stopped_{false};
  std::atomic<std::uint64_t> degradations_{0};
};

}  // namespace skillrunner::state
