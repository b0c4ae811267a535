#include "services/providers/batch/batching_provider.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/concurrent_channel.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include "services/common/digest.h"
#include "services/providers/caching_provider.h"

namespace skillrunner::providers {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

using Outcome = std::expected<ChatResponse, ProviderError>;
using Channel = asio::experimental::concurrent_channel<void(boost::system::error_code, std::shared_ptr<Outcome>)>;

struct Slot {
  ChatRequest request;
  std::string hash;
  std::string custom_id;
  int round = 0;
  int resubmits = 0;
  std::shared_ptr<Channel> channel;
  // The eval's count of waiting cases (null outside an eval) and this case.
  BatchQuorum* quorum = nullptr;
  const void* case_key = nullptr;

  // The case waits on a batch from now: counted once the request is in a
  // round or a batch, never before (a case counted waiting whose request is
  // not gathered yet would let a round go without it); the caller then
  // Checks. Not once it is answered or its Chat is gone.
  void Hold() {
    if (quorum == nullptr) return;
    std::lock_guard lock(wait_mutex_);
    if (held_ || answered_ || abandoned_) return;
    held_ = true;
    quorum->Waiting(case_key);
  }
  // It does not wait any more: its answer is on the way (a resubmission
  // Holds again).
  void Release() {
    std::lock_guard lock(wait_mutex_);
    ReleaseLocked();
  }
  // Its Chat was cancelled: never counted again, even if resubmitted.
  void Abandon() {
    std::lock_guard lock(wait_mutex_);
    abandoned_ = true;
    ReleaseLocked();
  }
  void Deliver(Outcome outcome) {
    {
      std::lock_guard lock(wait_mutex_);
      answered_ = true;
      ReleaseLocked();
    }
    channel->try_send(boost::system::error_code{}, std::make_shared<Outcome>(std::move(outcome)));
  }

 private:
  void ReleaseLocked() {
    if (!held_) return;
    held_ = false;
    quorum->Answered(case_key);
  }
  // The flags and the quorum's count change together (a Hold racing a
  // Deliver on another strand must not leave the case counted).
  std::mutex wait_mutex_;
  bool held_ = false;
  bool answered_ = false;
  bool abandoned_ = false;
};
using SlotPtr = std::shared_ptr<Slot>;

struct Tracker {
  int round = 0;
  std::string batch_id;
  std::map<std::string, SlotPtr> slots;  // waiting, by custom_id
  bool polling = false;
  bool done = false;
  bool refused = false;
  ProviderError refusal;
  std::map<std::string, BatchItemResult> results;
  std::string last_progress;
};
using TrackerPtr = std::shared_ptr<Tracker>;

// What a request was, for the journal (DESIGN 10.8: skill, case, repeat,
// role and attempt by custom_id).
json::object RequestLine(const std::string& provider, const Slot& slot) {
  const RequestMetadata& m = slot.request.metadata;
  json::object line{
      {"event", "request"},  {"provider", provider}, {"round", slot.round}, {"custom_id", slot.custom_id},
      {"hash", slot.hash},   {"skill", m.skill_id},  {"task", m.task_id},   {"role", AttemptRoleName(m.role)},
      {"attempt", m.attempt}};
  if (m.eval && !m.eval->case_id.empty()) line["case"] = m.eval->case_id;
  if (m.eval && m.eval->repeat > 0) line["repeat"] = m.eval->repeat;
  if (m.sample > 0) line["sample"] = m.sample;
  return line;
}

ProviderError Cancelled() {
  ProviderError error;
  error.kind = ProviderError::Kind::kCancelled;
  error.message = "the wait for the batch was cancelled";
  return error;
}

}  // namespace

struct BatchingProvider::State : std::enable_shared_from_this<BatchingProvider::State> {
  std::string name;
  std::string kind;
  Provider& online;
  std::shared_ptr<BatchApi> api;
  BatchJournal& journal;
  BatchSettings settings;
  Clock& clock;
  asio::any_io_executor executor;
  Say say;

  std::mutex mutex;
  std::vector<SlotPtr> pending;
  int generation = 0;
  std::map<int, TrackerPtr> trackers;                            // by round
  std::multimap<std::string, std::pair<int, std::string>> live;  // hash -> recorded (round, custom_id)
  bool recovered = false;
  bool recovering = false;
  BatchCounts counts;

