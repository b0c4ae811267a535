#include "runner/cli/environment.h"

#include <filesystem>

#include "services/handler/builtin_handlers.h"
#include "services/handler/process_runner.h"
#include "services/generation/llm_generation_service.h"
#include "services/providers/provider_set.h"
#include "services/providers/retrying_provider.h"
#include "services/review/llm_review_service.h"

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
  providers::AsioSleeper sleeper;
  generation::ModelDowngrades downgrades;
  generation::SessionMemory sessions;
  std::shared_ptr<review::Reviewer> reviewer;
};

std::expected<std::unique_ptr<Runtime>, std::string> Runtime::Create(
    std::shared_ptr<const SkillRegistry> registry, boost::asio::any_io_executor executor) {
  std::unique_ptr<Runtime> runtime(new Runtime());
  runtime->parts_ = std::make_unique<Parts>();
  Parts& parts = *runtime->parts_;
  auto set = providers::ProviderSet::Create(registry->config(), executor, ProcessEnv);
  if (!set) return std::unexpected(set.error());
  parts.providers = std::move(*set);
  runtime->runner_ = std::make_unique<SkillRunner>(std::move(registry));
  runtime->runner_->RegisterService(TemplateType::kHandler,
                                    std::make_shared<handler::HandlerService>(parts.process_runner));
  auto lookup = [set = parts.providers.get()](std::string_view name) { return set->Find(name); };
  SkillRunner* runner = runtime->runner_.get();
  auto registry_lookup = [runner] { return runner->registry(); };
  auto reviewer = std::make_shared<review::Reviewer>(registry_lookup, lookup, parts.sleeper, parts.downgrades);
  auto generation_service = std::make_shared<generation::LlmGenerationService>(
      lookup, parts.sleeper, parts.downgrades, parts.sessions);
  generation_service->SetReviewer(reviewer->GateHook());
  parts.reviewer = reviewer;
  runtime->runner_->RegisterService(TemplateType::kLlmJsonGeneration, generation_service);
  runtime->runner_->RegisterService(TemplateType::kLlmReview,
                                    std::make_shared<review::LlmReviewService>(reviewer));
  return runtime;
}

Runtime::~Runtime() = default;

review::Reviewer& Runtime::reviewer() { return *parts_->reviewer; }

}  // namespace skillrunner::cli
