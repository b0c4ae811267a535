#pragma once

// Where the `rollout` commands find rollout state (design.md §11.2): Redis
// when the config has `state.redis` (as serve shares it), else the state dir.

#include <memory>
#include <string>

#include "runner/cli/environment.h"
#include "runner/rollout/rollout_book.h"

namespace skillrunner::cli {

class RolloutStateSource {
 public:
  virtual ~RolloutStateSource() = default;
  // A book holding the state of every rollout of `registry`, as the store has it; null (after
  // printing why) when the store cannot be reached.
  virtual std::shared_ptr<rollout::RolloutBook> Read(const SkillRegistry& registry) = 0;
  // Leaves an operator's command for the process that decides; false (after printing why) when
  // the store cannot be reached.
  virtual bool Leave(const rollout::RolloutSpec& spec, rollout::Command command) = 0;
};

std::unique_ptr<RolloutStateSource> OpenRolloutState(const CommonOptions& common, const Config& config);

}  // namespace skillrunner::cli
