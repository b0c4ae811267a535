#include "runner/rollout/rollout_book.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/json/parse.hpp>
#include <chrono>

#include "services/common/clock.h"

namespace skillrunner::rollout {
namespace json = boost::json;

std::string_view ArmName(Arm arm) { return arm == Arm::kStable ? "stable" : "candidate"; }

namespace {

constexpr std::string_view kStateNames[] = {"running", "paused", "ready", "rolled_back", "held"};
constexpr int kFormat = 1;  // of the saved object
// A shared rollout's hash fields per measure, after its name: stable n, successes, candidate n, successes.
constexpr const char* kFields[] = {".stable.n", ".stable.successes", ".candidate.n", ".candidate.successes"};

std::int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(RealClock().WallNow().time_since_epoch()).count();
}

std::vector<MeasureTally> FreshTallies(const RolloutSpec& spec) {
  std::vector<MeasureTally> tallies;
  for (Measure measure : spec.decide.measures) tallies.push_back(MeasureTally{measure, {}, {}, 0, 0});
  return tallies;
}

RolloutStatus FreshStatus(const RolloutSpec& spec) {
  RolloutStatus status;
  status.traffic = spec.traffic;
  status.tallies = FreshTallies(spec);
  return status;
}

stats::DecideOptions OptionsOf(const DecideRules& rules) {
  stats::DecideOptions options;
  options.alpha = rules.alpha;
  options.tau = rules.tau;
  options.min_samples = rules.min_samples;
  options.margin = rules.margin;
  return options;
}

// Whether every measure has min_samples more per arm since the step began
// (the counts carry across steps; each step still waits its own samples).
bool StepSampled(const RolloutStatus& status, std::int64_t min_samples) {
  return std::all_of(status.tallies.begin(), status.tallies.end(), [&](const MeasureTally& t) {
    return t.stable.n - t.stable_at_step >= min_samples && t.candidate.n - t.candidate_at_step >= min_samples;
  });
}

json::object ArmJson(const stats::ArmCounts& counts) { return {{"n", counts.n}, {"successes", counts.successes}}; }

std::optional<stats::ArmCounts> ArmFromJson(const json::value* value) {
  const json::object* o = value ? value->if_object() : nullptr;
  const json::value* n = o ? o->if_contains("n") : nullptr;
  const json::value* successes = o ? o->if_contains("successes") : nullptr;
  if (!n || !successes || !n->is_int64() || !successes->is_int64()) return std::nullopt;
  if (n->as_int64() < 0 || successes->as_int64() < 0 || successes->as_int64() > n->as_int64()) return std::nullopt;
  return stats::ArmCounts{n->as_int64(), successes->as_int64()};
}

// The saved counts of the measures the spec still has (a measure it dropped is forgotten).
void ReadTallies(const json::array& saved, std::vector<MeasureTally>& tallies) {
  for (MeasureTally& tally : tallies) {
    for (const json::value& item : saved) {
      const json::object* o = item.if_object();
      const json::value* measure = o ? o->if_contains("measure") : nullptr;
      if (!measure || !measure->is_string() || measure->as_string() != MeasureName(tally.measure)) continue;
      auto stable = ArmFromJson(o->if_contains("stable"));
      auto candidate = ArmFromJson(o->if_contains("candidate"));
      if (!stable || !candidate) continue;
      tally.stable = *stable;
      tally.candidate = *candidate;
      auto at_step = [o](std::string_view key, std::int64_t n) {
        const json::value* v = o->if_contains(key);
        return v && v->is_int64() ? std::clamp<std::int64_t>(v->as_int64(), 0, n) : 0;
      };
      tally.stable_at_step = at_step("stable_at_step", tally.stable.n);
      tally.candidate_at_step = at_step("candidate_at_step", tally.candidate.n);
    }
  }
}

}  // namespace

