#include "runner/eval/orchestrate.h"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <map>
#include <set>
#include <thread>

#include "runner/eval/dir_lock.h"
#include "runner/eval/eval_run.h"
#include "runner/eval/finish_run.h"
#include "runner/eval/history/history.h"
#include "runner/eval/history/sql_db.h"
#include "runner/eval/history/sql_open.h"
#include "runner/eval/history/stored_runs.h"
#include "runner/eval/records/record_fields.h"
#include "runner/eval/records/results_log.h"
#include "services/common/clock.h"
#include "services/handler/process_runner.h"
#include "services/handler/process_slots.h"

namespace skillrunner::eval {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

// The run's io_context, with a way to destroy every handler still queued
// (and what it owns: coroutine frames, sockets) before the objects those
// handlers point into are gone. After RunCases, io has been stopped by the
// last worker, and no thread runs it any more; queued handlers are then only
// destroyed, never invoked. execution_context::shutdown() does exactly that
// (it is what ~io_context does first), and it is idempotent, so the
// destructor's own shutdown later finds nothing left. I/O objects destroyed
// after it (the runtime's) are deregistered from the shut-down services,
// which Asio supports (it is how handler-owned sockets die in ~io_context).
// Why not the alternatives: running io until it runs out of work never ends
// while idle keep-alive connections wait; restart()+poll() only runs what is
// ready and leaves pending timers' handlers queued; and declaring io after
// the runtime would destroy the runtime's sockets after their io_context.
class EvalIoContext : public boost::asio::io_context {
 public:
  using boost::asio::io_context::io_context;
  ~EvalIoContext() { DestroyQueuedHandlers(); }
  void DestroyQueuedHandlers() {
    if (!stopped()) stop();
    shutdown();
  }
};

int Failed(const Say& say, const std::string& message) {
  say("skillrunner eval: " + message);
  return kRunError;
}

// Whatever its code, a run that could not be carried out exits kRunError.
int Failed(const Say& say, const Error& error) { return Failed(say, error.message); }

// The folder's run.json, which must fit the flags (CONFIG_INVALID if not).
Result<RunMeta> ResumedMeta(const RunRequest& request, const Suite& suite) {
  const fs::path& dir = request.finish.out;
  auto meta = ReadRunMeta(dir / "run.json");
  if (!meta) return Fail(std::move(meta.error()), "--resume");
  if (meta->suite != suite.id) {
    return Fail(ErrorCode::kConfigInvalid, "--resume: " + dir.string() + " holds a run of suite \"" + meta->suite +
                                               "\", not \"" + suite.id + "\"");
  }
  std::string plan = PlanHash(suite);
  if (meta->plan_hash && *meta->plan_hash != plan) {
    return Fail(ErrorCode::kConfigInvalid,
                "--resume: the suite's cases changed since the run in " + dir.string() +
                    " began (cases, repeats or datasets differ: plan " + *meta->plan_hash + ", now " + plan +
                    "); resuming would mix two plans in one run: start a new run with another --out");
  }
  std::string wanted = request.shard ? request.shard->ToString() : "";
  if (meta->shard.value_or("") != wanted) {
    return Fail(ErrorCode::kConfigInvalid, "--resume: " + dir.string() + " holds shard \"" +
                                               meta->shard.value_or("(none)") + "\", not \"" +
                                               (wanted.empty() ? "(none)" : wanted) + "\"");
  }
  return meta;
}

// What this process runs: the planned cases not yet recorded.
struct Plan {
  std::vector<CaseTask> tasks;
  std::size_t already = 0;
  // --rejudge-from: the earlier run's records the tasks point into.
  std::shared_ptr<std::vector<json::object>> stored;
};

// Points each planned task at its stored record; drops the tasks the source
// run has no record of (said once).
Result<void> AttachStored(Plan& plan, const RunRequest& request, const Suite& suite, const Say& say) {
  auto source =
      LoadStoredRun(request.rejudge_from,
                    request.finish.history.empty() ? DefaultHistoryFile(request.finish.out) : request.finish.history);
  if (!source) return Fail(std::move(source.error()), "--rejudge-from");
  if (source->suite != suite.id) {
    return Fail(ErrorCode::kConfigInvalid, "--rejudge-from: run " + source->run_id + " is of suite \"" + source->suite +
                                               "\", not \"" + suite.id + "\"");
  }
  plan.stored = std::make_shared<std::vector<json::object>>(std::move(source->records));
  std::map<std::string, const json::object*> by_key;
  for (const json::object& record : *plan.stored) by_key[CaseKey(record)] = &record;
  std::vector<CaseTask> kept;
  for (CaseTask& task : plan.tasks) {
    auto found = by_key.find(task.key);
    if (found == by_key.end()) continue;
    task.stored = found->second;
    task.stored_run = source->run_id;
    kept.push_back(std::move(task));
  }
  if (kept.size() < plan.tasks.size()) {
    say("skillrunner eval: " + std::to_string(plan.tasks.size() - kept.size()) + " case(s) have no record in run " +
        source->run_id + " and are left out");
  }
  say("skillrunner eval: judging the stored outputs of run " + source->run_id + " again; no generation request");
  plan.tasks = std::move(kept);
  return {};
}

Result<Plan> PlanRun(const LoadedSuite& loaded, const RunRequest& request, const Say& say) {
  fs::path results_file = request.finish.out / "results.jsonl";
  auto previous = ReadResults(results_file, request.resume);
  if (!previous) return std::unexpected(std::move(previous.error()));
  if (previous->torn_bytes > 0) {
    say("skillrunner eval: dropped a torn last line (" + std::to_string(previous->torn_bytes) + " bytes) of " +
        results_file.string());
  }
  std::set<std::string> done;
  for (const auto& record : previous->records) done.insert(CaseKey(record));
  PlanOptions plan;
  if (request.shard) plan.shard = *request.shard;
  plan.rejudge = request.rejudge;
  plan.rejudge_sample = request.rejudge_sample;
  return Plan{PlanCases(loaded.suite, plan, done), done.size(), nullptr};
}

// Runs the planned cases on their own io_context; the run's stats, or why
// it could not start.
Result<RunStats> RunPlanned(const LoadedSuite& loaded, const RunRequest& request, const RunMeta& meta, const Plan& plan,
                            int concurrency, const RunnerFactory& make_runner, const Say& say) {
  const Suite& suite = loaded.suite;
  auto writer = ResultsWriter::Open(request.finish.out / "results.jsonl");
  if (!writer) return std::unexpected(std::move(writer.error()));
  int threads =
      request.threads > 0 ? request.threads : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  // Teardown order (see EvalIoContext): `io` is declared before the runner,
  // so the runner (its providers, connection pools, sockets and timers) is
  // destroyed first and `io` last, as Asio requires of I/O objects. The last
  // worker stops `io` with handlers still queued; the guard below destroys
  // them while the runner is still alive.
  EvalIoContext io(threads);
  auto runner = make_runner(io.get_executor());
  if (!runner) return std::unexpected(std::move(runner.error()));
  struct DestroyQueuedHandlersFirst {
    EvalIoContext& io;
    ~DestroyQueuedHandlersFirst() { io.DestroyQueuedHandlers(); }
  } teardown{io};
  handler::AsioProcessRunner programs;  // the cases' exec_check programs, each once a process place is free
  std::optional<handler::PooledProcessRunner> pooled;
  if (const auto& pools = (*runner)->process_pools()) pooled.emplace(programs, pools->shared());
  handler::ProcessRunner* graders = pooled ? static_cast<handler::ProcessRunner*>(&*pooled) : &programs;
  CaseDeps deps{**runner, request.finish.cache && request.finish.cache->mode() == CacheMode::kReplay, request.batch,
                request.batch_quorum.get(), graders};
  // Batch mode: a batch gathers the requests of every case at once.
  const int in_flight = request.batch ? static_cast<int>(std::max<std::size_t>(1, plan.tasks.size())) : concurrency;
  Progress progress(request.progress, isatty(fileno(request.progress)) == 1, plan.tasks.size(), plan.already);
  say("skillrunner eval: run " + meta.run_id + " of suite \"" + suite.id + "\": " + std::to_string(plan.tasks.size()) +
      " case(s) to run" + (plan.already == 0 ? "" : " (" + std::to_string(plan.already) + " already recorded)") +
      (request.batch ? ", batch mode (every case in flight; answers within the provider's completion window)"
                     : ", concurrency " + std::to_string(concurrency)));
  RunStats stats = RunCases(plan.tasks, deps, **writer, progress, io, in_flight, threads);
  progress.Finish();
  return stats;
}

// --cache-mode replay: the misses, each said as it is, then why the run
// stops; the cases that missed were not recorded.
int ReplayMissed(const RunStats& stats, const FinishRequest& request, const Say& say) {
  for (const std::string& miss : stats.cache_misses) say(miss);
  return Failed(say, "--cache-mode replay: " + std::to_string(stats.cache_misses.size()) +
                         " request(s) are not in the cache " + (request.cache ? request.cache->file().string() : "") +
                         "; their cases were not recorded (record them once with --cache-mode read-write or "
                         "refresh, then replay)");
}

}  // namespace

