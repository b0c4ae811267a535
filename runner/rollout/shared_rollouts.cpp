#include "runner/rollout/shared_rollouts.h"

#include <boost/json/serialize.hpp>

namespace skillrunner::rollout {
namespace json = boost::json;

namespace {

// KEYS: counts, state, lock, command. ARGV: replica, lock ms, then field/increment pairs.
// Returns {the counts' fields and sums, the state ("" for none), 1 when this replica holds the
// lock, the command ("" for none)}.
constexpr std::string_view kExchange = R"lua(
for i = 3, #ARGV, 2 do redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1]) end
local mine = redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2])
if not mine and redis.call('GET', KEYS[3]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
  mine = true
end
return {redis.call('HGETALL', KEYS[1]), redis.call('GET', KEYS[2]) or '', mine and 1 or 0,
        redis.call('GET', KEYS[4]) or ''}
)lua";

constexpr std::string_view kLockMs = "2000";

std::map<std::string, std::int64_t> Sums(const state::RedisReply& pairs) {
  std::map<std::string, std::int64_t> sums;
  for (std::size_t i = 0; i + 1 < pairs.elements.size(); i += 2) {
    try {
      sums[pairs.elements[i].text] = std::stoll(pairs.elements[i + 1].text);
    } catch (const std::exception&) {
      // not a count of ours: left out
    }
  }
  return sums;
}

std::vector<std::string> SetCommand(std::string key, std::string value) {
  return {"SET", std::move(key), std::move(value)};
}

}  // namespace

std::vector<std::string> SharedRollouts::Keys(const state::SharedState& shared, const RolloutKey& key) {
  return {CountsKey(shared, key), StateKey(shared, key), LockKey(shared, key), CommandKey(shared, key)};
}

SharedRollouts::SharedRollouts(std::shared_ptr<state::SharedState> shared, std::shared_ptr<RolloutBook> book,
                               std::string replica)
    : shared_(std::move(shared)), book_(std::move(book)), replica_(std::move(replica)) {}

std::string SharedRollouts::CountsKey(const state::SharedState& shared, const RolloutKey& key) {
  return shared.Key("rollout-counts", key.name);
}
std::string SharedRollouts::StateKey(const state::SharedState& shared, const RolloutKey& key) {
  return shared.Key("rollout-state", key.name);
}
std::string SharedRollouts::LockKey(const state::SharedState& shared, const RolloutKey& key) {
  return shared.Key("rollout-lock", key.name);
}
std::string SharedRollouts::CommandKey(const state::SharedState& shared, const RolloutKey& key) {
  return shared.Key("rollout-command", key.name);
}

boost::asio::awaitable<void> SharedRollouts::Exchange() {
  for (RolloutBook::Deltas& deltas : book_->TakeDeltas()) {
    const RolloutKey& key = deltas.spec.key;
    std::vector<std::string> args{replica_, std::string(kLockMs)};
    for (const auto& [field, increment] : deltas.fields) {
      args.push_back(field);
      args.push_back(std::to_string(increment));
    }
    // Named, not braced in the co_await: g++ 12 cannot build an initializer list in a coroutine's frame.
    std::vector<std::string> keys = Keys(*shared_, key);
    auto reply = co_await shared_->Eval(kExchange, std::move(keys), std::move(args));
    if (!reply || reply->elements.size() != 4) {
      book_->Restore(deltas);  // not counted in Redis: sent again next time
      continue;
    }
    const bool decide = reply->elements[2].integer == 1;
    auto write =
        book_->Adopt(deltas.spec, Sums(reply->elements[0]), reply->elements[1].text, reply->elements[3].text, decide);
    if (write) {
      std::vector<std::string> set = SetCommand(StateKey(*shared_, key), json::serialize(*write));
      co_await shared_->Run(std::move(set));
    }
  }
}

}  // namespace skillrunner::rollout