// A reload may change the rollout block of the same candidate: the new steps,
// traffic and measures apply from here (a rolled-back rollout stays at 0).
void RolloutBook::Respec(Entry& entry, const RolloutSpec& spec) {
  entry.seen = &spec;
  entry.spec = spec;
  RolloutStatus& status = entry.status;
  std::vector<MeasureTally> tallies = FreshTallies(spec);
  for (MeasureTally& tally : tallies) {
    for (const MeasureTally& old : status.tallies) {
      if (old.measure == tally.measure) tally = old;
    }
  }
  status.tallies = std::move(tallies);
  if (!spec.steps.empty()) status.step = std::min(status.step, spec.steps.size() - 1);
  if (status.state != State::kRolledBack) status.traffic = spec.steps.empty() ? spec.traffic : spec.steps[status.step];
}

std::string_view StateName(State state) { return kStateNames[static_cast<int>(state)]; }

std::optional<State> ParseState(std::string_view word) {
  for (int i = 0; i < 5; ++i) {
    if (kStateNames[i] == word) return static_cast<State>(i);
  }
  return std::nullopt;
}

json::object ToJson(const RolloutStatus& status) {
  json::array tallies;
  for (const MeasureTally& t : status.tallies) {
    tallies.push_back(json::object{{"measure", MeasureName(t.measure)},
                                   {"stable", ArmJson(t.stable)},
                                   {"candidate", ArmJson(t.candidate)},
                                   {"stable_at_step", t.stable_at_step},
                                   {"candidate_at_step", t.candidate_at_step}});
  }
  return {{"format", kFormat},
          {"state", StateName(status.state)},
          {"step", status.step},
          {"traffic", status.traffic},
          {"tallies", std::move(tallies)},
          {"reason", status.reason},
          {"decided_at_ms", status.decided_at_ms},
          {"applied_command", status.applied_command}};
}

std::optional<RolloutStatus> StatusFromJson(const json::object& saved, const RolloutSpec& spec) {
  const json::value* format = saved.if_contains("format");
  const json::value* state = saved.if_contains("state");
  const json::value* step = saved.if_contains("step");
  const json::value* traffic = saved.if_contains("traffic");
  if (!format || !format->is_int64() || format->as_int64() != kFormat || !state || !state->is_string() || !step ||
      !step->is_int64() || step->as_int64() < 0 || !traffic || !traffic->is_number()) {
    return std::nullopt;
  }
  RolloutStatus status = FreshStatus(spec);
  auto parsed = ParseState(state->as_string());
  if (!parsed) return std::nullopt;
  status.state = *parsed;
  status.step = std::min<std::size_t>(step->as_int64(), spec.steps.empty() ? 0 : spec.steps.size() - 1);
  status.traffic = traffic->to_number<double>();
  if (const json::value* reason = saved.if_contains("reason"); reason && reason->is_string()) {
    status.reason = std::string(reason->as_string());
  }
  if (const json::value* id = saved.if_contains("applied_command"); id && id->is_string()) {
    status.applied_command = std::string(id->as_string());
  }
  if (const json::value* at = saved.if_contains("decided_at_ms"); at && at->is_int64()) {
    status.decided_at_ms = at->as_int64();
  }
  if (const json::value* tallies = saved.if_contains("tallies"); tallies && tallies->is_array()) {
    ReadTallies(tallies->as_array(), status.tallies);
  }
  return status;
}

RolloutBook::RolloutBook(std::unique_ptr<RolloutStore> store) : store_(std::move(store)) {}

RolloutBook::Entry& RolloutBook::EntryLocked(const RolloutSpec& spec) {
  const std::string& name = spec.key.name;
  auto it = entries_.find(name);
  if (it != entries_.end()) {
    if (it->second.seen != &spec) Respec(it->second, spec);
    return it->second;
  }
  Entry entry{spec, &spec, FreshStatus(spec), false, {}, false};
  if (store_) {
    if (auto saved = store_->Load(name)) {
      if (auto status = StatusFromJson(*saved, spec)) {
        entry.status = std::move(*status);
      } else {
        spdlog::warn("rollout {}: the saved state is not one this build reads; starting anew", name);
      }
    }
  }
  Entry& added = entries_.emplace(name, std::move(entry)).first->second;
  if (auto event = TakeCommandLocked(added)) {
    spdlog::info("rollout {}: an operator's command while it was not served: now {}", name,
                 StateName(event->status.state));
  }
  return added;
}

