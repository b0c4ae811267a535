#include "services/generation/llm_generation_service.h"

namespace skillrunner::generation {
namespace json = boost::json;

namespace {

Result<std::string> RenderPart(const GenerationSpec& spec, std::string_view which, const std::string& text,
                               const std::vector<Placeholder>& placeholders, const json::value& input) {
  auto rendered = RenderTemplate(text, placeholders, input);
  if (!rendered) {
    rendered.error().message += " (prompt." + std::string(which) + " of skill \"" + spec.skill_id + "\")";
    return std::unexpected(std::move(rendered.error()));
  }
  return std::move(*rendered);
}

// An awaitable that only hands back `error`.
boost::asio::awaitable<Result<Produced>> Failed(Error error) { co_return std::unexpected(std::move(error)); }

}  // namespace

LlmGenerationService::LlmGenerationService(ProviderLookup providers, ModelDowngrades& downgrades,
                                           SessionMemory& sessions, providers::RetryingProviderOptions options,
                                           std::shared_ptr<RuleRunner> rules)
    : providers_(providers),
      sessions_(sessions),
      rules_(std::move(rules)),
      generator_(std::move(providers), downgrades, std::move(options), rules_.get()) {}

Result<Prompt> RenderPrompt(const GenerationSpec& spec, const json::value& input) {
  const PromptTemplate& t = spec.prompt;
  auto system = RenderPart(spec, "system", t.system, t.system_placeholders, input);
  if (!system) return std::unexpected(std::move(system.error()));
  auto user = RenderPart(spec, "user", t.user, t.user_placeholders, input);
  if (!user) return std::unexpected(std::move(user.error()));
  return Prompt{std::move(*system), std::move(*user), {}, {}, {}};
}

Result<Prompt> LlmGenerationService::Prepare(const GenerationSpec& spec, const json::value& input,
                                             const Regeneration* regeneration) const {
  if (providers_(spec.provider) == nullptr) {
    return std::unexpected(Error{ErrorCode::kConfigInvalid,
                                 "skill \"" + spec.skill_id + "\" runs on provider \"" + spec.provider +
                                     "\", which this process has not configured",
                                 {},
                                 {}});
  }
  auto prompt = RenderPrompt(spec, input);
  if (!prompt) return prompt;
  if (regeneration != nullptr && spec.retry.strategy == RetryStrategy::kFresh) {
    prompt->user += "\n\n" + regeneration->critique;
  } else if (regeneration != nullptr) {
    prompt->rejected_answer = regeneration->rejected_answer;
    prompt->critique = regeneration->critique;
  }
  return prompt;
}

boost::asio::awaitable<Result<Produced>> LlmGenerationService::Generate(const GenerationSpec& spec,
                                                                        const json::value& input,
                                                                        const Regeneration* regeneration,
                                                                        InvocationContext& ctx) {
  auto prompt = Prepare(spec, input, regeneration);
  if (!prompt) return Failed(std::move(prompt.error()));
  if (ctx.options().session) return GenerateInSession(spec, std::move(*prompt), ctx);
  return generator_.Generate(spec, std::move(*prompt), ctx);
}

boost::asio::awaitable<Result<Produced>> LlmGenerationService::GenerateInSession(const GenerationSpec& spec,
                                                                                 Prompt prompt,
                                                                                 InvocationContext& ctx) {
  const std::string& session = *ctx.options().session;
  prompt.avoid = co_await sessions_.Recall(session, spec.skill_id, ctx.clock().Now());
  std::size_t first_attempt = ctx.attempts().size();
  auto result = co_await generator_.Generate(spec, std::move(prompt), ctx);
  for (std::size_t i = first_attempt; i < ctx.attempts().size(); ++i) {
    const Attempt& attempt = ctx.attempts()[i];
    if (attempt.kind == AttemptKind::kValidation || attempt.kind == AttemptKind::kRule) {
      sessions_.Remember(session, spec.skill_id, attempt.errors, ctx.clock().Now());
    }
  }
  co_return result;
}

}  // namespace skillrunner::generation
