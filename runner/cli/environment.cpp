#include "runner/cli/environment.h"

#include <filesystem>

#include "runner/skill_services.h"
#include "services/handler/builtin_handlers.h"
#include "services/handler/process_runner.h"
#include "services/providers/provider_set.h"

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
      return std::unexpected(std::vector<Diagnostic>{{config.source, {}, applied.error()}});
    }
  }
  return config;
}

SkillRegistry::LoadResult LoadRegistry(const CommonOptions& options, Config config) {
  RegistryOptions registry_options;
  registry_options.skills_dir = options.skills_dir;
  registry_options.rubrics_dir = options.rubrics_dir;
  registry_options.is_known_handler = handler::IsKnownHandler;
  return SkillRegistry::Load(registry_options, std::move(config));
}

struct Runtime::Parts {
  handler::AsioProcessRunner process_runner;
  std::unique_ptr<providers::ProviderSet> providers;
  generation::ModelDowngrades downgrades;
  generation::SessionMemory sessions;
};

std::map<std::string, providers::SkillSimulation, std::less<>> SkillSimulations(const SkillRegistry& registry) {
  std::map<std::string, providers::SkillSimulation, std::less<>> out;
  for (const auto& skill : registry.skills()) {
    const auto* descriptor = skill->descriptor.if_object();
    const auto* block = descriptor ? descriptor->if_contains("simulation") : nullptr;
    if (block == nullptr) continue;
    // Checked at load: a block that got this far parses.
    if (auto parsed = providers::ParseSkillSimulation(*block)) out.emplace(skill->id, std::move(*parsed));
  }
  return out;
}

std::expected<std::unique_ptr<Runtime>, std::string> Runtime::Create(
    std::shared_ptr<const SkillRegistry> registry, boost::asio::any_io_executor executor) {
  std::unique_ptr<Runtime> runtime(new Runtime());
  runtime->parts_ = std::make_unique<Parts>();
  Parts& parts = *runtime->parts_;
  auto set = providers::ProviderSet::Create(registry->config().providers, executor, ProcessEnv, RealClock(),
                                            registry->config().requests_per_minute);
  if (!set) return std::unexpected(set.error());
  parts.providers = std::move(*set);
  parts.providers->SetSkillSimulations(SkillSimulations(*registry));
  runtime->runner_ = std::make_unique<SkillRunner>(std::move(registry), RealClock());
  auto lookup = [set = parts.providers.get()](std::string_view name) { return set->Find(name); };
  InstallServices(*runtime->runner_, ServiceDeps{lookup, parts.process_runner, parts.downgrades, parts.sessions});
  return runtime;
}

Runtime::~Runtime() = default;

}  // namespace skillrunner::cli
