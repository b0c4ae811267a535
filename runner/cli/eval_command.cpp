#include "runner/cli/eval_command.h"

#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <boost/asio/io_context.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "runner/cli/eval_support.h"
#include "runner/eval/compare_runs.h"
#include "runner/eval/finish_run.h"
#include "runner/eval/history/history.h"
#include "runner/eval/history/sql_db.h"
#include "runner/eval/history/sql_open.h"
#include "runner/eval/history/stored_runs.h"
#include "runner/eval/orchestrate.h"
#include "runner/eval/records/run_meta.h"
#include "runner/eval/shard.h"
#include "services/common/clock.h"

namespace skillrunner::cli {
namespace json = boost::json;
namespace fs = std::filesystem;
namespace {

void SayToStderr(const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); }

int Fail(const std::string& message) {
  SayToStderr("skillrunner eval: " + message);
  return kEvalRunError;
}

// --fail-on: which breaches exit 1. Both kinds (any, also written thresholds,regressions), or
// regressions alone.
const std::vector<std::string> kFailOn = {"any", "regressions", "thresholds,regressions", "regressions,thresholds"};
const std::map<std::string, std::string> kFailOnSame = {{"thresholds,regressions", "any"},
                                                        {"regressions,thresholds", "any"}};

eval::FinishRequest FinishRequestFor(const EvalOptions& options) {
  return eval::FinishRequest{
      options.out, options.history, options.baseline, options.require_baseline, options.fail_on == "regressions",
      nullptr};
}

// Batch mode's settings from the suite's `batch:` block (its defaults under
// --batch alone); the run id is filled in when the run folder has one.
struct BatchPlan {
  providers::BatchSettings settings;
  fs::path out;
  fs::path history;  // each batch id is recorded here too
};

std::shared_ptr<const BatchPlan> BatchPlanFor(const eval::Suite& suite, const EvalOptions& options) {
  if (!options.batch && !suite.batch) return nullptr;
  const eval::SuiteBatch block = suite.batch.value_or(eval::SuiteBatch{});
  auto plan = std::make_shared<BatchPlan>();
  auto ms = [](double seconds) { return std::chrono::milliseconds(std::llround(seconds * 1000)); };
  plan->settings.max_requests = block.max_requests;
  plan->settings.send_after = ms(block.send_after_s);
  plan->settings.poll_interval = ms(block.poll_interval_s);
  plan->settings.fallback_online = block.fallback_online;
  plan->settings.quorum = std::make_shared<BatchQuorum>();
  for (const eval::SuiteSkill& entry : suite.skills) {
    if (!entry.batch) plan->settings.opted_out.insert(entry.skill->id);
  }
  plan->out = options.out;
  plan->history = options.history.empty() ? eval::DefaultHistoryFile(options.out) : fs::path(options.history);
  return plan;
}

// The runtime and, in batch mode, the journal its providers write (declared
// first: it outlives the runtime).
struct RunRuntime {
  std::unique_ptr<providers::BatchJournal> journal;
  std::unique_ptr<Runtime> runtime;
};

// Records each batch id the journal records in the history DB as well
// (design.md §10.6), and those an earlier process recorded (it may have died
// between the two writes); a history that cannot be written is said, never
// fatal.
void RecordBatchesInHistory(providers::BatchJournal& journal, fs::path history, std::string run_id) {
  auto record = [history = std::move(history), run_id = std::move(run_id)](const boost::json::object& line) {
    const auto* event = line.if_contains("event");
    if (event == nullptr || *event != "batch") return;
    const auto text = [&](std::string_view key) {
      const auto* v = line.if_contains(key);
      return v && v->is_string() ? std::string(v->as_string()) : std::string();
    };
    const auto* round = line.if_contains("round");
    const auto* adopted = line.if_contains("adopted");
    eval::HistoryBatch batch{text("provider"), round && round->is_int64() ? static_cast<int>(round->as_int64()) : 0,
                             text("batch_id"), adopted && adopted->is_bool() && adopted->as_bool(),
                             IsoUtc(RealClock().WallNow())};
    auto opened = eval::History::Open(history);
    auto recorded = opened ? (*opened)->RecordBatch(run_id, batch) : std::unexpected(opened.error());
    if (!recorded) SayToStderr("skillrunner eval: warning: batch " + batch.batch_id + ": " + recorded.error().message);
  };
  for (const boost::json::object& line : journal.recorded()) record(line);
  journal.SetObserver(std::move(record));
}

Result<std::shared_ptr<RunRuntime>> OpenBatchJournal(const BatchPlan& plan, BatchRun& run) {
  auto meta = eval::ReadRunMeta(plan.out / "run.json");
  if (!meta) return std::unexpected(std::move(meta.error()));
  auto journal = providers::BatchJournal::Open(plan.out / "batches.jsonl");
  if (!journal) return std::unexpected(std::move(journal.error()));
  auto owner = std::make_shared<RunRuntime>();
  owner->journal = std::move(*journal);
  RecordBatchesInHistory(*owner->journal, plan.history, meta->run_id);
  run.settings = plan.settings;
  run.settings.run_id = meta->run_id;
  run.journal = owner->journal.get();
  run.say = [](const std::string& line) { SayToStderr("skillrunner eval: " + line); };
  return owner;
}

// The runtime of a run, built on the run's io_context; the runner keeps it alive.
// The suite's rate_limits win over the config's.
eval::RunnerFactory RunnerFor(std::shared_ptr<const SkillRegistry> registry,
                              std::map<std::string, state::RateLimit, std::less<>> rate_limits,
                              std::shared_ptr<telemetry::SpanSink> spans, std::shared_ptr<eval::ResponseCache> cache,
                              std::size_t handler_concurrency, std::shared_ptr<const BatchPlan> batch = nullptr) {
  return [registry, rate_limits, spans, cache, handler_concurrency,
          batch](boost::asio::any_io_executor executor) -> Result<std::shared_ptr<SkillRunner>> {
    auto owner = std::make_shared<RunRuntime>();
    BatchRun run;
    if (batch) {
      auto opened = OpenBatchJournal(*batch, run);
      if (!opened) return std::unexpected(std::move(opened.error()));
      owner = std::move(*opened);
    }
    RuntimeOptions options{nullptr, rate_limits, spans, cache.get(), batch ? &run : nullptr};
    options.process_pools = std::make_shared<handler::ProcessPools>(handler_concurrency);
    auto runtime = Runtime::Create(registry, executor, std::move(options));
    if (!runtime) return std::unexpected(std::move(runtime.error()));
    owner->runtime = std::move(*runtime);
    return std::shared_ptr<SkillRunner>(owner, &owner->runtime->runner());
  };
}

}  // namespace

