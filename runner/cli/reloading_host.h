#pragma once

#include <atomic>
#include <boost/asio/any_io_executor.hpp>
#include <expected>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runner/cli/environment.h"
#include "runner/server/skill_host.h"

namespace skillrunner::cli {

// The runner the server uses, rebuilt whole (config, providers, registry) on
// a reload; the old one lives until its last invocation ends.
class ReloadingHost : public server::SkillHost {
 public:
  // `allow_broken` (serve --allow-broken): a tree whose skills or rubrics do
  // not all load is served without them, at start and on reload; a broken
  // config is refused either way.
  // `rollouts` (serve): the calls of every tree it loads are assigned and counted by it.
  ReloadingHost(CommonOptions common, boost::asio::any_io_executor executor, bool allow_broken = false,
                std::shared_ptr<rollout::RolloutBook> rollouts = nullptr)
      : common_(std::move(common)),
        executor_(std::move(executor)),
        allow_broken_(allow_broken),
        rollouts_(std::move(rollouts)) {}

  // Why the first load was refused: every error (file:line:col) and a line
  // that sums it up.
  struct LoadFailure {
    std::vector<Diagnostic> problems;
    std::string message;
  };
  // The first load, by the reload rule: any skill, rubric or config error
  // refuses it unless `allow_broken`, which refuses only a config or
  // providers that are unusable (the problems are then logged as warnings).
  std::expected<void, LoadFailure> LoadInitial();

  std::shared_ptr<SkillRunner> Current() override;
  ReloadReport Reload(const std::function<void()>& before_swap) override;
  boost::json::array Failed() override;

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
  // A runtime in service and what its tree left out, swapped as one.
  struct Serving {
    std::shared_ptr<Runtime> runtime;
    boost::json::array failed;
  };
  Built Build();
  // Whether `built` may go into service (the reload rule).
  bool Acceptable(const Built& built) const;
  void Install(Built built);

  CommonOptions common_;
  boost::asio::any_io_executor executor_;
  bool allow_broken_ = false;
  std::shared_ptr<rollout::RolloutBook> rollouts_;
  std::mutex reload_mutex_;
  std::atomic<std::shared_ptr<const Serving>> serving_;
  std::shared_ptr<state::SharedState> shared_;
  std::shared_ptr<handler::ProcessPools> pools_;  // made at the first load
  std::shared_ptr<telemetry::OtlpExporter> tracing_;
  bool tracing_started_ = false;
};

}  // namespace skillrunner::cli
