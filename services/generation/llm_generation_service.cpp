#include "services/generation/llm_generation_service.h"

namespace skillrunner::generation {
namespace json = boost::json;

LlmGenerationService::LlmGenerationService(ProviderLookup providers, providers::Sleeper& sleeper,
                                           ModelDowngrades& downgrades, SessionMemory& sessions,
                                           providers::RetryingProviderOptions options)
    : providers_(std::move(providers)),
      sleeper_(sleeper),
      downgrades_(downgrades),
      sessions_(sessions),
      options_(std::move(options)) {}

Result<std::string> RenderPrompt(const Skill& skill, std::string_view which, const std::string& text,
                                 const std::vector<Placeholder>& placeholders,
                                 const json::value& input) {
  auto rendered = RenderTemplate(text, placeholders, input);
  if (!rendered) {
    return std::unexpected(Error{ErrorCode::kInputInvalid,
                                 rendered.error() + " (prompt." + std::string(which) + " of skill \"" +
                                     skill.id + "\")",
                                 {}, {}});
  }
  return std::move(*rendered);
}

GenerationSpec SpecForSkill(const Skill& skill, std::string system, std::string user,
                            const InvocationOptions& options) {
  GenerationSpec spec;
  spec.skill_id = skill.id;
  spec.model = skill.model;
  spec.mode = skill.output_mode;
  spec.schema_name = skill.id;
  for (char& c : spec.schema_name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (spec.schema_name.size() > 64) spec.schema_name.resize(64);
  spec.schema = &skill.output_schema_json;
  spec.compiled_schema = skill.output_schema.get();
  spec.strict_wire_schema = skill.strict_wire_schema ? &*skill.strict_wire_schema : nullptr;
  spec.system = std::move(system);
  spec.user = std::move(user);
  spec.temperature = skill.temperature;
  spec.max_output_tokens = skill.max_output_tokens;
  spec.retry = skill.retry;
  spec.retry_truncated = skill.retry_truncated;
  spec.simulation.skill_id = skill.id;
  spec.simulation.seed = options.seed.value_or(skill.simulation_seed.value_or(0));
  spec.simulation.output_schema = skill.output_schema_json;
  spec.simulation.faults = skill.simulation_faults;
  return spec;
}

boost::asio::awaitable<Result<json::value>> LlmGenerationService::Run(const Skill& skill,
                                                                      const json::value& input,
                                                                      InvocationContext& ctx) {
  providers::Provider* provider = providers_(skill.provider);
  if (provider == nullptr) {
    co_return std::unexpected(Error{ErrorCode::kConfigInvalid,
                                    "skill \"" + skill.id + "\" runs on provider \"" + skill.provider +
                                        "\", which this process has not configured",
                                    {}, {}});
  }
  auto system = RenderPrompt(skill, "system", skill.prompt.system, skill.prompt.system_placeholders, input);
  if (!system) co_return std::unexpected(std::move(system.error()));
  auto user = RenderPrompt(skill, "user", skill.prompt.user, skill.prompt.user_placeholders, input);
  if (!user) co_return std::unexpected(std::move(user.error()));

  GenerationSpec spec = SpecForSkill(skill, std::move(*system), std::move(*user), ctx.options());
  const auto& session = ctx.options().session;
  if (session) spec.avoid = sessions_.Recall(*session, skill.id);

  StructuredGenerator generator(*provider, sleeper_, downgrades_, options_);
  std::size_t first_attempt = ctx.attempts().size();
  auto result = co_await generator.Generate(spec, ctx);
  if (session) {
    for (std::size_t i = first_attempt; i < ctx.attempts().size(); ++i) {
      if (ctx.attempts()[i].kind == "validation") sessions_.Remember(*session, skill.id, ctx.attempts()[i].errors);
    }
  }
  co_return result;
}

}  // namespace skillrunner::generation
