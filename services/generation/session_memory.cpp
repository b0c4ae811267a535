#include "services/generation/session_memory.h"

#include "services/generation/prompt_builder.h"

namespace skillrunner::generation {

SessionMemory::SessionMemory(std::size_t max_sessions, std::chrono::seconds ttl, std::size_t per_skill)
    : max_sessions_(max_sessions), ttl_(ttl), per_skill_(per_skill) {}

void SessionMemory::Evict(Clock::time_point now) {
  while (!lru_.empty() && (lru_.size() > max_sessions_ || now - lru_.back().last_used > ttl_)) {
    index_.erase(lru_.back().session);
    lru_.pop_back();
  }
}

void SessionMemory::Remember(const std::string& session, const std::string& skill,
                             const std::vector<FieldError>& errors, Clock::time_point now) {
  if (errors.empty()) return;
  std::lock_guard lock(mutex_);
  auto it = index_.find(session);
  if (it == index_.end()) {
    lru_.push_front(Entry{session, now, {}});
    index_[session] = lru_.begin();
  } else {
    lru_.splice(lru_.begin(), lru_, it->second);
    lru_.front().last_used = now;
  }
  auto& lines = lru_.front().by_skill[skill];
  for (const auto& e : errors) {
    lines.push_back(ShownPointer(e.path) + ": " + e.message);
    if (lines.size() > per_skill_) lines.erase(lines.begin());
  }
  Evict(now);
}

std::vector<std::string> SessionMemory::Recall(const std::string& session, const std::string& skill,
                                               Clock::time_point now) {
  std::lock_guard lock(mutex_);
  Evict(now);
  auto it = index_.find(session);
  if (it == index_.end()) return {};
  auto found = it->second->by_skill.find(skill);
  return found == it->second->by_skill.end() ? std::vector<std::string>{} : found->second;
}

std::size_t SessionMemory::sessions() const {
  std::lock_guard lock(mutex_);
  return lru_.size();
}

}  // namespace skillrunner::generation
