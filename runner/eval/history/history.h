#pragma once

// The eval history that every nightly run is recorded in, so that a run can
// be compared with an earlier one (--baseline), the report can draw trends
// and the viewer can show every case: an SQLite file (the embedded default)
// or a PostgreSQL database (a postgresql:// URL) that many writers share
// (design.md §11.3). Tables: runs, case_outcomes, criterion_verdicts, batches
// (each provider batch a batch-mode run created, recorded when it is created,
// before the run ends), pins, case_records, run_measures; the same versioned
// migrations in both (history_schema.h).
//
// Several writers may record at once: SQLite in WAL mode with a busy timeout,
// PostgreSQL with each transaction run again when it met another's; each
// RecordRun is one transaction. A History object itself is not thread-safe;
// use one per thread (or guard it).
//
// Shard runs: `skillrunner eval --shard` does not record its run here
// (FinishRun); the merged run is recorded by `eval merge`. So shards that
// share a --run-id never replace each other's rows, and LoadBaseline("last")
// and Trend skip any run whose summary has a "shard" should one be recorded.

#include <boost/json/object.hpp>
#include <cstddef>
#include <expected>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runner/eval/history/run_measures.h"
#include "runner/eval/records/case_outcome.h"
#include "runner/eval/records/run_summary.h"
#include "services/common/error.h"

namespace skillrunner::eval {

// An earlier run, as far as a comparison needs it.

struct BaselineRun {
  std::string run_id;
  std::string started_at;
  RunSummary summary;
  std::map<std::string, CaseOutcome> outcomes;  // by CaseKey
  // CaseKey -> criterion id -> verdict, for the cases that were judged.
  std::map<std::string, std::map<std::string, std::string>> verdicts;
  // CaseKey -> its gates (runs recorded before schema 2 have none).
  std::map<std::string, CaseGates> gates = {};
};

// One past run of a suite, for the report's trend lines.
struct TrendPoint {
  std::string run_id;
  std::string started_at;
  RunSummary summary;
};

// One provider batch of a run (design.md §10.6).
struct HistoryBatch {
  std::string provider;
  int round = 0;
  std::string batch_id;
  bool adopted = false;     // found after a crash rather than recorded at create
  std::string recorded_at;  // UTC, ISO 8601
  bool operator==(const HistoryBatch&) const = default;
};

// Whether `which` names a kind of baseline (last, last-passing, pinned) rather than a run id.
bool IsBaselineKind(std::string_view which);

class History {
 public:
  // Opens (creating when absent) the history at `location`, a file or a
  // postgresql:// URL, and brings its schema up to date. Fails with a message
  // naming it (a URL without its password) when a file's folder does not
  // exist or a URL holds a password (CONFIG_INVALID), or when it cannot be
  // opened or its schema is newer than this program knows (INTERNAL, as is
  // every database failure below).
  static Result<std::unique_ptr<History>> Open(const std::string& location);
  ~History();
  History(const History&) = delete;
  History& operator=(const History&) = delete;

  // The file, or the URL without its password.
  const std::string& name() const;

  // Records a finished run: `summary` is summary.json (its run id and
  // suite are required), `records` the lines of results.jsonl. Recording a
  // run id that is already present (a resumed or merged run) replaces it.
  Result<void> RecordRun(const RunSummary& summary, const std::vector<boost::json::object>& records);

  // The run to compare `current_run_id` with. `which` is "last" (the newest
  // other whole run of `suite_id`, by started_at: a run whose summary has a
  // "shard" is never "last"), "last-passing" (the newest of those whose
  // summary says status "pass": every gate held), "pinned" (the run `Pin`
  // named for the suite) or an explicit run id. Returns nullopt when a kind
  // finds no run (the first night, no passing run, nothing pinned); an
  // explicit run id that is not in the history, or that belongs to another
  // suite, is an error that names it (CONFIG_INVALID), because the user asked
  // for that exact run.
  Result<std::optional<BaselineRun>> LoadBaseline(std::string_view suite_id, std::string_view which,
                                                  std::string_view current_run_id);

  // The newest `limit` whole runs (no shard runs) of `suite_id`, oldest first.
  // The summary of run `run_id`, whatever its suite; nullopt when the
  // history has no such run.
  Result<std::optional<RunSummary>> FindRun(std::string_view run_id);

  // Makes `run_id` its suite's pinned baseline (replacing the one before);
  // returns the suite's id. A run not in the history is CONFIG_INVALID
  // naming it (shards record no run: only their merged run can be pinned).
  Result<std::string> Pin(std::string_view run_id);

  Result<std::vector<TrendPoint>> Trend(std::string_view suite_id, std::size_t limit);

  // Records a batch of run `run_id` (once: a batch id already recorded for
  // the run is left as it is). Unlike RecordRun, written while the run goes
  // on, so that a run that never finishes still names the batches it paid for.
  Result<void> RecordBatch(std::string_view run_id, const HistoryBatch& batch);
  // The batches of run `run_id`, by round.
  Result<std::vector<HistoryBatch>> Batches(std::string_view run_id);

 private:
  struct Impl;
  explicit History(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace skillrunner::eval