Result<void> CheckBaselineFirst(const FinishRequest& request, const Suite& suite, const std::string& run_id,
                                const Say& say) {
  // Nothing configured: the default history file is opened when the run is recorded, as before.
  if (request.history.empty() && request.baseline.empty()) return {};
  const fs::path file = request.history.empty() ? DefaultHistoryFile(request.out) : request.history;
  if (!sql::IsPostgresUrl(file.string())) {
    // The file's folder is made, as --out is (a history beside --out used to exist because of it).
    std::error_code ec;
    fs::create_directories(fs::absolute(file).parent_path(), ec);
  }
  // Opening migrates the schema; a refused password or a password in the URL fails here.
  auto history = History::Open(file);
  if (!history) return Fail(std::move(history.error()), "history");
  if (request.baseline.empty()) return {};
  auto baseline = (*history)->LoadBaseline(suite.id, request.baseline, run_id);
  if (!baseline) return Fail(std::move(baseline.error()), "baseline");
  if (!*baseline && request.require_baseline) {
    say("no baseline: " + NoBaselineReason(suite.id, request.baseline));
    return Fail(ErrorCode::kConfigInvalid,
                "--require-baseline: there is nothing to compare with, so nothing ran; keep the history DB (" +
                    fs::absolute(file).lexically_normal().string() + ") between runs");
  }
  return {};
}

