#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <atomic>
#include <expected>
#include <memory>
#include <mutex>
#include <string>

#include "runner/cli/environment.h"
#include "runner/server/skill_host.h"

namespace skillrunner::cli {

// The runner the server uses, rebuilt whole (config, providers, registry) on
// a reload; the old one lives until its last invocation ends.
class ReloadingHost : public server::SkillHost {
 public:
  ReloadingHost(CommonOptions common, boost::asio::any_io_executor executor)
      : common_(std::move(common)), executor_(std::move(executor)) {}

  // The first load: broken files are logged and left out (as `run` does);
  // fails only when the config or the providers are unusable.
  std::expected<void, std::string> LoadInitial();

  std::shared_ptr<SkillRunner> Current() override;
  ReloadReport Reload() override;

  // The shared state the first load's `state.redis` started (kept across
  // reloads: a reload does not reconnect); null without one.
  const std::shared_ptr<state::SharedState>& shared_state() const { return shared_; }
  // The trace exporter the first load's `telemetry:` (or OTEL_*) started,
  // kept across reloads; null without an endpoint.
  const std::shared_ptr<telemetry::OtlpExporter>& tracing() const { return tracing_; }

 private:
  struct Built {
    std::shared_ptr<Runtime> runtime;
    std::vector<Diagnostic> diagnostics;
    std::string failure;
  };
  Built Build();

  CommonOptions common_;
  boost::asio::any_io_executor executor_;
  std::mutex reload_mutex_;
  std::atomic<std::shared_ptr<Runtime>> runtime_;
  std::shared_ptr<state::SharedState> shared_;
  std::shared_ptr<telemetry::OtlpExporter> tracing_;
  bool tracing_started_ = false;
};

}  // namespace skillrunner::cli