  State(std::string n, std::string k, Provider& o, std::shared_ptr<BatchApi> a, BatchJournal& j, BatchSettings s,
        Clock& c, asio::any_io_executor e, Say y)
      : name(std::move(n)),
        kind(std::move(k)),
        online(o),
        api(std::move(a)),
        journal(j),
        settings(std::move(s)),
        clock(c),
        executor(std::move(e)),
        say(std::move(y)) {}

  std::size_t Limit() const { return std::max<std::size_t>(1, std::min(settings.max_requests, api->MaxRequests())); }

  // Each on a strand of its own: the HTTP client asks for an executor that runs
  // one handler at a time, and the eval's io context has several threads.
  void Spawn(asio::awaitable<void> work) {
    asio::co_spawn(asio::make_strand(executor), std::move(work), asio::detached);
  }

  bool OptedOut(const ChatRequest& request) const {
    const std::string& task = request.metadata.task_id;
    if (settings.opted_out.contains(request.metadata.skill_id)) return true;
    const std::size_t dot = task.find('.');
    return settings.opted_out.contains(task.substr(0, dot));
  }

  // Adds `slot` to the round being gathered: starts its timer when it is the
  // first, sends the round at once when it is full.
  void Enqueue(const SlotPtr& slot) {
    std::vector<SlotPtr> full;
    int timer_for = -1;
    {
      std::lock_guard lock(mutex);
      pending.push_back(slot);
      if (pending.size() >= Limit()) {
        full.swap(pending);
        ++generation;
      } else if (pending.size() == 1) {
        timer_for = generation;
      }
    }
    auto self = shared_from_this();
    if (!full.empty()) FlushGroups(std::move(full));
    if (timer_for >= 0) Spawn(self->SendLater(timer_for));
  }

  // Sends `slots`, one round per group of the API (in the order of their first request).
  void FlushGroups(std::vector<SlotPtr> slots) {
    std::vector<std::pair<std::string, std::vector<SlotPtr>>> groups;
    for (SlotPtr& slot : slots) {
      std::string group = api->GroupOf(slot->request);
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == group; });
      if (it == groups.end()) it = groups.insert(groups.end(), {std::move(group), {}});
      it->second.push_back(std::move(slot));
    }
    auto self = shared_from_this();
    for (auto& [group, members] : groups) {
      for (auto& part : SplitBySize(std::move(members))) Spawn(self->Flush(std::move(part)));
    }
  }

  // `slots` in parts of at most the API's MaxBytes of request bodies (a
  // request bigger than that alone: the provider says what it thinks of it).
  std::vector<std::vector<SlotPtr>> SplitBySize(std::vector<SlotPtr> slots) const {
    const std::size_t limit = api->MaxBytes();
    if (limit == 0) return {std::move(slots)};
    std::vector<std::vector<SlotPtr>> parts(1);
    std::size_t bytes = 0;
    for (SlotPtr& slot : slots) {
      const std::size_t size = api->RequestBytes(slot->request);
      if (!parts.back().empty() && bytes + size > limit) {
        parts.emplace_back();
        bytes = 0;
      }
      bytes += size;
      parts.back().push_back(std::move(slot));
    }
    return parts;
  }

  // Sends the round being gathered now (every running case waits).
  void SendGathered() {
    std::vector<SlotPtr> due;
    {
      std::lock_guard lock(mutex);
      if (pending.empty()) return;
      due.swap(pending);
      ++generation;
    }
    FlushGroups(std::move(due));
  }

  asio::awaitable<void> SendLater(int gen) {
    auto self = shared_from_this();
    if (!co_await clock.Sleep(settings.send_after)) co_return;
    std::vector<SlotPtr> due;
    {
      std::lock_guard lock(mutex);
      if (generation != gen || pending.empty()) co_return;
      due.swap(pending);
      ++generation;
    }
    FlushGroups(std::move(due));
  }

  asio::awaitable<void> Flush(std::vector<SlotPtr> slots);
  asio::awaitable<std::expected<std::string, ProviderError>> CreateBatch(const std::vector<BatchItem>& items,
                                                                         int round);
  asio::awaitable<void> Poll(TrackerPtr tracker);
  void Refuse(const TrackerPtr& tracker, ProviderError error);
  void Deliver(const TrackerPtr& tracker, const SlotPtr& slot);
  void Resubmit(const SlotPtr& slot, const std::string& why);
  void Progress(Tracker& tracker, const BatchStatus& status);
  asio::awaitable<void> Recover();
  bool Claim(const SlotPtr& slot);
};

