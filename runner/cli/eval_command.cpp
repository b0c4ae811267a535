#include "runner/cli/eval_command.h"

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <thread>

#include "runner/cli/eval_support.h"
#include "runner/eval/dir_lock.h"
#include "runner/eval/eval_run.h"
#include "runner/eval/record_fields.h"
#include "runner/eval/results_log.h"
#include "runner/eval/run_meta.h"

namespace skillrunner::cli {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

constexpr int kDefaultConcurrency = 16;

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

int Fail(const std::string& message) {
  std::fprintf(stderr, "skillrunner eval: %s\n", message.c_str());
  return kEvalRunError;
}

// run.json for this run: a new one, or (--resume) the one already in DIR.
std::expected<eval::RunMeta, std::string> PrepareRunMeta(const EvalOptions& options, const eval::Suite& suite,
                                                         const std::optional<eval::Shard>& shard) {
  fs::path dir = options.out;
  fs::path meta_file = dir / "run.json";
  std::error_code ec;
  if (options.resume) {
    auto meta = eval::ReadRunMeta(meta_file);
    if (!meta) return std::unexpected("--resume: " + meta.error());
    if (meta->suite != suite.id) {
      return std::unexpected("--resume: " + dir.string() + " holds a run of suite \"" + meta->suite + "\", not \"" +
                             suite.id + "\"");
    }
    std::string plan = eval::PlanHash(suite);
    if (meta->plan_hash && *meta->plan_hash != plan) {
      return std::unexpected("--resume: the suite's cases changed since the run in " + dir.string() +
                             " began (cases, repeats or datasets differ: plan " + *meta->plan_hash + ", now " + plan +
                             "); resuming would mix two plans in one run: start a new run with another --out");
    }
    std::string wanted = shard ? shard->ToString() : "";
    if (meta->shard.value_or("") != wanted) {
      return std::unexpected("--resume: " + dir.string() + " holds shard \"" + meta->shard.value_or("(none)") +
                             "\", not \"" + (wanted.empty() ? "(none)" : wanted) + "\"");
    }
    return meta;
  }
  if (fs::file_size(dir / "results.jsonl", ec) > 0 && !ec) {
    return std::unexpected(dir.string() + " already holds a run (results.jsonl); continue it with --resume or "
                           "choose another --out");
  }
  eval::RunMeta meta;
  auto now = std::chrono::system_clock::now();
  meta.run_id = options.run_id.empty() ? eval::NewRunId(now) : options.run_id;
  meta.suite = suite.id;
  meta.suite_file = fs::absolute(options.suite).lexically_normal().string();
  meta.started_at = eval::IsoUtc(now);
  if (shard) meta.shard = shard->ToString();
  meta.plan_hash = eval::PlanHash(suite);
  if (auto written = eval::WriteRunMeta(meta_file, meta); !written) return std::unexpected(written.error());
  return meta;
}

int ExecuteRun(const LoadedSuite& loaded, const EvalOptions& options, const std::optional<eval::Shard>& shard) {
  const eval::Suite& suite = loaded.suite;
  std::error_code ec;
  fs::create_directories(options.out, ec);
  if (ec) return Fail("cannot create " + options.out + ": " + ec.message());
  // Held until the run is finished: one process writes a folder at a time.
  auto lock = eval::DirLock::Acquire(options.out);
  if (!lock) return Fail(lock.error());
  auto meta = PrepareRunMeta(options, suite, shard);
  if (!meta) return Fail(meta.error());
  fs::path results_file = fs::path(options.out) / "results.jsonl";
  auto previous = eval::ReadResults(results_file, options.resume);
  if (!previous) return Fail(previous.error());
  if (previous->torn_bytes > 0) {
    std::fprintf(stderr, "skillrunner eval: dropped a torn last line (%zu bytes) of %s\n", previous->torn_bytes,
                 results_file.c_str());
  }
  std::set<std::string> done;
  for (const auto& record : previous->records) done.insert(eval::CaseKey(record));

  eval::PlanOptions plan;
  if (shard) plan.shard = *shard;
  plan.rejudge = options.rejudge;
  plan.rejudge_sample = static_cast<std::size_t>(options.rejudge_sample);
  std::vector<eval::CaseTask> tasks = eval::PlanCases(suite, plan, done);

  auto writer = eval::ResultsWriter::Open(results_file);
  if (!writer) return Fail(writer.error());
  int concurrency = options.concurrency > 0 ? options.concurrency : suite.concurrency.value_or(kDefaultConcurrency);
  int threads = options.threads > 0 ? options.threads
                                    : static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  // Teardown order (see EvalIoContext): `io` is declared before the runtime,
  // so the runtime (its providers, connection pools, sockets and timers) is
  // destroyed first and `io` last, as Asio requires of I/O objects. The last
  // worker stops `io` with handlers still queued (idle connections, their
  // timers, suspended coroutine frames that point into the runtime); the
  // guard below destroys them while the runtime is still alive.
  EvalIoContext io(threads);
  auto runtime = Runtime::Create(loaded.registry, io.get_executor());
  if (!runtime) return Fail(runtime.error());
  struct DestroyQueuedHandlersFirst {
    EvalIoContext& io;
    ~DestroyQueuedHandlersFirst() { io.DestroyQueuedHandlers(); }
  } teardown{io};
  eval::RateLimiters limiters(suite.rate_limits, RealClock());
  eval::CaseDeps deps{(*runtime)->runner(), limiters};
  eval::Progress progress(stderr, isatty(STDERR_FILENO) == 1, tasks.size(), done.size());
  std::fprintf(stderr, "skillrunner eval: run %s of suite \"%s\": %zu case(s) to run%s, concurrency %d\n",
               meta->run_id.c_str(), suite.id.c_str(), tasks.size(),
               done.empty() ? "" : (" (" + std::to_string(done.size()) + " already recorded)").c_str(), concurrency);
  eval::RunStats stats = eval::RunCases(tasks, deps, **writer, progress, io, concurrency, threads);
  progress.Finish();
  if (!stats.write_error.empty()) return Fail(stats.write_error + " (the run stopped; --resume continues it)");

  auto all = eval::ReadResults(results_file, false);
  if (!all) return Fail(all.error());
  auto now = std::chrono::system_clock::now();
  eval::SummaryHeader header;
  header.run_id = meta->run_id;
  header.suite = suite.id;
  header.started_at = meta->started_at;
  header.finished_at = eval::IsoUtc(now);
  if (auto started = eval::ParseIsoUtc(meta->started_at)) {
    header.duration_ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - *started).count();
  }
  header.shard = meta->shard;
  header.concurrency = concurrency;
  int status = FinishEval(suite, std::move(header), std::move(all->records), options);
  if (stats.internal_errors > 0) {
    std::fprintf(stderr, "skillrunner eval: %zu case(s) hit an internal error and were not recorded; "
                 "--resume runs them again\n", stats.internal_errors);
    return kEvalRunError;
  }
  return status;
}

}  // namespace

