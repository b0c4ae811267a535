#include "services/generation/llm_generation_service.h"

namespace skillrunner::generation {
namespace json = boost::json;

namespace {

Result<std::string> RenderPart(const GenerationSpec& spec, std::string_view which, const std::string& text,
                               const std::vector<Placeholder>& placeholders, const json::value& input) {
  auto rendered = RenderTemplate(text, placeholders, input);
  if (!rendered) {
    return std::unexpected(Error{ErrorCode::kInputInvalid,
                                 rendered.error() + " (prompt." + std::string(which) + " of skill \"" +
                                     spec.skill_id + "\")",
                                 {}, {}});
  }
  return std::move(*rendered);
}

}  // namespace

LlmGenerationService::LlmGenerationService(ProviderLookup providers, ModelDowngrades& downgrades,
                                           SessionMemory& sessions, providers::RetryingProviderOptions options,
                                           std::shared_ptr<RuleRunner> rules)
    : providers_(std::move(providers)),
      downgrades_(downgrades),
      sessions_(sessions),
      options_(std::move(options)),
      rules_(std::move(rules)) {}

Result<Prompt> RenderPrompt(const GenerationSpec& spec, const json::value& input) {
  const PromptTemplate& t = spec.prompt;
  auto system = RenderPart(spec, "system", t.system, t.system_placeholders, input);
  if (!system) return std::unexpected(std::move(system.error()));
  auto user = RenderPart(spec, "user", t.user, t.user_placeholders, input);
  if (!user) return std::unexpected(std::move(user.error()));
  return Prompt{std::move(*system), std::move(*user), {}, {}, {}};
}

boost::asio::awaitable<Result<Produced>> LlmGenerationService::Generate(const GenerationSpec& spec,
                                                                        const json::value& input,
                                                                        const Regeneration* regeneration,
                                                                        InvocationContext& ctx) {
  providers::Provider* provider = providers_(spec.provider);
  if (provider == nullptr) {
    co_return Fail(ErrorCode::kConfigInvalid, "skill \"" + spec.skill_id + "\" runs on provider \"" +
                                                  spec.provider + "\", which this process has not configured");
  }
  auto prompt = RenderPrompt(spec, input);
  if (!prompt) co_return std::unexpected(std::move(prompt.error()));
  if (regeneration != nullptr && spec.retry.strategy == RetryStrategy::kFresh) {
    prompt->user += "\n\n" + regeneration->critique;
  } else if (regeneration != nullptr) {
    prompt->rejected_answer = regeneration->rejected_answer;
    prompt->critique = regeneration->critique;
  }
  const auto& session = ctx.options().session;
  if (session) prompt->avoid = co_await sessions_.Recall(*session, spec.skill_id, ctx.clock().Now());

  StructuredGenerator generator(providers_, downgrades_, options_, rules_.get());
  std::size_t first_attempt = ctx.attempts().size();
  auto result = co_await generator.Generate(spec, *prompt, ctx);
  if (session) {
    for (std::size_t i = first_attempt; i < ctx.attempts().size(); ++i) {
      const Attempt& attempt = ctx.attempts()[i];
      if (attempt.kind == AttemptKind::kValidation || attempt.kind == AttemptKind::kRule) {
        sessions_.Remember(*session, spec.skill_id, attempt.errors, ctx.clock().Now());
      }
    }
  }
  co_return result;
}

}  // namespace skillrunner::generation
