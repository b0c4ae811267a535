#include "runner/cli/environment.h"

#include <spdlog/spdlog.h>

#include <cstdlib>
#include <filesystem>

#include "runner/online_review.h"
#include "runner/skill_services.h"
#include "services/handler/builtin_handlers.h"
#include "services/handler/process_runner.h"
#include "services/handler/process_slots.h"
#include "services/providers/caching_provider.h"
#include "services/providers/set/provider_set.h"
#include "services/state/request_limiter.h"
#include "services/state/shared_limiter.h"

namespace skillrunner::cli {

std::expected<Config, std::vector<Diagnostic>> ResolveConfig(const CommonOptions& options) {
  Config config;
  std::error_code ec;
  if (!options.config_file.empty()) {
    auto loaded = LoadConfig(options.config_file, ProcessEnv);
    if (!loaded) return loaded;
    config = std::move(*loaded);
  } else if (std::filesystem::exists("skillrunner.yaml", ec)) {
    auto loaded = LoadConfig("skillrunner.yaml", ProcessEnv);
    if (!loaded) return loaded;
    config = std::move(*loaded);
  } else {
    config = BuiltinConfig();
  }
  std::string provider = options.provider;
  if (provider.empty()) provider = ProcessEnv("SKILLRUNNER_PROVIDER").value_or("");
  if (!provider.empty()) {
    if (auto applied = ApplyProviderOverride(config, provider); !applied) {
      return std::unexpected(std::vector<Diagnostic>{
          {config.source, {}, applied.error().message, Diagnostic::Severity::kError, "config-invalid"}});
    }
  }
  return config;
}

std::string HistoryLocation(const CommonOptions& options, const std::string& flag) {
  if (!flag.empty()) return flag;
  auto config = ResolveConfig(options);
  return config ? config->history : std::string();
}

RegistryOptions RegistryOptionsFor(const CommonOptions& options) {
  RegistryOptions registry_options;
  registry_options.skills_dir = options.skills_dir;
  registry_options.rubrics_dir = options.rubrics_dir;
  registry_options.is_known_handler = handler::IsKnownHandler;
  return registry_options;
}

SkillRegistry::LoadResult LoadRegistry(const CommonOptions& options, Config config) {
  return SkillRegistry::Load(RegistryOptionsFor(options), std::move(config));
}

std::size_t HandlerConcurrency(const CommonOptions& options, const Config& config) {
  if (options.handler_concurrency > 0) return static_cast<std::size_t>(options.handler_concurrency);
  if (config.handler_concurrency) return static_cast<std::size_t>(*config.handler_concurrency);
  return handler::UsableCores();
}

struct Runtime::Parts {
  handler::AsioProcessRunner process_runner;
  std::shared_ptr<handler::ProcessPools> pools;
  std::unique_ptr<handler::PooledProcessRunner> pooled;
  std::unique_ptr<providers::ProviderSet> providers;
  generation::ModelDowngrades downgrades;
  generation::SessionMemory sessions;
  std::shared_ptr<state::SharedState> shared;
  bool owns_shared = false;
  // eval --cache: each provider behind its cache (design.md §9.5), by name.
  std::map<std::string, std::unique_ptr<providers::CachingProvider>, std::less<>> cached;
  // eval --batch: each provider with a batch API behind it (design.md §10.6), by name.
  std::map<std::string, std::unique_ptr<providers::BatchingProvider>, std::less<>> batched;
};

std::shared_ptr<state::SharedState> StartSharedState(const Config& config, boost::asio::any_io_executor executor) {
  if (config.state.redis.empty()) return nullptr;
  auto url = state::ParseRedisUrl(config.state.redis);
  if (!url) return nullptr;  // checked at load
  state::SharedStateOptions options;
  options.url = std::move(*url);
  options.key_namespace = config.state.key_namespace;
  options.replicas_hint = config.state.replicas_hint;
  options.timeout = config.state.timeout;
  return state::SharedState::Start(executor, std::move(options), RealClock());
}

const std::shared_ptr<state::SharedState>& Runtime::shared_state() const { return parts_->shared; }

handler::ProcessRunner& Runtime::pooled_process_runner() { return *parts_->pooled; }

std::map<std::string, providers::SkillSimulation, std::less<>> SkillSimulations(const SkillRegistry& registry) {
  std::map<std::string, providers::SkillSimulation, std::less<>> out;
  // A candidate's requests take its own block (design.md §11.2), an empty one when it has none.
  auto add = [&out](const Skill& skill, bool candidate) {
    const auto* descriptor = skill.descriptor.if_object();
    const auto* block = descriptor ? descriptor->if_contains("simulation") : nullptr;
    // Checked at load: a block that got this far parses.
    std::optional<providers::SkillSimulation> parsed;
    if (block != nullptr) {
      if (auto checked = providers::ParseSkillSimulation(*block)) parsed = std::move(*checked);
    }
    if (!parsed && !candidate) return;
    out.emplace(candidate ? skill.id + "@" + std::to_string(skill.version) : skill.id,
                parsed ? std::move(*parsed) : providers::SkillSimulation{});
  };
  for (const auto& skill : registry.skills()) {
    add(*skill, false);
    if (skill->candidate) add(*skill->candidate, true);
  }
  return out;
}

Result<std::shared_ptr<telemetry::OtlpExporter>> StartTracing(const Config& config, const EnvLookup& env) {
  telemetry::OtlpExporterOptions options;
  if (!config.telemetry.otlp_endpoint.empty()) options.endpoint = telemetry::TracesUrl(config.telemetry.otlp_endpoint);
  options.resource.service_name = config.telemetry.service_name;
  options.resource.scope_version = SKILLRUNNER_VERSION;
  if (auto applied = telemetry::ApplyOtelEnvironment(options, env); !applied) {
    return std::unexpected(std::move(applied.error()));
  }
  if (options.endpoint.empty()) return nullptr;
  if (!options.endpoint.starts_with("http://") && !options.endpoint.starts_with("https://")) {
    return Fail(ErrorCode::kConfigInvalid, "the OTLP endpoint must be an http:// or https:// URL");
  }
  return std::make_shared<telemetry::OtlpExporter>(std::move(options));
}

namespace {

// gen_ai.provider.name of each configured provider (the GenAI semantic
// conventions' well-known names; Azure is OpenAI with an api-version).
std::map<std::string, std::string, std::less<>> ProviderSystems(const Config& config) {
  std::map<std::string, std::string, std::less<>> out;
  for (const auto& [name, provider] : config.providers) {
    std::string system = provider.kind;
    if (provider.kind == "gemini") system = "gcp.gemini";
    if (provider.kind == "vertex") system = "gcp.vertex_ai";
    if (provider.kind == "bedrock") system = "aws.bedrock";
    if (provider.kind == "simulated") system = "skillrunner.simulated";
    const auto* query = provider.settings.if_contains("query");
    if (provider.kind == "openai" && query != nullptr && query->is_object() &&
        query->as_object().contains("api-version")) {
      system = "azure.ai.openai";
    }
    out.emplace(name, std::move(system));
  }
  return out;
}

}  // namespace

// Each provider with a batch API behind a BatchingProvider (the simulated
// provider answers online).
void Runtime::AddBatching(Parts& parts, const Config& config, boost::asio::any_io_executor executor,
                          const BatchRun& batch) {
  for (const auto& [name, settings] : config.providers) {
    providers::Provider* online = parts.providers->Find(name);
    auto api = providers::MakeBatchApi(name, settings, executor, ProcessEnv);
    if (online == nullptr || !api) continue;
    parts.batched.emplace(name, std::make_unique<providers::BatchingProvider>(
                                    name, settings.kind, *online, std::move(api), *batch.journal, batch.settings,
                                    RealClock(), executor, batch.say));
  }
}

Result<std::unique_ptr<Runtime>> Runtime::Create(std::shared_ptr<const SkillRegistry> registry,
                                                 boost::asio::any_io_executor executor, RuntimeOptions options) {
  std::unique_ptr<Runtime> runtime(new Runtime());
  runtime->parts_ = std::make_unique<Parts>();
  Parts& parts = *runtime->parts_;
  parts.shared = options.shared;
  if (!parts.shared) {
    parts.shared = StartSharedState(registry->config(), executor);
    parts.owns_shared = parts.shared != nullptr;
  }
  if (parts.shared) parts.sessions.Share(parts.shared);
  std::map<std::string, state::RateLimit, std::less<>> limits = registry->config().rate_limits;
  for (const auto& [name, limit] : options.rate_limits) limits[name] = limit;
  // Entries on one account share one pace: one limiter, one Redis bucket
  // (named by the entries, joined with "+"), the smallest ceiling configured.
  auto make_limiter = [limits = std::move(limits), shared = parts.shared](
                          const std::vector<std::string>& entries) -> std::shared_ptr<state::Limiter> {
    state::RateLimit limit = providers::AccountLimit(limits, entries);
    std::string bucket;
    for (const std::string& name : entries) bucket += (bucket.empty() ? "" : "+") + name;
    if (shared) return std::make_shared<state::SharedLimiter>(shared, bucket, limit, RealClock());
    return std::make_shared<state::RequestLimiter>(limit, RealClock());
  };
  auto set =
      providers::ProviderSet::Create(registry->config().providers, executor, ProcessEnv, RealClock(), make_limiter);
  if (!set) return std::unexpected(std::move(set.error()));
  parts.providers = std::move(*set);
  parts.providers->SetSkillSimulations(SkillSimulations(*registry));
  runtime->runner_ = std::make_unique<SkillRunner>(std::move(registry), RealClock());
  const Config& config = runtime->runner_->registry()->config();
  runtime->runner_->SetTracing(TraceSettings{options.spans, config.telemetry.capture_content, ProviderSystems(config)});
  runtime->runner_->SetRollouts(options.rollouts);
  if (options.rollouts) {  // design.md §12.1: counted and judged online by an observer
    auto observer = std::make_shared<RolloutObserver>(options.rollouts);
    runtime->runner_->SetOnlineReviews(observer->reviews());
    runtime->runner_->AddObserver(std::move(observer));
  }
  if (options.batch != nullptr) AddBatching(parts, config, executor, *options.batch);
  if (options.responses != nullptr) {
    for (const auto& [name, settings] : runtime->runner_->registry()->config().providers) {
      providers::Provider* inner = parts.providers->Find(name);
      if (auto batched = parts.batched.find(name); batched != parts.batched.end()) inner = batched->second.get();
      if (inner != nullptr) {
        parts.cached.emplace(name, std::make_unique<providers::CachingProvider>(*inner, settings.kind,
                                                                                settings.base_url, *options.responses));
      }
    }
  }
  auto lookup = [set = parts.providers.get(), cached = &parts.cached,
                 batched = &parts.batched](std::string_view name) -> providers::Provider* {
    if (auto it = cached->find(name); it != cached->end()) return it->second.get();
    if (auto it = batched->find(name); it != batched->end()) return it->second.get();
    return set->Find(name);
  };
  // What the config said without refusing (config-empty): once per load, where validate's listing is
  // not read.
  for (const Diagnostic& warning : runtime->runner_->registry()->config().warnings)
    spdlog::warn("{}", warning.ToString());
  parts.pools = options.process_pools;
  if (!parts.pools) {
    const Config& loaded = runtime->runner_->registry()->config();
    parts.pools = std::make_shared<handler::ProcessPools>(
        loaded.handler_concurrency ? static_cast<std::size_t>(*loaded.handler_concurrency) : handler::UsableCores());
  }
  parts.pooled = std::make_unique<handler::PooledProcessRunner>(parts.process_runner, parts.pools->shared());
  runtime->runner_->SetProcessPools(parts.pools);
  ServiceDeps deps{lookup, parts.process_runner, parts.downgrades, parts.sessions};
  deps.rule_runner = parts.pooled.get();
  InstallServices(*runtime->runner_, deps);
  return runtime;
}

Runtime::~Runtime() {
  if (parts_ && parts_->owns_shared) parts_->shared->Stop();
}

std::string StateDir(const CommonOptions& options, const EnvLookup& env) {
  if (!options.state_dir.empty()) return options.state_dir;
  if (auto systemd = env("STATE_DIRECTORY"); systemd && !systemd->empty())
    return systemd->substr(0, systemd->find(':'));
  if (auto xdg = env("XDG_STATE_HOME"); xdg && !xdg->empty()) return *xdg + "/skillrunner";
  auto home = env("HOME");
  return (home && !home->empty() ? *home : std::string(".")) + "/.local/state/skillrunner";
}

Result<std::vector<net::Tenant>> TenantTokens(const Config& config, std::vector<std::string>* unset) {
  std::vector<net::Tenant> tenants;
  for (const auto& [name, tenant] : config.tenants) {
    if (tenant.token_env.empty()) {  // known by its client certificate only
      tenants.push_back({name, "", tenant.tls_subject});
      continue;
    }
    const char* token = std::getenv(tenant.token_env.c_str());
    if ((token == nullptr || *token == '\0') && unset != nullptr) {
      unset->push_back(name);
      tenants.push_back({name, "", tenant.tls_subject});
      continue;
    }
    if (token == nullptr || *token == '\0') {
      return Fail(ErrorCode::kConfigInvalid, config.source + ": /tenants/" + name + "/token_env: " + tenant.token_env +
                                                 " is not set (the tenant's token)");
    }
    tenants.push_back({name, token, tenant.tls_subject});
  }
  return tenants;
}

}  // namespace skillrunner::cli