asio::awaitable<void> BatchingProvider::State::Flush(std::vector<SlotPtr> slots) {
  auto self = shared_from_this();
  const int round = journal.NextRound();
  auto tracker = std::make_shared<Tracker>();
  tracker->round = round;
  std::vector<json::object> lines;
  std::vector<BatchItem> items;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    SlotPtr& slot = slots[i];
    slot->round = round;
    slot->custom_id = "r" + std::to_string(round) + "-" + std::to_string(i + 1);
    lines.push_back(RequestLine(name, *slot));
    items.push_back(BatchItem{slot->custom_id, &slot->request});
    tracker->slots[slot->custom_id] = slot;
  }
  lines.push_back(json::object{{"event", "intent"},
                               {"provider", name},
                               {"round", round},
                               {"requests", static_cast<std::int64_t>(slots.size())}});
  if (!journal.AppendAll(lines))
    say("batch: cannot write " + journal.file().string() + "; a crash now would lose track of round " +
        std::to_string(round));
  {
    std::lock_guard lock(mutex);
    trackers[round] = tracker;
    counts.requests += static_cast<int>(slots.size());
  }
  auto created = co_await CreateBatch(items, round);
  if (!created) {
    Refuse(tracker, std::move(created.error()));
    co_return;
  }
  {
    std::lock_guard lock(mutex);
    tracker->batch_id = *created;
    tracker->polling = true;
    ++counts.batches;
  }
  const json::object recorded{{"event", "batch"}, {"provider", name}, {"round", round}, {"batch_id", *created}};
  journal.Append(recorded);
  say("batch " + *created + " (round " + std::to_string(round) + ", provider " + name + "): sent " +
      std::to_string(slots.size()) + " request(s)");
  co_await Poll(tracker);
}

