#include "services/providers/batch/batching_provider.h"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/json/object.hpp>

#include "services/common/digest.h"
#include "services/providers/batch/batch_recovery.h"
#include "services/providers/batch/batch_rounds.h"
#include "services/providers/batch/batch_slot.h"
#include "services/providers/caching_provider.h"

namespace skillrunner::providers {
namespace asio = boost::asio;
namespace json = boost::json;

namespace {

// What a request was, for the journal (design.md §10.6: skill, case, repeat,
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

  std::mutex mutex;  // counts and the trackers' fields
  BatchCounts counts;
  BatchRounds rounds;
  BatchRecovery recovery;

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
        say(std::move(y)),
        rounds(std::max<std::size_t>(1, std::min(settings.max_requests, api->MaxRequests()))),
        recovery(name, mutex) {}

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
    BatchRounds::Added added = rounds.Add(slot);
    auto self = shared_from_this();
    if (!added.full.empty()) Send(std::move(added.full));
    if (added.start_timer) Spawn(self->SendLater(*added.start_timer));
  }

  // Sends a due round: one batch per part.
  void Send(std::vector<SlotPtr> slots) {
    auto self = shared_from_this();
    for (auto& part : BatchRounds::Parts(std::move(slots), *api)) Spawn(self->Flush(std::move(part)));
  }

  // Sends the round being gathered now (every running case waits).
  void SendGathered() {
    std::vector<SlotPtr> due = rounds.TakeAll();
    if (!due.empty()) Send(std::move(due));
  }

  asio::awaitable<void> SendLater(int generation) {
    auto self = shared_from_this();
    if (!co_await clock.Sleep(settings.send_after)) co_return;
    std::vector<SlotPtr> due = rounds.TakeIfStill(generation);
    if (!due.empty()) Send(std::move(due));
  }

  asio::awaitable<void> Flush(std::vector<SlotPtr> slots);
  asio::awaitable<std::expected<std::string, ProviderError>> CreateBatch(const std::vector<BatchItem>& items,
                                                                         int round);
  asio::awaitable<void> Poll(TrackerPtr tracker);
  void Refuse(const TrackerPtr& tracker, ProviderError error);
  void Deliver(const TrackerPtr& tracker, const SlotPtr& slot);
  void Resubmit(const SlotPtr& slot, const std::string& why);
  void Progress(Tracker& tracker, const BatchStatus& status);
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
    // The server's delay, when it gave one, is a floor (design.md §12.0).
    const auto wait = std::max(std::min(settings.poll_interval, std::chrono::milliseconds(5'000)),
                               created.error().retry_after.value_or(std::chrono::milliseconds(0)));
    if (!co_await clock.Sleep(wait)) co_return created;
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
      // Transient: the next poll, no sooner than the server asked (design.md §12.0).
      if (status.error().retry_after) interval = std::max(interval, *status.error().retry_after);
      continue;
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
  std::optional<BatchRecovery::Claimed> claimed = recovery.Claim(slot);
  if (!claimed) return false;
  if (claimed->start_polling) Spawn(shared_from_this()->Poll(claimed->tracker));
  if (!claimed->done) return true;
  if (claimed->tracker->refused) {
    slot->Deliver(std::unexpected(claimed->tracker->refusal));
  } else {
    Deliver(claimed->tracker, slot);
  }
  return true;
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
  co_await state_->recovery.Recover(*state_->api, state_->journal, state_->settings.run_id, state_->clock, state_->say);
  auto slot = std::make_shared<Slot>(co_await asio::this_coro::executor);
  slot->request = request;
  slot->hash = Sha256Hex(CachingProvider::Key(state_->kind, state_->name, request));
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
  co_return co_await slot->Answer();
}

}  // namespace skillrunner::providers
