#pragma once

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "services/common/error.h"
#include "services/state/shared_state.h"

namespace skillrunner::generation {

// Remembers the last validation errors per (session, skill) so that the next
// invocation of that skill in the session can be told to avoid them. Bounded:
// at most `max_sessions` sessions (least recently used evicted), each
// forgotten `ttl` after its last use. Thread-safe. Shared (Share) it is kept
// in Redis too, so that any replica recalls what another remembered; while
// the shared state is degraded, this process's memory answers.
class SessionMemory {
 public:
  using Clock = std::chrono::steady_clock;  // time points of skillrunner::Clock

  explicit SessionMemory(std::size_t max_sessions = 10'000, std::chrono::seconds ttl = std::chrono::hours(1),
                         std::size_t per_skill = 3);

  // Keeps sessions in `shared` as well from now on.
  void Share(std::shared_ptr<state::SharedState> shared);

  void Remember(const std::string& session, const std::string& skill, const std::vector<FieldError>& errors,
                Clock::time_point now);
  // "pointer: message" lines, oldest first; empty when nothing is known.
  boost::asio::awaitable<std::vector<std::string>> Recall(const std::string& session, const std::string& skill,
                                                          Clock::time_point now);
  std::size_t sessions() const;

 private:
  struct Entry {
    std::string session;
    Clock::time_point last_used;
    std::unordered_map<std::string, std::vector<std::string>> by_skill;
  };
  void Evict(Clock::time_point now);
  std::vector<std::string> RecallLocally(const std::string& session, const std::string& skill, Clock::time_point now);
  std::string SharedKey(const std::string& session, const std::string& skill) const;

  std::shared_ptr<state::SharedState> shared_;
  std::size_t max_sessions_;
  std::chrono::seconds ttl_;
  std::size_t per_skill_;
  mutable std::mutex mutex_;
  std::list<Entry> lru_;  // most recent first
  std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace skillrunner::generation