double RolloutBook::Traffic(const RolloutSpec& spec) {
  std::lock_guard lock(mutex_);
  const Entry& entry = EntryLocked(spec);
  return shared_ && !entry.known ? 0 : entry.status.traffic;  // shared, nothing heard yet: stable
}

void RolloutBook::Count(const RolloutSpec& spec, Arm arm, Measure measure, bool success) {
  std::optional<RolloutEvent> event;
  {
    std::lock_guard lock(mutex_);
    Entry& entry = EntryLocked(spec);
    entry.pending.resize(entry.status.tallies.size());
    for (std::size_t i = 0; i < entry.status.tallies.size(); ++i) {
      MeasureTally& tally = entry.status.tallies[i];
      if (tally.measure != measure) continue;
      stats::ArmCounts& counts = arm == Arm::kStable ? tally.stable : tally.candidate;
      ++counts.n;
      counts.successes += success ? 1 : 0;
      entry.dirty = true;
      const std::size_t at = arm == Arm::kStable ? 0 : 2;
      entry.pending[i][at] += 1;
      entry.pending[i][at + 1] += success ? 1 : 0;
    }
    if (!shared_) event = DecideLocked(entry);  // shared: the replica holding the lock decides
  }
  Notify(event);
}

std::optional<RolloutEvent> RolloutBook::DecideLocked(Entry& entry) {
  RolloutStatus& status = entry.status;
  if (status.state == State::kRolledBack || status.state == State::kHeld) return std::nullopt;
  std::vector<stats::MeasureCounts> counts;
  for (const MeasureTally& t : status.tallies)
    counts.push_back({std::string(MeasureName(t.measure)), t.stable, t.candidate});
  // Decided after every count: the reason is written only when the decision changes something.
  stats::DecideOptions options = OptionsOf(entry.spec.decide);
  options.explain = false;
  const stats::Verdict verdict = stats::Decide(counts, options).verdict;
  const State from = status.state;
  const std::size_t step = status.step;
  if (verdict == stats::Verdict::kRollback) {
    const bool rollback = entry.spec.on_worse == OnWorse::kRollback;
    status.state = rollback ? State::kRolledBack : State::kHeld;
    if (rollback) status.traffic = 0;
  } else if (verdict == stats::Verdict::kStepUp && status.state == State::kRunning &&
             StepSampled(status, entry.spec.decide.min_samples)) {
    if (status.step + 1 < entry.spec.steps.size()) {
      status.traffic = entry.spec.steps[++status.step];
      for (MeasureTally& t : status.tallies) {
        t.stable_at_step = t.stable.n;
        t.candidate_at_step = t.candidate.n;
      }
    } else {
      status.state = State::kReady;
    }
  }
  if (status.state == from && status.step == step) return std::nullopt;
  options.explain = true;
  status.reason = stats::Decide(counts, options).reason;
  status.decided_at_ms = NowMs();
  SaveLocked(entry, true);
  return RolloutEvent{entry.spec.key, from, status};
}

std::optional<Error> Refusal(const RolloutSpec& spec, State state, Command command) {
  const bool applies = command == Command::kPause    ? state == State::kRunning
                       : command == Command::kResume ? state == State::kPaused
                                                     : state != State::kRolledBack;
  if (applies) return std::nullopt;
  const std::string_view what = command == Command::kPause    ? "pause"
                                : command == Command::kResume ? "resume"
                                                              : "roll back";
  return Error{ErrorCode::kConfigInvalid,
               "cannot " + std::string(what) + " the rollout of \"" + spec.key.skill + "\": it is " +
                   std::string(StateName(state)),
               {},
               {}};
}

std::string_view CommandName(Command command) {
  return command == Command::kPause ? "pause" : command == Command::kResume ? "resume" : "rollback";
}

std::expected<RolloutEvent, Error> RolloutBook::ApplyLocked(Entry& entry, Command command) {
  RolloutStatus& status = entry.status;
  const State from = status.state;
  if (auto refused = Refusal(entry.spec, from, command)) return std::unexpected(std::move(*refused));
  if (command == Command::kPause) {
    status.state = State::kPaused;
    status.reason = "paused by an operator";
  } else if (command == Command::kResume) {
    status.state = State::kRunning;
    status.reason = "resumed by an operator";
  } else {
    status.state = State::kRolledBack;
    status.traffic = 0;
    status.reason = "rolled back by an operator";
  }
  status.decided_at_ms = NowMs();
  SaveLocked(entry, true);
  return RolloutEvent{entry.spec.key, from, status};
}