std::optional<LoadedSuite> LoadSuiteForEval(const CommonOptions& common, const std::string& suite_file) {
  auto config = ResolveConfig(common);
  if (!config) {
    for (const auto& d : config.error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return std::nullopt;
  }
  auto registry = LoadRegistry(common, std::move(*config));
  for (const auto& d : registry.diagnostics) spdlog::warn("{}", d.ToString());
  auto suite = eval::LoadSuite(suite_file, *registry.registry);
  if (!suite) {
    for (const auto& d : suite.error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return std::nullopt;
  }
  for (const auto& d : suite->warnings) std::fprintf(stderr, "%s\n", d.ToString().c_str());
  return LoadedSuite{registry.registry, std::move(*suite)};
}

int FinishEval(const eval::Suite& suite, eval::SummaryHeader header, std::vector<json::object> records,
               const EvalOptions& options) {
  for (const auto& entry : suite.skills) header.skills.push_back(entry.skill->id);
  eval::SortRecords(suite, records);
  eval::FinishOptions finish;
  finish.out_dir = options.out;
  finish.history_file = options.history.empty() ? eval::DefaultHistoryFile(options.out) : fs::path(options.history);
  finish.baseline = options.baseline;
  eval::FinishResult result = eval::FinishRun(suite, header, records, finish);
  for (const auto& note : result.notes) std::fprintf(stderr, "skillrunner eval: %s\n", note.c_str());
  for (const auto& problem : result.problems) std::fprintf(stderr, "skillrunner eval: %s\n", problem.c_str());
  if (const auto* skills = result.summary.if_contains("skills"); skills && skills->is_object()) {
    for (const auto& [id, stats] : skills->as_object()) {
      const json::object* s = stats.is_object() ? &stats.as_object() : nullptr;
      auto count = [&](std::string_view key) { return eval::IntAt(s, key).value_or(0); };
      if (count("judged") == 0 && count("judge_errors") == 0) continue;
      std::optional<double> rate = eval::NumberAt(s, "rubric_pass_rate");
      char shown[32] = "-";
      if (rate) std::snprintf(shown, sizeof shown, "%.1f%%", *rate * 100);
      std::fprintf(stderr,
                   "skillrunner eval: %s: rubric pass rate %s over %lld decided case(s); %lld indeterminate left out, "
                   "%lld judge error(s)\n",
                   std::string(id).c_str(), shown,
                   static_cast<long long>(count("decided")), static_cast<long long>(count("indeterminate")),
                   static_cast<long long>(count("judge_errors")));
    }
  }
  for (const auto& breach : result.summary.at("breaches").as_array()) {
    std::fprintf(stderr, "breach: %s\n", std::string(breach.at("message").as_string()).c_str());
  }
  if (const auto* baseline = result.summary.if_contains("baseline"); baseline && baseline->is_object()) {
    const auto* flipped = baseline->as_object().if_contains("flipped");
    std::size_t n = flipped && flipped->is_array() ? flipped->as_array().size() : 0;
    std::fprintf(stderr, "skillrunner eval: %zu case(s) flipped from pass since run %s\n", n,
                 std::string(baseline->at("run_id").as_string()).c_str());
  }
  std::fprintf(stderr, "skillrunner eval: %zu record(s); %s; reports in %s (summary.json, junit.xml, report.html)\n",
               records.size(), std::string(result.summary.at("status").as_string()).c_str(),
               fs::absolute(options.out).lexically_normal().c_str());
  return result.exit_status;
}

int RunEval(const CommonOptions& common, const EvalOptions& options) {
  if (options.suite.empty()) return Fail("give the suite file: skillrunner eval SUITE.yaml --out DIR");
  std::optional<eval::Shard> shard;
  if (!options.shard.empty()) {
    auto parsed = eval::ParseShard(options.shard);
    if (!parsed) return Fail(parsed.error());
    shard = *parsed;
  }
  auto loaded = LoadSuiteForEval(common, options.suite);
  if (!loaded) return kEvalRunError;
  return ExecuteRun(*loaded, options, shard);
}

EvalCommand::EvalCommand(CLI::App& app) {
  eval_ = app.add_subcommand("eval", "Run an eval suite: every case, judged; reports and history in --out DIR");
  eval_->add_option("suite", options_.suite, "The suite file (SUITE.yaml)");
  eval_->add_option("--out", options_.out, "Folder for results.jsonl, summary.json, junit.xml, report.html");
  eval_->add_option("--concurrency", options_.concurrency, "Cases in flight at once (default: the suite's, else 16)")
      ->check(CLI::PositiveNumber);
  eval_->add_option("--threads", options_.threads, "Threads driving the cases (default: min(4, cores))")
      ->check(CLI::PositiveNumber);
  eval_->add_flag("--resume", options_.resume, "Continue the run in --out: skip the cases already recorded");
  eval_->add_option("--shard", options_.shard, "Run slice I of N (0-based), e.g. 0/4");
  eval_->add_option("--rejudge", options_.rejudge, "Judge a sample of cases K more times and report agreement")
      ->check(CLI::NonNegativeNumber);
  eval_->add_option("--rejudge-sample", options_.rejudge_sample, "Cases per skill to re-judge (default 20)")
      ->check(CLI::PositiveNumber);
  eval_->add_option("--history", options_.history, "History database (default DIR/../eval-history.sqlite)");
  eval_->add_option("--baseline", options_.baseline, "Compare with a previous run: last or a run id");
  eval_->add_option("--run-id", options_.run_id, "Run id (default: a new one; shards of one night may share it)");
  merge_ = eval_->add_subcommand("merge", "Combine shard folders into one run in --out, with its reports");
  merge_->add_option("sources", options_.merge_sources, "Shard output folders")->required();
  merge_->add_option("--out", options_.out, "Folder for the merged run")->required();
  merge_->add_option("--suite", options_.merge_suite, "The suite file (default: the one the shards ran)");
  merge_->add_option("--history", options_.history, "History database (default DIR/../eval-history.sqlite)");
  merge_->add_option("--baseline", options_.baseline, "Compare with a previous run: last or a run id");
}

bool EvalCommand::parsed() const { return eval_->parsed(); }

int EvalCommand::Run(const CommonOptions& common) {
  if (merge_->parsed()) return MergeEval(common, options_);
  if (options_.out.empty()) return Fail("--out DIR is required");
  return RunEval(common, options_);
}

}  // namespace skillrunner::cli