// Creates the batch; a transient failure is tried again (up to 3 times),
// after looking for a batch the failed try may have created all the same.
asio::awaitable<std::expected<std::string, ProviderError>> BatchingProvider::State::CreateBatch(
    const std::vector<BatchItem>& items, int round) {
  const BatchTag tag{settings.run_id, round};
  std::expected<std::string, ProviderError> created = std::unexpected(ProviderError{});
  for (int attempt = 1; attempt <= 3; ++attempt) {
    created = co_await api->Create(items, tag);
    if (created || !created.error().retryable) co_return created;
    if (!co_await clock.Sleep(std::min(settings.poll_interval, std::chrono::milliseconds(5'000)))) co_return created;
    auto found = co_await api->FindTagged(tag);
    if (found && *found) co_return **found;
  }
  co_return created;
}

asio::awaitable<void> BatchingProvider::State::Poll(TrackerPtr tracker) {
  auto self = shared_from_this();
  std::chrono::milliseconds interval = settings.poll_interval;
  std::expected<std::map<std::string, BatchItemResult>, ProviderError> results;
  for (;;) {
    if (!co_await clock.Sleep(interval)) co_return;
    interval = std::min(interval * 2, settings.poll_interval * 10);
    auto status = co_await api->Poll(tracker->batch_id);
    if (!status) {
      if (status.error().http_status == 404) {
        Refuse(tracker, std::move(status.error()));
        co_return;
      }
      continue;  // transient: the next poll
    }
    Progress(*tracker, *status);
    if (!status->ended) continue;
    if (status->refused) {
      ProviderError error;
      error.kind = ProviderError::Kind::kHttp;
      error.message = status->refusal;
      Refuse(tracker, std::move(error));
      co_return;
    }
    results = co_await api->Results(*status);
    if (results) break;
    if (results.error().http_status == 404) {
      Refuse(tracker, std::move(results.error()));
      co_return;
    }
  }
  std::map<std::string, SlotPtr> waiting;
  {
    std::lock_guard lock(mutex);
    tracker->results = std::move(*results);
    tracker->done = true;
    waiting.swap(tracker->slots);
  }
  // Every case of the batch is answered before the first goes on: a case
  // that asks again at once must not find the others still counted waiting.
  for (const auto& [custom_id, slot] : waiting) slot->Release();
  for (const auto& [custom_id, slot] : waiting) Deliver(tracker, slot);
}

void BatchingProvider::State::Deliver(const TrackerPtr& tracker, const SlotPtr& slot) {
  auto found = tracker->results.find(slot->custom_id);
  if (found == tracker->results.end()) return Resubmit(slot, "missing from the results of " + tracker->batch_id);
  const BatchItemResult& result = found->second;
  if (result.answer) {
    auto parsed = api->ParseAnswer(result, slot->request);
    if (parsed) parsed->batch_id = tracker->batch_id;
    return slot->Deliver(std::move(parsed));
  }
  if (result.error) return slot->Deliver(std::unexpected(*result.error));
  Resubmit(slot, result.why);
}

void BatchingProvider::State::Resubmit(const SlotPtr& slot, const std::string& why) {
  if (slot->resubmits >= settings.max_resubmits) {
    ProviderError error;
    error.kind = ProviderError::Kind::kHttp;
    error.message = "request " + slot->custom_id + " was left unanswered by " + std::to_string(slot->resubmits + 1) +
                    " batches (last: " + why + ")";
    return slot->Deliver(std::unexpected(std::move(error)));
  }
  journal.Append(json::object{{"event", "resubmitted"},
                              {"provider", name},
                              {"round", slot->round},
                              {"custom_id", slot->custom_id},
                              {"why", why}});
  {
    std::lock_guard lock(mutex);
    ++counts.resubmitted;
  }
  ++slot->resubmits;
  Enqueue(slot);
  slot->Hold();  // still waiting, now on the next round
  if (settings.quorum) settings.quorum->Check();
}

void BatchingProvider::State::Refuse(const TrackerPtr& tracker, ProviderError error) {
  auto self = shared_from_this();
  const std::string label = tracker->batch_id.empty()
                                ? "round " + std::to_string(tracker->round)
                                : tracker->batch_id + " (round " + std::to_string(tracker->round) + ")";
  std::string message = "the batch API of provider \"" + name + "\" refused batch " + label + ": " +
                        (error.http_status > 0 ? "HTTP " + std::to_string(error.http_status) + ": " : "") +
                        error.message;
  json::object line{{"event", "refused"}, {"provider", name}, {"round", tracker->round}, {"message", message}};
  if (!tracker->batch_id.empty()) line["batch_id"] = tracker->batch_id;
  journal.Append(line);
  std::map<std::string, SlotPtr> waiting;
  {
    std::lock_guard lock(mutex);
    tracker->done = tracker->refused = true;
    waiting.swap(tracker->slots);
    if (settings.fallback_online) counts.fallback_online += static_cast<int>(waiting.size());
  }
  say("batch: " + message +
      (settings.fallback_online
           ? "; sending its " + std::to_string(waiting.size()) + " request(s) online (batch.fallback: online)"
           : "; its cases fail (batch.fallback: online would send them online)"));
  error.kind = ProviderError::Kind::kHttp;
  error.retryable = false;
  // The retry layer puts "HTTP <status>: " before it.
  error.message = "the batch API of provider \"" + name + "\" refused batch " + label + ": " + error.message;
  tracker->refusal = error;
  // Cases that fail go on at once; those sent online wait for their answer.
  if (!settings.fallback_online) {
    for (auto& [custom_id, slot] : waiting) slot->Release();
  }
  for (auto& [custom_id, slot] : waiting) {
    if (!settings.fallback_online) {
      slot->Deliver(std::unexpected(error));
      continue;
    }
    Spawn([](std::shared_ptr<State> state, SlotPtr s) -> asio::awaitable<void> {
      s->Deliver(co_await state->online.Chat(s->request));
    }(self, slot));
  }
}

void BatchingProvider::State::Progress(Tracker& tracker, const BatchStatus& status) {
  std::string line = "batch " + tracker.batch_id + " (round " + std::to_string(tracker.round) + ", provider " + name +
                     "): " + status.state + ", " + std::to_string(status.total) +
                     " request(s): " + std::to_string(status.completed) + " completed, " +
                     std::to_string(status.failed) + " failed";
  {
    std::lock_guard lock(mutex);
    if (line == tracker.last_progress) return;
    tracker.last_progress = line;
  }
  say(line);
}

bool BatchingProvider::State::Claim(const SlotPtr& slot) {
  TrackerPtr tracker;
  bool start_polling = false;
  {
    std::lock_guard lock(mutex);
    auto found = live.find(slot->hash);
    if (found == live.end()) return false;
    slot->round = found->second.first;
    slot->custom_id = found->second.second;
    live.erase(found);
    tracker = trackers.at(slot->round);
    if (!tracker->done) {
      tracker->slots[slot->custom_id] = slot;
      start_polling = !tracker->polling;
      tracker->polling = true;
    }
  }
  if (start_polling) Spawn(shared_from_this()->Poll(tracker));
  if (!tracker->done) return true;
  if (tracker->refused) {
    slot->Deliver(std::unexpected(tracker->refusal));
  } else {
    Deliver(tracker, slot);
  }
  return true;
}

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

// Once per process, before the first request: the rounds an earlier process
// recorded become trackers whose requests later Chats claim by hash; a round
// whose batch id was not recorded (a crash between create and the record) is
// looked up by its tag.
asio::awaitable<void> BatchingProvider::State::Recover() {
  auto self = shared_from_this();
  bool wait = false;
  {
    std::lock_guard lock(mutex);
    if (recovered) co_return;
    wait = recovering;
    recovering = true;
  }
  if (wait) {
    for (;;) {
      {
        std::lock_guard lock(mutex);
        if (recovered) co_return;
      }
      if (!co_await clock.Sleep(std::chrono::milliseconds(20))) co_return;
    }
  }
  std::set<std::string> dead;
  std::map<int, RecordedRound> rounds = ReadRounds(journal.recorded(), name, dead);
  int held = 0;
  int batches = 0;
  for (auto& [number, round] : rounds) {
    if (round.refused || !round.intent) continue;
    if (round.batch_id.empty()) {
      // A named tag: g++ 12 moves a braced temporary argument bitwise inside a coroutine.
      const BatchTag tag{settings.run_id, number};
      auto found = co_await api->FindTagged(tag);
      if (!found || !*found) continue;  // never created: its requests are sent again
      round.batch_id = **found;
      const json::object adopted{
          {"event", "batch"}, {"provider", name}, {"round", number}, {"batch_id", round.batch_id}, {"adopted", true}};
      journal.Append(adopted);
      say("batch " + round.batch_id + " (round " + std::to_string(number) + ", provider " + name +
          "): created before the crash, found by its tag");
    }
    auto tracker = std::make_shared<Tracker>();
    tracker->round = number;
    tracker->batch_id = round.batch_id;
    std::lock_guard lock(mutex);
    trackers[number] = tracker;
    ++batches;
    for (const auto& [custom_id, hash] : round.requests) {
      if (dead.contains(custom_id)) continue;
      live.emplace(hash, std::make_pair(number, custom_id));
      ++held;
    }
  }
  if (held > 0) {
    say("batch: resuming with " + std::to_string(held) + " request(s) held by " + std::to_string(batches) +
        " recorded batch(es) of provider " + name + "; they are not sent again");
  }
  std::lock_guard lock(mutex);
  recovered = true;
}

BatchingProvider::BatchingProvider(std::string name, std::string kind, Provider& online, std::shared_ptr<BatchApi> api,
                                   BatchJournal& journal, BatchSettings settings, Clock& clock,
                                   asio::any_io_executor executor, Say say)
    : state_(std::make_shared<State>(std::move(name), std::move(kind), online, std::move(api), journal,
                                     std::move(settings), clock, std::move(executor), std::move(say))) {
  if (!state_->settings.quorum) return;
  state_->settings.quorum->OnAllWaiting([weak = std::weak_ptr<State>(state_)] {
    if (auto state = weak.lock()) state->SendGathered();
  });
}

BatchingProvider::~BatchingProvider() = default;

BatchCounts BatchingProvider::counts() const {
  std::lock_guard lock(state_->mutex);
  return state_->counts;
}

asio::awaitable<ChatResult> BatchingProvider::Chat(const ChatRequest& request) {
  if (state_->OptedOut(request)) co_return co_await state_->online.Chat(request);
  co_await state_->Recover();
  auto slot = std::make_shared<Slot>();
  slot->request = request;
  slot->hash = Sha256Hex(CachingProvider::Key(state_->kind, state_->name, request));
  slot->channel = std::make_shared<Channel>(co_await asio::this_coro::executor, 1);
  if (request.metadata.eval) {
    slot->quorum = state_->settings.quorum.get();
    slot->case_key = request.metadata.eval.get();
  }
  // Released when the answer comes, or here when the wait is cancelled.
  struct Abandon {
    Slot& slot;
    ~Abandon() { slot.Abandon(); }
  } abandon{*slot};
  if (!state_->Claim(slot)) state_->Enqueue(slot);
  slot->Hold();
  if (slot->quorum != nullptr) slot->quorum->Check();
  auto [ec, outcome] = co_await slot->channel->async_receive(asio::as_tuple(asio::use_awaitable));
  if (ec || !outcome) co_return std::unexpected(Cancelled());
  co_return std::move(*outcome);
}

}  // namespace skillrunner::providers
