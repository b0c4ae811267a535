// libFuzzer target (issue 18): bytes as a skill.yaml through the loader and
// every check it makes at load (LoadSkillText: ParseYaml, the descriptor's
// schema, the metaschema and LintSchema of input_schema and output_schema,
// CompiledSchema::Compile, placeholders, validators, the fault script, and
// MakeStrictSchema for the model's provider, fallbacks and escalation).
// The config has one model of each provider kind and output mode. The file
// is placed in skills/extract_contact/ of the source tree, so a schema given
// by path (schemas/contact.json) is read as `validate` would read it.
//   scripts/fuzz.sh skill_yaml SECONDS

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runner/tree/config.h"
#include "runner/tree/skill_registry.h"
#include "services/handler/builtin_handlers.h"

namespace {

using skillrunner::Config;
using skillrunner::ModelConfig;
using skillrunner::OutputMode;

void AddModel(Config& config, std::string name, std::string provider, OutputMode mode,
              std::vector<std::string> fallbacks = {}, std::string escalate_to = "") {
  ModelConfig model;
  model.name = name;
  model.provider = std::move(provider);
  model.structured_output = mode;
  model.fallbacks = std::move(fallbacks);
  model.escalate_to = std::move(escalate_to);
  config.models[name] = std::move(model);
}

Config FuzzConfig() {
  Config config;
  for (std::string kind : {"openai", "anthropic", "gemini", "simulated"}) {
    config.providers[kind] = skillrunner::ProviderConfig{kind, kind, "", "", {}};
  }
  AddModel(config, "gpt-4o-mini", "openai", OutputMode::kNative, {"claude-sonnet-4-5", "gemini-2.5-flash"}, "gpt-4o");
  AddModel(config, "gpt-4o", "openai", OutputMode::kNative);
  AddModel(config, "claude-sonnet-4-5", "anthropic", OutputMode::kNative, {"mistral-large"});
  AddModel(config, "gemini-2.5-flash", "gemini", OutputMode::kNative);
  AddModel(config, "mistral-large", "openai", OutputMode::kTool);
  AddModel(config, "claude-tool", "anthropic", OutputMode::kTool);
  AddModel(config, "llama3.1:8b", "openai", OutputMode::kNone);
  AddModel(config, "json-object", "openai", OutputMode::kJsonObject);
  AddModel(config, "sim", "simulated", OutputMode::kNative);
  config.default_provider = "simulated";
  config.source = "skillrunner.yaml";
  return config;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const Config config = FuzzConfig();
  static const std::string path = SKILLRUNNER_SOURCE_DIR "/skills/extract_contact/skill.yaml";
  std::vector<skillrunner::Diagnostic> warnings;
  auto skill = skillrunner::LoadSkillText(path, std::string_view(reinterpret_cast<const char*>(data), size), config,
                                          skillrunner::handler::IsKnownHandler, warnings);
  if (!skill) {
    for (const auto& d : skill.error()) (void)d.ToString();
    (void)skillrunner::DiagnosticsToJson(skill.error());
  }
  (void)skillrunner::DiagnosticsToJson(warnings);
  return 0;
}
