#pragma once

// The state of every rollout a process serves (design.md §11.2): the
// candidate's share of calls now, each arm's counts per measure, and the
// sequential decisions they lead to (rollback, step up, ready). Thread-safe.
// Decisions and operators' commands are saved to a RolloutStore at once, the
// counts when Flush runs (serve: once a second), so that a restart never
// sends calls to a candidate that was rolled back.

#include <array>
#include <boost/json/object.hpp>
#include <cstdint>
#include <expected>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/rollout/rollout_spec.h"
#include "runner/stats/sequential.h"
#include "services/common/error.h"

namespace skillrunner::rollout {

enum class Arm { kStable, kCandidate };
std::string_view ArmName(Arm arm);  // "stable" | "candidate"

// running: deciding; paused: traffic kept, no step up (a worse candidate is
// still rolled back); ready: past the last step, waiting for a person to
// promote; rolled_back: traffic 0 for good; held: worse, on_worse: hold.
enum class State { kRunning, kPaused, kReady, kRolledBack, kHeld };
std::string_view StateName(State state);
std::optional<State> ParseState(std::string_view word);

// One measure's counts per arm, and how many each arm had when the step began.
struct MeasureTally {
  Measure measure = Measure::kOk;
  stats::ArmCounts stable;
  stats::ArmCounts candidate;
  std::int64_t stable_at_step = 0;
  std::int64_t candidate_at_step = 0;
};

// What a rollout has come to: what the store keeps and status shows.
struct RolloutStatus {
  State state = State::kRunning;
  std::size_t step = 0;  // into the spec's steps (0 without steps)
  double traffic = 0;    // the candidate's share now
  std::vector<MeasureTally> tallies;
  std::string reason;              // of the last decision or command
  std::string applied_command;     // the id of the last operator's command applied
  std::int64_t decided_at_ms = 0;  // its time, Unix milliseconds (0: none yet)
};

// Where decisions persist (the state dir, Redis), and where operators leave
// their commands for the process that decides. Thread-safe.
class RolloutStore {
 public:
  virtual ~RolloutStore() = default;
  // The state saved under `name`, or nullopt when there is none.
  virtual std::optional<boost::json::object> Load(const std::string& name) = 0;
  // Saves; `durable`: a decision, which must survive a crash (the counts need not).
  virtual void Save(const std::string& name, const boost::json::object& state, bool durable) = 0;
  // An operator's latest command for the rollout {"command", "id", "at_ms"}, or nullopt.
  virtual std::optional<boost::json::object> LoadCommand(const std::string& name) = 0;
  virtual void SaveCommand(const std::string& name, const boost::json::object& command) = 0;
};

// A command as an operator leaves it in the store: {"command": pause|resume|rollback, "id", "at_ms"}.
boost::json::object CommandJson(std::string_view command);

// Files under `dir`, one per rollout, replaced whole (written aside, then renamed).
std::unique_ptr<RolloutStore> MakeDirStore(std::string dir);

boost::json::object ToJson(const RolloutStatus& status);
// Nullopt for an object this build did not write (a newer build's, a damaged file).
std::optional<RolloutStatus> StatusFromJson(const boost::json::object& saved, const RolloutSpec& spec);

// A decision or command as it happened, for logs, metrics and trace events.
struct RolloutEvent {
  RolloutKey key;
  State from = State::kRunning;
  RolloutStatus status;
};

enum class Command { kPause, kResume, kRollback };
std::string_view CommandName(Command command);  // "pause" | "resume" | "rollback"
// Why `command` does not apply to a rollout in `state` (pause needs running, resume paused,
// rollback anything not rolled back yet): CONFIG_INVALID; nullopt when it applies.
std::optional<Error> Refusal(const RolloutSpec& spec, State state, Command command);

class RolloutBook {
 public:
  // `store` may be null (nothing persists).
  explicit RolloutBook(std::unique_ptr<RolloutStore> store);

  // Called with each decision and command (under no lock of the book's).
  void set_observer(std::function<void(const RolloutEvent&)> observer) { observer_ = std::move(observer); }

  // The candidate's share of calls now (the hot path): 0 once rolled back.
  double Traffic(const RolloutSpec& spec);
  // One counted call's measure; decides when the counts call for it.
  void Count(const RolloutSpec& spec, Arm arm, Measure measure, bool success);
  // An operator's command: pause needs a running rollout, resume a paused one, rollback one not
  // rolled back yet; else CONFIG_INVALID saying why.
  Result<RolloutStatus> Apply(const RolloutSpec& spec, Command command);
  RolloutStatus Status(const RolloutSpec& spec);
  // Saves the counts changed since the last flush.
  void Flush();

  // Shared by replicas (state.redis; shared_rollouts.h): counts are summed in Redis and one
  // replica decides, so this book decides nothing itself and, until it first hears from Redis,
  // sends no call to a candidate. Call before the first count.
  void SetShared() {
    shared_ = true;
    store_.reset();  // Redis keeps the state
  }
  bool shared() const { return shared_; }
  // Each rollout's counts since the last take, as Redis hash fields ("ok.stable.n",
  // "ok.stable.successes", ...) with their increments.
  struct Deltas {
    RolloutSpec spec;
    std::vector<std::pair<std::string, std::int64_t>> fields;
  };
  std::vector<Deltas> TakeDeltas();
  // Deltas Redis did not take, counted again at the next exchange.
  void Restore(const Deltas& deltas);
  // What Redis holds for a rollout: the summed counts by field, the decided state (a JSON
  // object's text, or empty), the operators' latest command (likewise). With `decide` (this
  // replica holds the lock), decides on the sums and applies the command; returns the state to
  // write back when it changed. Without, adopts the state written.
  std::optional<boost::json::object> Adopt(const RolloutSpec& spec, const std::map<std::string, std::int64_t>& sums,
                                           std::string_view state, std::string_view command, bool decide);
  // Applies the operators' commands the store holds for the rollouts seen so far (serve: once a
  // second, with Flush).
  void Sync();

 private:
  struct Entry {
    RolloutSpec spec;
    const RolloutSpec* seen = nullptr;  // the spec last given (a reload gives another)
    RolloutStatus status;
    bool dirty = false;
    // Shared: counted since the last TakeDeltas, per tally (stable n, successes, candidate n,
    // successes); and whether Redis has been heard from.
    std::vector<std::array<std::int64_t, 4>> pending;
    bool known = false;
  };
  Entry& EntryLocked(const RolloutSpec& spec);
  static void Respec(Entry& entry, const RolloutSpec& spec);
  // Applies a command to an entry; the event, or why it does not apply.
  std::expected<RolloutEvent, Error> ApplyLocked(Entry& entry, Command command);
  // The store's command for the entry when it has not been applied yet.
  std::optional<RolloutEvent> TakeCommandLocked(Entry& entry);
  // `command` ({"command", "id"}) applied when its id was not yet.
  std::optional<RolloutEvent> ApplyCommandLocked(Entry& entry, const std::optional<boost::json::object>& command);
  // Decides after a count; an event when the state or step changed.
  std::optional<RolloutEvent> DecideLocked(Entry& entry);
  void SaveLocked(Entry& entry, bool durable);
  void Notify(const std::optional<RolloutEvent>& event) const;

  std::unique_ptr<RolloutStore> store_;
  bool shared_ = false;
  std::function<void(const RolloutEvent&)> observer_;
  std::mutex mutex_;
  std::map<std::string, Entry, std::less<>> entries_;  // by RolloutKey::name
};

}  // namespace skillrunner::rollout
