#include "runner/cli/reloading_host.h"

#include <spdlog/spdlog.h>

namespace skillrunner::cli {

std::expected<void, std::string> ReloadingHost::LoadInitial() {
  auto built = Build();
  for (const auto& d : built.diagnostics) {
    if (d.severity == Diagnostic::Severity::kError) spdlog::warn("{}", d.ToString());
  }
  if (!built.runtime) return std::unexpected(built.failure);
  runtime_.store(std::move(built.runtime));
  return {};
}

std::shared_ptr<SkillRunner> ReloadingHost::Current() {
  std::shared_ptr<Runtime> runtime = runtime_.load();
  return std::shared_ptr<SkillRunner>(runtime, &runtime->runner());
}

server::SkillHost::ReloadReport ReloadingHost::Reload() {
  std::lock_guard lock(reload_mutex_);
  auto built = Build();
  ReloadReport report;
  report.diagnostics = DiagnosticsToJson(built.diagnostics);
  if (!built.failure.empty()) {
    report.diagnostics.push_back(boost::json::object{{"severity", "error"}, {"message", built.failure}});
  }
  if (!built.runtime || HasErrors(built.diagnostics)) return report;
  report.ok = true;
  report.skills = built.runtime->runner().registry()->skills().size();
  report.rubrics = built.runtime->runner().registry()->rubrics().size();
  runtime_.store(std::move(built.runtime));
  return report;
}

ReloadingHost::Built ReloadingHost::Build() {
  Built built;
  auto config = ResolveConfig(common_);
  if (!config) {
    built.diagnostics = config.error();
    built.failure = "the config does not load";
    return built;
  }
  if (!shared_) shared_ = StartSharedState(*config, executor_);
  if (!tracing_started_) {
    auto tracing = StartTracing(*config, ProcessEnv);
    if (!tracing) {
      built.failure = tracing.error();
      return built;
    }
    tracing_ = std::move(*tracing);
    tracing_started_ = true;
  }
  auto loaded = LoadRegistry(common_, std::move(*config));
  built.diagnostics = std::move(loaded.diagnostics);
  auto runtime = Runtime::Create(loaded.registry, executor_, RuntimeOptions{shared_, {}, tracing_});
  if (!runtime) {
    built.failure = runtime.error();
    return built;
  }
  built.runtime = std::move(*runtime);
  return built;
}

}  // namespace skillrunner::cli
