#include "runner/cli/environment.h"

#include <filesystem>

#include "services/handler/builtin_handlers.h"
#include "services/handler/process_runner.h"

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
};

Runtime::Runtime(std::shared_ptr<const SkillRegistry> registry)
    : parts_(std::make_unique<Parts>()),
      runner_(std::make_unique<SkillRunner>(std::move(registry))) {
  runner_->RegisterService(TemplateType::kHandler,
                           std::make_shared<handler::HandlerService>(parts_->process_runner));
}

Runtime::~Runtime() = default;

}  // namespace skillrunner::cli
