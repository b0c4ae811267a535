#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runner/config.h"
#include "runner/skill_registry.h"
#include "runner/skill_runner.h"

namespace skillrunner::cli {

// The options every subcommand takes (DESIGN §6, §8).
struct CommonOptions {
  std::string skills_dir = "skills";
  std::string rubrics_dir = "rubrics";
  std::string config_file;  // empty: ./skillrunner.yaml if present, else built-in
  std::string provider;     // --provider / SKILLRUNNER_PROVIDER
  std::string log_level = "warn";
  std::string log_format = "text";
};

// The config, with --provider applied. Errors are diagnostics (file:line:col).
std::expected<Config, std::vector<Diagnostic>> ResolveConfig(const CommonOptions& options);

// Loads the registry from the directories in `options`.
SkillRegistry::LoadResult LoadRegistry(const CommonOptions& options, Config config);

// Everything an invocation needs, wired with the real implementations.
class Runtime {
 public:
  explicit Runtime(std::shared_ptr<const SkillRegistry> registry);
  ~Runtime();
  SkillRunner& runner() { return *runner_; }

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
  std::unique_ptr<SkillRunner> runner_;
};

}  // namespace skillrunner::cli
