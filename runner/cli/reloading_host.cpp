#include "runner/cli/reloading_host.h"

#include <spdlog/spdlog.h>

#include <set>

#include "runner/tree/schema_changes.h"

namespace skillrunner::cli {
namespace json = boost::json;

namespace {

std::vector<Diagnostic> Errors(const std::vector<Diagnostic>& diagnostics) {
  std::vector<Diagnostic> errors;
  for (const auto& d : diagnostics) {
    if (d.severity == Diagnostic::Severity::kError) errors.push_back(d);
  }
  return errors;
}

// One {file, line, col, message} per error: what `health` and /readyz list.
json::array FailedJson(const std::vector<Diagnostic>& diagnostics) {
  json::array failed;
  for (const auto& d : Errors(diagnostics)) {
    failed.push_back(
        json::object{{"file", d.file}, {"line", d.position.line}, {"col", d.position.column}, {"message", d.message}});
  }
  return failed;
}

std::string BrokenTreeMessage(const std::vector<Diagnostic>& errors) {
  std::set<std::string> files;
  for (const auto& d : errors) files.insert(d.file);
  return std::to_string(files.size()) + (files.size() == 1 ? " file does" : " files do") +
         " not load (every problem above); fix it, or start with --allow-broken to serve the rest";
}

}  // namespace

std::expected<void, ReloadingHost::LoadFailure> ReloadingHost::LoadInitial() {
  auto built = Build();
  if (!Acceptable(built)) {
    LoadFailure failure{Errors(built.diagnostics), built.failure};
    if (failure.message.empty()) failure.message = BrokenTreeMessage(failure.problems);
    return std::unexpected(std::move(failure));
  }
  for (const auto& d : Errors(built.diagnostics)) spdlog::warn("not served: {}", d.ToString());
  Install(std::move(built));
  return {};
}

std::shared_ptr<SkillRunner> ReloadingHost::Current() {
  std::shared_ptr<const Serving> serving = serving_.load();
  return std::shared_ptr<SkillRunner>(serving, &serving->runtime->runner());
}

json::array ReloadingHost::Failed() { return serving_.load()->failed; }

server::SkillHost::ReloadReport ReloadingHost::Reload(const std::function<void()>& before_swap) {
  std::lock_guard lock(reload_mutex_);
  auto built = Build();
  ReloadReport report;
  // A breaking schema change whose version did not rise is refused even under --allow-broken: the
  // skill would still be served, to callers it breaks.
  std::vector<Diagnostic> unversioned;
  if (built.runtime) {
    report.changed =
        SchemaChanges(*serving_.load()->runtime->runner().registry(), *built.runtime->runner().registry(), unversioned);
    built.diagnostics.insert(built.diagnostics.end(), unversioned.begin(), unversioned.end());
  }
  report.diagnostics = DiagnosticsToJson(built.diagnostics);
  if (!built.failure.empty()) {
    report.diagnostics.push_back(json::object{{"severity", "error"}, {"message", built.failure}});
  }
  if (!Acceptable(built) || !unversioned.empty()) {
    // Each error where it is, as validate says it: the summary alone sent people to run validate.
    for (const auto& d : Errors(built.diagnostics)) spdlog::warn("reload refused: {}", d.ToString());
    if (!built.failure.empty()) spdlog::warn("reload refused: {}", built.failure);
    return report;
  }
  report.ok = true;
  report.skills = built.runtime->runner().registry()->skills().size();
  report.rubrics = built.runtime->runner().registry()->rubrics().size();
  report.failed = FailedJson(built.diagnostics);
  before_swap();
  Install(std::move(built));
  return report;
}

bool ReloadingHost::Acceptable(const Built& built) const {
  return built.runtime && (allow_broken_ || !HasErrors(built.diagnostics));
}

void ReloadingHost::Install(Built built) {
  auto serving = std::make_shared<const Serving>(Serving{std::move(built.runtime), FailedJson(built.diagnostics)});
  serving_.store(std::move(serving));
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
      built.failure = tracing.error().message;
      return built;
    }
    tracing_ = std::move(*tracing);
    tracing_started_ = true;
  }
  // One set of process places for the server's life; a reload may resize it.
  const std::size_t places = HandlerConcurrency(common_, *config);
  if (!pools_) {
    pools_ = std::make_shared<handler::ProcessPools>(places);
  } else {
    pools_->shared().SetCapacity(places);
  }
  auto loaded = LoadRegistry(common_, std::move(*config));
  built.diagnostics = std::move(loaded.diagnostics);
  RuntimeOptions options{shared_, {}, tracing_, nullptr, nullptr, rollouts_};
  options.process_pools = pools_;
  auto runtime = Runtime::Create(loaded.registry, executor_, std::move(options));
  if (!runtime) {
    built.failure = runtime.error().message;
    return built;
  }
  built.runtime = std::move(*runtime);
  // A sample waiting for its online review keeps this runtime alive (design.md §11.2).
  built.runtime->runner().SetSelf(std::shared_ptr<SkillRunner>(built.runtime, &built.runtime->runner()));
  return built;
}

}  // namespace skillrunner::cli
