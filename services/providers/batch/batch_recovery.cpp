#include "services/providers/batch/batch_recovery.h"

#include <boost/json/object.hpp>
#include <set>
#include <vector>

namespace skillrunner::providers {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// What an earlier process recorded of one round of one provider.
struct RecordedRound {
  std::string batch_id;
  bool intent = false;
  bool refused = false;
  std::vector<std::pair<std::string, std::string>> requests;  // (custom_id, hash)
};

std::string Text(const json::object& line, std::string_view key) {
  const json::value* v = line.if_contains(key);
  return v && v->is_string() ? std::string(v->as_string()) : std::string();
}

std::map<int, RecordedRound> ReadRounds(const std::vector<json::object>& recorded, const std::string& provider,
                                        std::set<std::string>& dead) {
  std::map<int, RecordedRound> rounds;
  for (const json::object& line : recorded) {
    if (Text(line, "provider") != provider) continue;
    const json::value* r = line.if_contains("round");
    if (r == nullptr || !r->is_int64()) continue;
    RecordedRound& round = rounds[static_cast<int>(r->as_int64())];
    const std::string event = Text(line, "event");
    if (event == "request") round.requests.emplace_back(Text(line, "custom_id"), Text(line, "hash"));
    if (event == "intent") round.intent = true;
    if (event == "batch") round.batch_id = Text(line, "batch_id");
    if (event == "refused") round.refused = true;
    if (event == "resubmitted") dead.insert(Text(line, "custom_id"));
  }
  return rounds;
}

}  // namespace

asio::awaitable<void> BatchRecovery::Recover(BatchApi& api, BatchJournal& journal, const std::string& run_id,
                                             Clock& clock, const Say& say) {
  bool wait = false;
  {
    std::lock_guard lock(mutex_);
    if (recovered_) co_return;
    wait = recovering_;
    recovering_ = true;
  }
  if (wait) {
    for (;;) {
      {
        std::lock_guard lock(mutex_);
        if (recovered_) co_return;
      }
      if (!co_await clock.Sleep(std::chrono::milliseconds(20))) co_return;
    }
  }
  std::set<std::string> dead;
  std::map<int, RecordedRound> rounds = ReadRounds(journal.recorded(), provider_, dead);
  int held = 0;
  int batches = 0;
  for (auto& [number, round] : rounds) {
    if (round.refused || !round.intent) continue;
    if (round.batch_id.empty()) {
      // A named tag: g++ 12 moves a braced temporary argument bitwise inside a coroutine.
      const BatchTag tag{run_id, number};
      auto found = co_await api.FindTagged(tag);
      if (!found || !*found) continue;  // never created: its requests are sent again
      round.batch_id = **found;
      const json::object adopted{{"event", "batch"},
                                 {"provider", provider_},
                                 {"round", number},
                                 {"batch_id", round.batch_id},
                                 {"adopted", true}};
      journal.Append(adopted);
      say("batch " + round.batch_id + " (round " + std::to_string(number) + ", provider " + provider_ +
          "): created before the crash, found by its tag");
    }
    auto tracker = std::make_shared<Tracker>();
    tracker->round = number;
    tracker->batch_id = round.batch_id;
    std::lock_guard lock(mutex_);
    trackers_[number] = tracker;
    ++batches;
    for (const auto& [custom_id, hash] : round.requests) {
      if (dead.contains(custom_id)) continue;
      live_.emplace(hash, std::make_pair(number, custom_id));
      ++held;
    }
  }
  if (held > 0) {
    say("batch: resuming with " + std::to_string(held) + " request(s) held by " + std::to_string(batches) +
        " recorded batch(es) of provider " + provider_ + "; they are not sent again");
  }
  std::lock_guard lock(mutex_);
  recovered_ = true;
}

std::optional<BatchRecovery::Claimed> BatchRecovery::Claim(const SlotPtr& slot) {
  std::lock_guard lock(mutex_);
  auto found = live_.find(slot->hash);
  if (found == live_.end()) return std::nullopt;
  slot->round = found->second.first;
  slot->custom_id = found->second.second;
  live_.erase(found);
  Claimed claimed;
  claimed.tracker = trackers_.at(slot->round);
  claimed.done = claimed.tracker->done;
  if (!claimed.done) {
    claimed.tracker->slots[slot->custom_id] = slot;
    claimed.start_polling = !claimed.tracker->polling;
    claimed.tracker->polling = true;
  }
  return claimed;
}

}  // namespace skillrunner::providers