Result<RunMeta> PrepareRunMeta(const RunRequest& request, const Suite& suite) {
  if (request.resume) return ResumedMeta(request, suite);
  RunMeta meta;
  auto now = RealClock().WallNow();
  meta.run_id = request.run_id.empty() ? NewRunId(now) : request.run_id;
  meta.suite = suite.id;
  meta.suite_file = fs::absolute(request.suite_file).lexically_normal().string();
  meta.started_at = IsoUtc(now);
  if (request.shard) meta.shard = request.shard->ToString();
  if (!request.git_ref.empty()) meta.git_ref = request.git_ref;
  meta.plan_hash = PlanHash(suite);
  return meta;
}

namespace {

// A new run's run.json, in a folder that holds no run yet (checked under the folder's lock).
Result<void> StartRunFolder(const RunRequest& request, const RunMeta& meta) {
  if (request.resume) return {};
  const fs::path& dir = request.finish.out;
  std::error_code ec;
  if (fs::file_size(dir / "results.jsonl", ec) > 0 && !ec) {
    return Fail(ErrorCode::kConfigInvalid, dir.string() +
                                               " already holds a run (results.jsonl); continue it with --resume or "
                                               "choose another --out");
  }
  return WriteRunMeta(dir / "run.json", meta);
}

}  // namespace

SummaryHeader MakeSummaryHeader(const RunMeta& meta, std::chrono::system_clock::time_point now, int concurrency) {
  SummaryHeader header;
  header.run_id = meta.run_id;
  header.suite = meta.suite;
  header.started_at = meta.started_at;
  header.finished_at = IsoUtc(now);
  if (auto started = ParseIsoUtc(meta.started_at)) {
    header.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - *started).count();
  }
  header.shard = meta.shard;
  header.git_ref = meta.git_ref;
  header.concurrency = concurrency;
  return header;
}

int ExecuteRun(const LoadedSuite& loaded, const RunRequest& request, const RunnerFactory& make_runner, const Say& say) {
  const Suite& suite = loaded.suite;
  auto meta = PrepareRunMeta(request, suite);
  if (!meta) return Failed(say, meta.error());
  // design.md §12.3: the history and the baseline are known good before anything is paid for or
  // written; a run they stop leaves no --out folder behind.
  if (auto baseline = CheckBaselineFirst(request.finish, suite, meta->run_id, say); !baseline) {
    return Failed(say, baseline.error().message + " (checked before any case ran)");
  }
  std::error_code ec;
  fs::create_directories(request.finish.out, ec);
  if (ec) return Failed(say, "cannot create " + request.finish.out.string() + ": " + ec.message());
  // Held until the run is finished: one process writes a folder at a time.
  auto lock = DirLock::Acquire(request.finish.out);
  if (!lock) return Failed(say, lock.error());
  if (auto started = StartRunFolder(request, *meta); !started) return Failed(say, started.error());
  auto plan = PlanRun(loaded, request, say);
  if (!plan) return Failed(say, plan.error());
  if (!request.rejudge_from.empty()) {
    if (auto attached = AttachStored(*plan, request, suite, say); !attached) return Failed(say, attached.error());
  }
  int concurrency = request.concurrency > 0 ? request.concurrency : suite.concurrency.value_or(kDefaultConcurrency);
  auto stats = RunPlanned(loaded, request, *meta, *plan, concurrency, make_runner, say);
  if (!stats) return Failed(say, stats.error());
  if (!stats->write_error.empty()) return Failed(say, stats->write_error + " (the run stopped; --resume continues it)");
  if (!stats->cache_misses.empty()) return ReplayMissed(*stats, request.finish, say);
  auto all = ReadResults(request.finish.out / "results.jsonl", false);
  if (!all) return Failed(say, all.error());
  SummaryHeader header = MakeSummaryHeader(*meta, RealClock().WallNow(), concurrency);
  int status = FinishEval(suite, std::move(header), std::move(all->records), request.finish, say);
  if (stats->internal_errors > 0) {
    return Failed(say, std::to_string(stats->internal_errors) +
                           " case(s) hit an internal error and were not recorded; --resume runs them again");
  }
  return status;
}

}  // namespace skillrunner::eval