std::optional<eval::LoadedSuite> LoadSuiteForEval(const CommonOptions& common, const std::string& suite_file,
                                                  bool tree_warnings) {
  auto config = ResolveConfig(common);
  if (!config) {
    for (const auto& d : config.error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return std::nullopt;
  }
  auto registry = LoadRegistry(common, std::move(*config));
  std::set<std::string> shown;  // two skills sharing a schema file: its findings once
  for (const auto& d : registry.diagnostics) {
    const bool warning = d.severity == Diagnostic::Severity::kWarning;
    if ((warning && (d.acknowledged || !tree_warnings)) || !shown.insert(d.ToString()).second) continue;
    spdlog::warn("{}", d.ToString());
  }
  auto suite = eval::LoadSuite(suite_file, *registry.registry);
  if (!suite) {
    for (const auto& d : suite.error()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    return std::nullopt;
  }
  for (const auto& d : suite->warnings) {
    if (!d.acknowledged) std::fprintf(stderr, "%s\n", d.ToString().c_str());
  }
  return eval::LoadedSuite{registry.registry, std::move(*suite)};
}

// Flags that need another flag (exit 2 before anything runs).
std::optional<std::string> UsageError(const EvalOptions& options) {
  if (options.require_baseline && options.baseline.empty()) {
    return "--require-baseline needs --baseline (last-passing, last, pinned or a run id)";
  }
  if (!options.cache && !options.cache_ttl.empty()) return "--cache-ttl needs --cache";
  if (!options.cache && options.cache_mode != "read-write")
    return "--cache-mode " + options.cache_mode + " needs --cache";
  return std::nullopt;
}

// --cache [FILE], --cache-ttl (design.md §9.5) and --cache-mode (design.md §10.1):
// the store, or null without --cache.
Result<std::shared_ptr<eval::ResponseCache>> OpenCache(const EvalOptions& options) {
  const std::optional<eval::CacheMode> mode = eval::ParseCacheMode(options.cache_mode);
  if (!mode) {
    return skillrunner::Fail(ErrorCode::kConfigInvalid, "--cache-mode: expected read-write, replay or refresh");
  }
  if (!options.cache) return nullptr;
  std::optional<std::chrono::seconds> ttl;
  if (!options.cache_ttl.empty()) {
    auto parsed = eval::ParseTtl(options.cache_ttl);
    if (!parsed) return skillrunner::Fail(std::move(parsed.error()), "--cache-ttl");
    ttl = *parsed;
  }
  std::filesystem::path file = *options.cache;
  if (file.empty()) {
    // Beside a history file; with a database for the history, where the default file would be.
    const bool file_history = !options.history.empty() && !eval::sql::IsPostgresUrl(options.history);
    const std::filesystem::path history =
        file_history ? std::filesystem::path(options.history) : eval::DefaultHistoryFile(options.out);
    file = history.parent_path() / "eval-cache.sqlite";
    std::error_code ec;  // the run creates --out; its parent may not exist yet either
    std::filesystem::create_directories(file.parent_path(), ec);
  }
  auto cache = eval::ResponseCache::Open(file, ttl, *mode);
  if (!cache) return std::unexpected(std::move(cache.error()));
  return std::shared_ptr<eval::ResponseCache>(std::move(*cache));
}

// design.md §11.3: the commit a run is recorded at: --git-ref, else what GitHub Actions or GitLab CI say.
std::string GitRefFor(const EvalOptions& options) {
  if (!options.git_ref.empty()) return options.git_ref;
  for (std::string_view name : {"GITHUB_SHA", "CI_COMMIT_SHA"}) {
    if (auto value = ProcessEnv(name); value && !value->empty()) return *value;
  }
  return {};
}

int RunEval(const CommonOptions& common, const EvalOptions& options) {
  if (options.suite.empty()) return Fail("give the suite file: skillrunner eval SUITE.yaml --out DIR");
  if (auto usage = UsageError(options)) return Fail(*usage);
  eval::RunRequest request;
  if (!options.shard.empty()) {
    auto parsed = options.shard == "auto" ? eval::ShardFromEnvironment(ProcessEnv) : eval::ParseShard(options.shard);
    if (!parsed) return Fail(parsed.error().message);
    request.shard = *parsed;
  }
  auto loaded = LoadSuiteForEval(common, options.suite);
  if (!loaded) return kEvalRunError;
  if (options.cache && !loaded->suite.redact.empty()) {
    // design.md §12.3: nothing skillrunner writes may hold a masked field, and a cache keeps the
    // requests and answers as they were (a replay needs them whole).
    return Fail("--cache: suite \"" + loaded->suite.id +
                "\" masks fields (redact:), and the response cache would keep the provider's requests and answers "
                "unmasked; run it without --cache");
  }
  request.suite_file = options.suite;
  request.finish = FinishRequestFor(options);
  request.resume = options.resume;
  auto batch = BatchPlanFor(loaded->suite, options);
  request.batch = batch != nullptr;
  if (batch) request.batch_quorum = batch->settings.quorum;
  request.rejudge = options.rejudge;
  request.rejudge_sample = static_cast<std::size_t>(options.rejudge_sample);
  request.concurrency = options.concurrency;
  request.threads = options.threads;
  request.run_id = options.run_id;
  request.git_ref = GitRefFor(options);
  request.rejudge_from = options.rejudge_from;
  auto tracing = StartTracing(loaded->registry->config(), ProcessEnv);
  if (!tracing) return Fail(tracing.error().message);
  auto cache = OpenCache(options);
  if (!cache) return Fail(cache.error().message);
  request.finish.cache = *cache;
  const int status = eval::ExecuteRun(*loaded, request,
                                      RunnerFor(loaded->registry, loaded->suite.rate_limits, *tracing, *cache,
                                                HandlerConcurrency(common, loaded->registry->config()), batch),
                                      SayToStderr);
  if (*tracing) (*tracing)->Shutdown();
  return status;
}

int MergeEval(const CommonOptions& common, const EvalOptions& options) {
  if (options.out.empty()) {
    SayToStderr("skillrunner eval merge: --out DIR is required");
    return kEvalRunError;
  }
  if (auto usage = UsageError(options)) {
    SayToStderr("skillrunner eval merge: " + *usage);
    return kEvalRunError;
  }
  eval::MergeRequest request;
  for (const auto& source : options.merge_sources) request.sources.emplace_back(source);
  request.suite_file = options.merge_suite;
  request.git_ref = options.git_ref;  // else the shards' own
  request.finish = FinishRequestFor(options);
  auto load = [&common](const std::string& file) { return LoadSuiteForEval(common, file, false); };
  return eval::MergeRuns(request, load, SayToStderr);
}

// eval pin RUN_ID --history FILE: the suite's baseline for --baseline pinned.
int PinRun(const EvalOptions& options) {
  if (options.history.empty())
    return Fail("give the history to pin the run in: --history FILE|URL, or history: in skillrunner.yaml");
  auto history = eval::History::Open(options.history);
  if (!history) return Fail(history.error().message);
  auto suite = (*history)->Pin(options.pin_run);
  if (!suite) return Fail(suite.error().message);
  std::printf("pinned run %s as the baseline of suite %s (--baseline pinned) in %s\n", options.pin_run.c_str(),
              suite->c_str(), options.history.c_str());
  return 0;
}

int CompareEval(const CommonOptions& common, const EvalOptions& options) {
  eval::CompareRequest request;
  request.run_a = options.compare_a;
  request.run_b = options.compare_b;
  request.rubric = options.compare_rubric;
  request.judge_model = options.compare_judge_model;
  request.out = options.out;
  request.history =
      options.history.empty() ? eval::DefaultHistoryFile(options.out) : std::filesystem::path(options.history);
  if (options.concurrency > 0) request.concurrency = options.concurrency;
  auto config = ResolveConfig(common);
  if (!config) return Fail(config.error().front().ToString());
  auto loaded = LoadRegistry(common, std::move(*config));
  // The judge sees each case's input when run A's suite still loads.
  if (auto a = eval::LoadStoredRun(request.run_a, request.history); a) {
    if (auto meta = eval::ReadRunMeta(a->folder / "run.json"); meta) {
      if (auto suite = eval::LoadSuite(meta->suite_file, *loaded.registry); suite) {
        for (const eval::SuiteSkill& entry : suite->skills) {
          for (const eval::EvalCase& c : entry.cases) request.inputs[entry.skill->id + "/" + c.id] = c.input;
        }
      }
    }
  }
  auto tracing = StartTracing(loaded.registry->config(), ProcessEnv);
  if (!tracing) return Fail(tracing.error().message);
  return eval::CompareRuns(
      *loaded.registry, request,
      RunnerFor(loaded.registry, {}, *tracing, nullptr, HandlerConcurrency(common, loaded.registry->config())),
      SayToStderr);
}

EvalCommand::EvalCommand(CLI::App& app) {
  eval_ = app.add_subcommand("eval", "Run an eval suite: every case, judged; reports and history in --out DIR");
  eval_->add_option("suite", options_.suite, "The suite file (SUITE.yaml)");
  eval_->add_option("--out", options_.out, "Folder for results.jsonl, summary.json, junit.xml, report.html");
  eval_->add_option("--concurrency", options_.concurrency, "Cases in flight at once (default: the suite's, else 16)")
      ->check(CLI::PositiveNumber);
  eval_->add_option("--threads", options_.threads, "Threads driving the cases (default: min(4, cores))")
      ->check(CLI::PositiveNumber);
  eval_->add_flag("--batch", options_.batch,
                  "Send the requests through the providers' batch APIs at their batch price (the suite's batch: "
                  "block turns it on too); answers come within the provider's completion window (up to 24 h)");
  eval_->add_flag("--resume", options_.resume, "Continue the run in --out: skip the cases already recorded");
  eval_->add_option("--shard", options_.shard,
                    "Run slice I of N (0-based), e.g. 0/4; auto: from JOB_COMPLETION_INDEX and JOB_COMPLETIONS (a "
                    "Kubernetes Indexed Job), else CI_NODE_INDEX and CI_NODE_TOTAL (GitLab parallel:, 1-based)");
  eval_->add_option("--rejudge", options_.rejudge, "Judge a sample of cases K more times and report agreement")
      ->check(CLI::NonNegativeNumber);
  eval_->add_option("--rejudge-sample", options_.rejudge_sample, "Cases per skill to re-judge (default 20)")
      ->check(CLI::PositiveNumber);
  eval_->add_option("--history", options_.history, "History database (default DIR/../eval-history.sqlite)");
  eval_->add_option("--baseline", options_.baseline,
                    "Compare with a previous run: last, last-passing (the newest whose gates passed), pinned (the "
                    "run `eval pin` named) or a run id (none found: said on stderr and in summary.json's "
                    "baseline.status)");
  eval_->add_flag("--require-baseline", options_.require_baseline,
                  "With --baseline: exit 2 before any case runs when the history has no run to compare with");
  eval_->add_option("--rejudge-from", options_.rejudge_from,
                    "Judge the stored outputs of an earlier run (its folder or run id) with today's rubrics and "
                    "judges: a new run, no generation request");
  eval_
      ->add_option("--cache", options_.cache,
                   "Reuse provider answers to the same requests (SQLite; default FILE: eval-cache.sqlite next to "
                   "the history)")
      ->expected(0, 1);
  eval_->add_option("--cache-ttl", options_.cache_ttl,
                    "With --cache: answers older than this are asked again (90s, 30m, 12h, 7d)");
  eval_
      ->add_option("--cache-mode", options_.cache_mode,
                   "With --cache: read-write (default: hits from the cache, misses asked and stored), replay (answers "
                   "only from the cache; a miss exits 2 naming skill, case and request hash), refresh (ask every "
                   "request again and store it)")
      ->check(CLI::IsMember({"read-write", "replay", "refresh"}));
  eval_
      ->add_option("--fail-on", options_.fail_on,
                   "Which breaches exit 1: thresholds,regressions (default; also written any), or regressions "
                   "(against --baseline) only")
      ->check(CLI::IsMember(kFailOn))
      ->transform(CLI::Transformer(kFailOnSame));
  eval_->add_option("--run-id", options_.run_id, "Run id (default: a new one; shards of one night may share it)");
  eval_->add_option("--git-ref", options_.git_ref,
                    "The commit this run is made at, kept in the history (default: $GITHUB_SHA, else $CI_COMMIT_SHA)");
  AddMerge();
  AddCompare();
  AddPin();
}

void EvalCommand::AddMerge() {
  merge_ = eval_->add_subcommand("merge", "Combine shard folders into one run in --out, with its reports");
  merge_->add_option("sources", options_.merge_sources, "Shard output folders")->required();
  merge_->add_option("--out", options_.out, "Folder for the merged run")->required();
  merge_->add_option("--suite", options_.merge_suite, "The suite file (default: the one the shards ran)");
  merge_->add_option("--git-ref", options_.git_ref, "The commit the merged run is recorded at (default: the shards')");
  merge_->add_option("--history", options_.history, "History database (default DIR/../eval-history.sqlite)");
  merge_->add_option("--baseline", options_.baseline,
                     "Compare with a previous run: last, last-passing, pinned or a run id");
  merge_->add_flag("--require-baseline", options_.require_baseline,
                   "With --baseline: exit 2 before merging when the history has no run to compare with");
  merge_
      ->add_option("--fail-on", options_.fail_on,
                   "Which breaches exit 1: thresholds,regressions (default; also written any) or regressions")
      ->check(CLI::IsMember(kFailOn))
      ->transform(CLI::Transformer(kFailOnSame));
}

void EvalCommand::AddPin() {
  pin_ = eval_->add_subcommand("pin", "Make a recorded run its suite's baseline for --baseline pinned");
  pin_->add_option("run_id", options_.pin_run, "The run's id (as summary.json and the history give it)")->required();
  pin_->add_option("--history", options_.history, "History database (default: the config's history:)");
}

void EvalCommand::AddCompare() {
  compare_ = eval_->add_subcommand(
      "compare", "Judge two runs' outputs case by case, twice with the order swapped: wins, losses, ties, sign test");
  compare_->add_option("run_a", options_.compare_a, "Run A: its folder or run id")->required();
  compare_->add_option("run_b", options_.compare_b, "Run B: its folder or run id")->required();
  compare_->add_option("--rubric", options_.compare_rubric, "The rubric to compare by")->required();
  compare_->add_option("--judge-model", options_.compare_judge_model, "The judge (default: each skill's model)");
  compare_->add_option("--out", options_.out, "Folder for compare.json and compare.html")->required();
  compare_->add_option("--history", options_.history,
                       "History database, for run ids (default DIR/../eval-history.sqlite)");
  compare_->add_option("--concurrency", options_.concurrency, "Pairs judged at once (default 8)")
      ->check(CLI::PositiveNumber);
}

bool EvalCommand::parsed() const { return eval_->parsed(); }

int EvalCommand::Run(const CommonOptions& common) {
  options_.history = HistoryLocation(common, options_.history);
  if (merge_->parsed()) return MergeEval(common, options_);
  if (compare_->parsed()) return CompareEval(common, options_);
  if (pin_->parsed()) return PinRun(options_);
  if (options_.out.empty()) return Fail("--out DIR is required");
  return RunEval(common, options_);
}

}  // namespace skillrunner::cli