Result<RolloutStatus> RolloutBook::Apply(const RolloutSpec& spec, Command command) {
  std::expected<RolloutEvent, Error> event;
  {
    std::lock_guard lock(mutex_);
    event = ApplyLocked(EntryLocked(spec), command);
  }
  if (!event) return std::unexpected(std::move(event.error()));
  Notify(*event);
  return event->status;
}

std::optional<RolloutEvent> RolloutBook::TakeCommandLocked(Entry& entry) {
  if (!store_) return std::nullopt;
  return ApplyCommandLocked(entry, store_->LoadCommand(entry.spec.key.name));
}

std::optional<RolloutEvent> RolloutBook::ApplyCommandLocked(Entry& entry, const std::optional<json::object>& saved) {
  const json::value* id = saved ? saved->if_contains("id") : nullptr;
  const json::value* word = saved ? saved->if_contains("command") : nullptr;
  if (!id || !id->is_string() || !word || !word->is_string() || id->as_string() == entry.status.applied_command) {
    return std::nullopt;
  }
  entry.status.applied_command = std::string(id->as_string());
  const std::string_view command = word->as_string();
  std::expected<RolloutEvent, Error> event = std::unexpected(Error{ErrorCode::kConfigInvalid, "not a command", {}, {}});
  for (Command known : {Command::kPause, Command::kResume, Command::kRollback}) {
    if (command == CommandName(known)) event = ApplyLocked(entry, known);
  }
  if (!event) {
    spdlog::warn("rollout {}: an operator's {}: {}", entry.spec.key.skill, command, event.error().message);
    SaveLocked(entry, true);  // applied (as far as it goes): not again
    return std::nullopt;
  }
  return *event;
}

void RolloutBook::Sync() {
  std::vector<RolloutEvent> events;
  {
    std::lock_guard lock(mutex_);
    for (auto& [name, entry] : entries_) {
      if (auto event = TakeCommandLocked(entry)) events.push_back(std::move(*event));
    }
  }
  for (const auto& event : events) Notify(event);
}

json::object CommandJson(std::string_view command) {
  static std::atomic<std::uint64_t> serial{0};
  const std::int64_t at = NowMs();
  return {{"command", command},
          {"id", std::to_string(at) + "-" + std::to_string(::getpid()) + "-" + std::to_string(++serial)},
          {"at_ms", at}};
}

RolloutStatus RolloutBook::Status(const RolloutSpec& spec) {
  std::lock_guard lock(mutex_);
  return EntryLocked(spec).status;
}

void RolloutBook::SaveLocked(Entry& entry, bool durable) {
  entry.dirty = false;
  if (store_) store_->Save(entry.spec.key.name, ToJson(entry.status), durable);
}

// Under the lock, so that counts copied before a decision never land after it (a file of a few
// hundred bytes, not synced: tens of microseconds, once a second).
void RolloutBook::Flush() {
  std::lock_guard lock(mutex_);
  for (auto& [name, entry] : entries_) {
    if (entry.dirty) SaveLocked(entry, false);
  }
}

std::vector<RolloutBook::Deltas> RolloutBook::TakeDeltas() {
  std::lock_guard lock(mutex_);
  std::vector<Deltas> out;
  for (auto& [name, entry] : entries_) {
    Deltas& deltas = out.emplace_back(Deltas{entry.spec, {}});
    entry.pending.resize(entry.status.tallies.size());
    for (std::size_t i = 0; i < entry.pending.size(); ++i) {
      const std::string measure(MeasureName(entry.status.tallies[i].measure));
      for (std::size_t f = 0; f < 4; ++f) {
        if (entry.pending[i][f] != 0) deltas.fields.emplace_back(measure + kFields[f], entry.pending[i][f]);
      }
      entry.pending[i] = {};
    }
  }
  return out;
}

