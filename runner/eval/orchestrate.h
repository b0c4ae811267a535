#pragma once

// A whole eval run, start to finish, and the merge of shard runs (design.md §6.3):
// the folder lock, run.json (new, or checked for --resume), the cases still to
// run, the run on its own io_context, then the summary, history and reports.
// The CLI parses options into these requests and prints what `say` is told.

#include <boost/asio/any_io_executor.hpp>
#include <boost/json/object.hpp>
#include <chrono>
#include <cstdio>
#include <expected>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/eval/history/response_cache.h"
#include "runner/eval/records/run_meta.h"
#include "runner/eval/shard.h"
#include "runner/eval/suite.h"
#include "runner/eval/summary.h"
#include "runner/skill_runner.h"
#include "services/common/batch_quorum.h"
#include "services/common/error.h"

namespace skillrunner::eval {

// Exit status of a run that could not be carried out (2); 0 and 1 come from
// the thresholds.
inline constexpr int kRunError = 2;
inline constexpr int kDefaultConcurrency = 16;

// One line for the user, complete ("skillrunner eval: ..."), without a newline.
using Say = std::function<void(const std::string&)>;

// The registry a suite was checked against, kept alive with the suite.
struct LoadedSuite {
  std::shared_ptr<const SkillRegistry> registry;
  Suite suite;
};

// A SkillRunner for a run, built on the run's io_context (the composition
// root wires providers and services); it stays alive while the pointer does.
using RunnerFactory = std::function<Result<std::shared_ptr<SkillRunner>>(boost::asio::any_io_executor)>;

// Where the reports and the history go.
struct FinishRequest {
  std::filesystem::path out;
  std::filesystem::path history;  // empty: DefaultHistoryFile(out)
  std::string baseline;           // last | RUN_ID | empty
  // design.md §10.1 --require-baseline: no baseline to compare with is a run
  // error (exit 2), found before any case runs (before a merge writes).
  bool require_baseline = false;
  // design.md §9.5 --fail-on: which breaches make the exit status 1 (any, or
  // only regressions against the baseline).
  bool fail_on_regressions_only = false;
  // eval --cache: its hits and misses go in the summary ("cache").
  std::shared_ptr<const ResponseCache> cache;
};

struct RunRequest {
  std::filesystem::path suite_file;
  FinishRequest finish;
  bool resume = false;
  // design.md §10.6 batch mode: every case in flight at once (a batch gathers
  // them) and no case timeout bounds the wait for a batch.
  bool batch = false;
  // Batch mode: tells the batching providers when every running case waits.
  std::shared_ptr<BatchQuorum> batch_quorum;
  std::optional<Shard> shard;
  int rejudge = 0;
  std::size_t rejudge_sample = 20;
  int concurrency = 0;  // 0: the suite's, else kDefaultConcurrency
  int threads = 0;      // 0: min(4, cores)
  std::string run_id;   // empty: a new one (kept across --resume)
  // The commit the run is made at (history's git_ref); empty: none known. A resumed run keeps its own.
  std::string git_ref;
  // design.md §9.5 --rejudge-from: an earlier run (its folder, or its id in the
  // history) whose stored outputs are judged again; no generation request.
  std::string rejudge_from;
  std::FILE* progress = stderr;
};

// Runs `loaded.suite` as `request` says; the exit status.
int ExecuteRun(const LoadedSuite& loaded, const RunRequest& request, const RunnerFactory& make_runner, const Say& say);

// run.json for this run (not written yet): a new one, or (--resume) the one already in the
// folder, which must be of this suite, plan and shard (CONFIG_INVALID when
// the folder does not fit the flags; INTERNAL when its files fail).
Result<RunMeta> PrepareRunMeta(const RunRequest& request, const Suite& suite);

// The summary header of a run that began at meta.started_at and ends `now`.
SummaryHeader MakeSummaryHeader(const RunMeta& meta, std::chrono::system_clock::time_point now, int concurrency);

// Reports, history and exit status for recorded records; says what the user
// must know (per-skill rubric pass rates, breaches, where the reports are).
int FinishEval(const Suite& suite, SummaryHeader header, std::vector<boost::json::object> records,
               const FinishRequest& request, const Say& say);

// Before any case runs (or a merge writes), and before the --out folder is
// made: a configured history (--history, the config's history:) or any
// --baseline opens the history (migrating it), so an unreachable database, a
// refused password or a password in the URL stops the run; --baseline RUN_ID
// must name a run of the history, and under --require-baseline "last" must
// find one (the "no baseline: ..." line is said first). Why not, or nothing.
Result<void> CheckBaselineFirst(const FinishRequest& request, const Suite& suite, const std::string& run_id,
                                const Say& say);

// Loads a suite file with the tree a run uses; nullopt after saying why.
using SuiteLoader = std::function<std::optional<LoadedSuite>(const std::string& suite_file)>;

struct MergeRequest {
  std::vector<std::filesystem::path> sources;  // shard folders
  std::string suite_file;                      // empty: the one the shards ran
  std::string git_ref;                         // empty: the shards' own
  FinishRequest finish;
};

// `eval merge`: the shards 0..N-1 of one split, each once, covering every
// planned case, into one run in request.finish.out with its reports.
int MergeRuns(const MergeRequest& request, const SuiteLoader& load_suite, const Say& say);

}  // namespace skillrunner::eval
