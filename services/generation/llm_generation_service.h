#pragma once

#include <functional>
#include <string_view>

#include "runner/skill_service.h"
#include "services/generation/session_memory.h"
#include "services/generation/structured_generator.h"

namespace skillrunner::generation {

// Finds the Provider a skill runs on by provider name (nullptr: unknown).
using ProviderLookup = std::function<providers::Provider*(std::string_view)>;

// LLM_JSON_GENERATION (DESIGN §5.1): renders the prompt from the input, then
// runs a StructuredGenerator on the skill's provider with the skill's schema.
class LlmGenerationService : public SkillService {
 public:
  LlmGenerationService(ProviderLookup providers, providers::Sleeper& sleeper,
                       ModelDowngrades& downgrades, SessionMemory& sessions,
                       providers::RetryingProviderOptions options = {});

  boost::asio::awaitable<Result<boost::json::value>> Run(const Skill& skill,
                                                         const boost::json::value& input,
                                                         InvocationContext& ctx) override;

 private:
  ProviderLookup providers_;
  providers::Sleeper& sleeper_;
  ModelDowngrades& downgrades_;
  SessionMemory& sessions_;
  providers::RetryingProviderOptions options_;
};

// The spec for a generation skill's own output (prompts rendered by the caller).
GenerationSpec SpecForSkill(const Skill& skill, std::string system, std::string user,
                            const InvocationOptions& options);

// Renders a prompt text of the skill; INPUT_INVALID naming the missing path.
Result<std::string> RenderPrompt(const Skill& skill, std::string_view which,
                                 const std::string& text, const std::vector<Placeholder>& placeholders,
                                 const boost::json::value& input);

}  // namespace skillrunner::generation
