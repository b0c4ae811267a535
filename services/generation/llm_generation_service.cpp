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
  spec.schema_name = ResponseFormatName(skill.id);
  spec.schema = &skill.output_schema_json;
  spec.schema_text = &skill.output_schema_text;
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

std::string ReviewFeedback(const json::value& verdict) {
  auto list = [&](std::string_view key) {
    std::string out;
    const json::object* obj = verdict.if_object();
    const json::value* items = obj ? obj->if_contains(key) : nullptr;
    if (items == nullptr || !items->is_array()) return out;
    for (const auto& item : items->get_array()) {
      if (item.is_string()) out += "- " + std::string(item.get_string()) + "\n";
    }
    return out;
  };
  std::string out = "A reviewer rejected an earlier answer:\n" + list("issues");
  if (std::string fixes = list("suggested_fixes"); !fixes.empty()) out += "Suggested fixes:\n" + fixes;
  out += "Answer again with these fixed.";
  return out;
}

boost::asio::awaitable<Result<json::value>> LlmGenerationService::Generate(const Skill& skill,
                                                                           const json::value& input,
                                                                           const std::string& feedback,
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
  if (!feedback.empty()) *user += "\n\n" + feedback;

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

boost::asio::awaitable<Result<json::value>> LlmGenerationService::Run(const Skill& skill,
                                                                      const json::value& input,
                                                                      InvocationContext& ctx) {
  const std::string no_feedback;
  auto output = co_await Generate(skill, input, no_feedback, ctx);
  if (!output || !skill.review || !reviewer_) co_return output;

  std::size_t accepted = ctx.attempts().size() - 1;  // the generation's "ok" attempt
  auto verdict = co_await reviewer_(skill, *output, input, ctx);
  if (!verdict) co_return std::unexpected(std::move(verdict.error()));
  bool passed = verdict->as_object().at("pass").as_bool();
  if (passed || !skill.review->retry_once) {
    ctx.review() = std::move(*verdict);
    co_return output;
  }
  // The rejected output's attempt says why it was not used.
  if (Attempt* rejected = ctx.attempt_at(accepted)) {
    rejected->kind = "review";
    rejected->errors.clear();
    for (const auto& issue : verdict->as_object().at("issues").as_array()) {
      if (issue.is_string()) rejected->errors.push_back({"", "review: " + std::string(issue.get_string())});
    }
  }

  const std::string feedback = ReviewFeedback(*verdict);
  auto second = co_await Generate(skill, input, feedback, ctx);
  if (!second) {
    co_return std::unexpected(std::move(second.error().WithContext("regeneration after a failed review")));
  }
  auto final_verdict = co_await reviewer_(skill, *second, input, ctx);
  if (!final_verdict) co_return std::unexpected(std::move(final_verdict.error()));
  final_verdict->as_object()["first"] = std::move(*verdict);
  ctx.review() = std::move(*final_verdict);
  co_return second;
}

}  // namespace skillrunner::generation
