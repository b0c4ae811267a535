// libFuzzer target (issue 18): bytes as an eval suite.yaml through its loader
// and checks (LoadSuiteText: ParseYaml, suite.schema.json, thresholds, rate
// limits, each entry's skill, rubric and judge model resolved against the
// registry with JudgeOnModel, its dataset loaded with LoadDataset and every
// case checked against the skill's schemas). The registry is the source
// tree's skills/ and rubrics/ under its skillrunner.yaml, loaded once, so
// the datasets read are the shipped ones.
//   scripts/fuzz.sh suite_yaml SECONDS

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "runner/eval/suite.h"
#include "runner/tree/config.h"
#include "runner/tree/skill_registry.h"
#include "services/handler/builtin_handlers.h"

namespace {

std::shared_ptr<const skillrunner::SkillRegistry> LoadTree() {
  const std::string root = SKILLRUNNER_SOURCE_DIR;
  auto config = skillrunner::LoadConfig(root + "/skillrunner.yaml",
                                        [](std::string_view) -> std::optional<std::string> { return std::nullopt; });
  if (!config) std::abort();  // the shipped config must load
  skillrunner::RegistryOptions options;
  options.skills_dir = root + "/skills";
  options.rubrics_dir = root + "/rubrics";
  options.is_known_handler = skillrunner::handler::IsKnownHandler;
  auto loaded = skillrunner::SkillRegistry::Load(options, std::move(*config));
  if (skillrunner::HasErrors(loaded.diagnostics)) std::abort();  // and so must the shipped skills
  return loaded.registry;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::shared_ptr<const skillrunner::SkillRegistry> registry = LoadTree();
  static const std::string path = SKILLRUNNER_SOURCE_DIR "/evals/fuzz.yaml";
  auto suite =
      skillrunner::eval::LoadSuiteText(path, std::string_view(reinterpret_cast<const char*>(data), size), *registry);
  if (!suite) {
    (void)skillrunner::DiagnosticsToJson(suite.error());
  } else {
    (void)suite->CaseCount();
    (void)skillrunner::DiagnosticsToJson(suite->warnings);
  }
  return 0;
}
