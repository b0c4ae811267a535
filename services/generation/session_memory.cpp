#include "services/generation/session_memory.h"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>

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

namespace {

// KEYS: the session's list for a skill. ARGV: ttl_ms, lines to keep, lines...
constexpr std::string_view kRemember = R"lua(
for i = 3, #ARGV do redis.call('RPUSH', KEYS[1], ARGV[i]) end
redis.call('LTRIM', KEYS[1], -tonumber(ARGV[2]), -1)
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[1]))
return 1
)lua";

}  // namespace

void SessionMemory::Share(std::shared_ptr<state::SharedState> shared) { shared_ = std::move(shared); }

std::string SessionMemory::SharedKey(const std::string& session, const std::string& skill) const {
  // Length-prefixed, so that no session and skill pair reads as another.
  return shared_->Key("session", std::to_string(session.size()) + ":" + session + ":" + skill);
}

void SessionMemory::Remember(const std::string& session, const std::string& skill,
                             const std::vector<FieldError>& errors, Clock::time_point now) {
  if (errors.empty()) return;
  if (shared_) {
    std::vector<std::string> args{std::to_string(std::chrono::milliseconds(ttl_).count()), std::to_string(per_skill_)};
    for (const auto& e : errors) args.push_back(ShownPointer(e.path) + ": " + e.message);
    boost::asio::co_spawn(
        shared_->executor(),
        [](std::shared_ptr<state::SharedState> state, std::string key,
           std::vector<std::string> args) -> boost::asio::awaitable<void> {
          std::vector<std::string> keys{std::move(key)};
          co_await state->Eval(kRemember, std::move(keys), std::move(args));
        }(shared_, SharedKey(session, skill), std::move(args)),
        boost::asio::detached);
  }
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

boost::asio::awaitable<std::vector<std::string>> SessionMemory::Recall(const std::string& session,
                                                                       const std::string& skill,
                                                                       Clock::time_point now) {
  if (shared_) {
    std::vector<std::string> command{"LRANGE", SharedKey(session, skill), "0", "-1"};
    auto reply = co_await shared_->Run(std::move(command));
    if (reply) {
      std::vector<std::string> lines;
      for (const auto& element : reply->elements) lines.push_back(element.text);
      co_return lines;
    }
  }
  co_return RecallLocally(session, skill, now);
}

std::vector<std::string> SessionMemory::RecallLocally(const std::string& session, const std::string& skill,
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
