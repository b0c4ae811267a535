#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runner/net/peer.h"
#include "runner/skill_runner.h"
#include "runner/tree/config.h"
#include "runner/tree/skill_registry.h"
#include "services/common/error.h"
#include "services/common/response_store.h"
#include "services/providers/batch/batching_provider.h"
#include "services/providers/simulated/simulated_provider.h"
#include "services/state/shared_state.h"
#include "services/telemetry/otlp_exporter.h"

namespace skillrunner::cli {

// The options every subcommand takes (design.md §6, §8).
struct CommonOptions {
  std::string skills_dir = "skills";
  std::string rubrics_dir = "rubrics";
  std::string config_file;  // empty: ./skillrunner.yaml if present, else built-in
  std::string provider;     // --provider / SKILLRUNNER_PROVIDER
  std::string log_level = "warn";
  std::string log_format = "text";
  std::string state_dir;        // --state-dir; empty: StateDir's order
  int handler_concurrency = 0;  // --handler-concurrency; 0: the config's, else the usable cores
};

// design.md §12.0: how many child processes run at once: --handler-concurrency, else the
// config's handler_concurrency, else the usable cores.
std::size_t HandlerConcurrency(const CommonOptions& options, const Config& config);

// Where serve and `rollout` keep rollout state (design.md §11.2): --state-dir,
// else $STATE_DIRECTORY (systemd's StateDirectory=, the first of a list),
// else $XDG_STATE_HOME/skillrunner, else ~/.local/state/skillrunner.
std::string StateDir(const CommonOptions& options, const EnvLookup& env);

// The config, with --provider applied. Errors are diagnostics (file:line:col).
std::expected<Config, std::vector<Diagnostic>> ResolveConfig(const CommonOptions& options);

// design.md §11.3: the history a command uses: `flag` (--history), else the config's `history:`,
// else "" (the command's own default). A config that does not load gives "" here; the command
// reports it when it loads the config itself.
std::string HistoryLocation(const CommonOptions& options, const std::string& flag);

// The config's tenants as the identity rule knows them (net/peer.h): each with its token (from its
// token_env, CONFIG_INVALID naming the pointer when that is unset) and its certificate subject.
// With `unset`, a tenant whose variable is unset is known by its certificate only, and named there.
Result<std::vector<net::Tenant>> TenantTokens(const Config& config, std::vector<std::string>* unset = nullptr);

// Every skill's `simulation:` block, for the simulated providers (which own
// the fault scripts).
std::map<std::string, providers::SkillSimulation, std::less<>> SkillSimulations(const SkillRegistry& registry);

// The registry options for the directories in `options`.
RegistryOptions RegistryOptionsFor(const CommonOptions& options);

// Loads the registry from the directories in `options`.
SkillRegistry::LoadResult LoadRegistry(const CommonOptions& options, Config config);

// The config's `state:` started on `executor` (connecting in the
// background), or null when it names no Redis.
std::shared_ptr<state::SharedState> StartSharedState(const Config& config, boost::asio::any_io_executor executor);

// design.md §9.4: the trace exporter the config's `telemetry:` and the OTEL_*
// variables ask for, started; null when they name no endpoint. An error
// (CONFIG_INVALID) names the setting that is wrong.
Result<std::shared_ptr<telemetry::OtlpExporter>> StartTracing(const Config& config, const EnvLookup& env);

// eval --batch (design.md §10.6): how the HTTP providers batch, and the run
// folder's journal (which outlives the runtime).
struct BatchRun {
  providers::BatchSettings settings;
  providers::BatchJournal* journal = nullptr;
  std::function<void(const std::string&)> say;
};

struct RuntimeOptions {
  // Limits, quotas and session memory shared through Redis; null: the
  // runtime starts its own when the config's `state.redis` asks for it.
  std::shared_ptr<state::SharedState> shared;
  // Rate limits that win over the config's (an eval suite's), by provider.
  std::map<std::string, state::RateLimit, std::less<>> rate_limits;
  // Where invocations' spans go (StartTracing); null: none are exported.
  std::shared_ptr<telemetry::SpanSink> spans;
  // eval --cache: answers are looked up here first and stored here
  // (design.md §9.5); must outlive the runtime. Null: no cache.
  ResponseStore* responses = nullptr;
  // eval --batch: each HTTP provider with a batch API sends through it. Null: online.
  const BatchRun* batch = nullptr;
  // serve: the rollouts calls are assigned and counted by (design.md §11.2). Null: every call
  // goes to a skill's stable version unless it pins one.
  std::shared_ptr<rollout::RolloutBook> rollouts = nullptr;
  // The process places of this eval or serve (kept across serve's reloads). Null: the runtime
  // makes its own of the config's handler_concurrency (else the usable cores).
  std::shared_ptr<handler::ProcessPools> process_pools = nullptr;
};

// Everything an invocation needs, wired with the real implementations: the
// providers of the registry's config (HTTP clients on `executor`, each behind
// its rate limiter), the services for each template type, the exec process
// runner.
class Runtime {
 public:
  // Fails (CONFIG_INVALID) when a provider's settings are unusable.
  static Result<std::unique_ptr<Runtime>> Create(std::shared_ptr<const SkillRegistry> registry,
                                                 boost::asio::any_io_executor executor, RuntimeOptions options = {});
  ~Runtime();
  SkillRunner& runner() { return *runner_; }
  // Null without `state.redis`.
  const std::shared_ptr<state::SharedState>& shared_state() const;
  // Runs a child process once a place of the shared pool is free (eval's exec checks).
  handler::ProcessRunner& pooled_process_runner();

 private:
  Runtime() = default;
  struct Parts;
  static void AddBatching(Parts& parts, const Config& config, boost::asio::any_io_executor executor,
                          const BatchRun& batch);
  std::unique_ptr<Parts> parts_;
  std::unique_ptr<SkillRunner> runner_;
};

}  // namespace skillrunner::cli