void RolloutBook::Restore(const Deltas& deltas) {
  std::lock_guard lock(mutex_);
  Entry& entry = EntryLocked(deltas.spec);
  entry.pending.resize(entry.status.tallies.size());
  for (const auto& [field, increment] : deltas.fields) {
    for (std::size_t i = 0; i < entry.status.tallies.size(); ++i) {
      const std::string measure(MeasureName(entry.status.tallies[i].measure));
      for (std::size_t f = 0; f < 4; ++f) {
        if (field == measure + kFields[f]) entry.pending[i][f] += increment;
      }
    }
  }
}

namespace {

// The sums of a shared rollout's counts, plus what this replica counted since it sent its deltas.
void SetSums(std::vector<MeasureTally>& tallies, const std::vector<std::array<std::int64_t, 4>>& pending,
             const std::map<std::string, std::int64_t>& sums) {
  auto sum = [&sums](const std::string& field) {
    auto it = sums.find(field);
    return it == sums.end() ? std::int64_t{0} : std::max<std::int64_t>(0, it->second);
  };
  for (std::size_t i = 0; i < tallies.size(); ++i) {
    MeasureTally& t = tallies[i];
    const std::string m(MeasureName(t.measure));
    const auto& own = i < pending.size() ? pending[i] : std::array<std::int64_t, 4>{};
    t.stable.n = sum(m + ".stable.n") + own[0];
    t.stable.successes = std::min(t.stable.n, sum(m + ".stable.successes") + own[1]);
    t.candidate.n = sum(m + ".candidate.n") + own[2];
    t.candidate.successes = std::min(t.candidate.n, sum(m + ".candidate.successes") + own[3]);
  }
}

std::optional<json::object> ParsedObject(std::string_view text) {
  if (text.empty()) return std::nullopt;
  boost::system::error_code ec;
  json::value value = json::parse(text, ec);
  if (ec || !value.is_object()) return std::nullopt;
  return std::move(value.as_object());
}

}  // namespace

std::optional<json::object> RolloutBook::Adopt(const RolloutSpec& spec, const std::map<std::string, std::int64_t>& sums,
                                               std::string_view state, std::string_view command, bool decide) {
  std::vector<RolloutEvent> events;
  std::optional<json::object> write;
  {
    std::lock_guard lock(mutex_);
    Entry& entry = EntryLocked(spec);
    entry.known = true;
    RolloutStatus& status = entry.status;
    const State before = status.state;
    const std::size_t step = status.step;
    if (auto saved = ParsedObject(state); saved) {
      if (auto decided = StatusFromJson(*saved, entry.spec)) {
        std::vector<MeasureTally> tallies = std::move(status.tallies);
        status = std::move(*decided);
        for (std::size_t i = 0; i < tallies.size() && i < status.tallies.size(); ++i) {
          tallies[i].stable_at_step = status.tallies[i].stable_at_step;
          tallies[i].candidate_at_step = status.tallies[i].candidate_at_step;
        }
        status.tallies = std::move(tallies);
      }
    }
    SetSums(status.tallies, entry.pending, sums);
    if (decide) {
      if (auto event = ApplyCommandLocked(entry, ParsedObject(command))) events.push_back(std::move(*event));
      if (auto event = DecideLocked(entry)) events.push_back(std::move(*event));
      if (!events.empty() || state.empty()) write = ToJson(status);
    } else if (status.state != before || status.step != step) {
      events.push_back(RolloutEvent{entry.spec.key, before, status});
    }
  }
  for (const auto& event : events) Notify(event);
  return write;
}

void RolloutBook::Notify(const std::optional<RolloutEvent>& event) const {
  if (!event) return;
  const RolloutStatus& status = event->status;
  const auto level =
      status.state == State::kRolledBack || status.state == State::kHeld ? spdlog::level::warn : spdlog::level::info;
  spdlog::log(level, "rollout of {}: version {} {} -> {} (traffic {:.4g}, step {}): {}", event->key.skill,
              event->key.candidate_version, StateName(event->from), StateName(status.state), status.traffic,
              status.step, status.reason);
  if (observer_) observer_(*event);
}

}  // namespace skillrunner::rollout
