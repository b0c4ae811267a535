#include "services/review/reviewer.h"

#include "services/review/aggregate.h"
#include "services/review/judge_prompt.h"
#include "services/review/verdict_schema.h"

namespace skillrunner::review {
namespace json = boost::json;

namespace {

Error JudgeError(const JudgeSpec& judge, Error cause) {
  Error error{ErrorCode::kJudgeError,
              "the judge of rubric \"" + judge.rubric->id + "\" (model \"" + judge.generation.model +
                  "\") gave no usable verdict, so the review neither passed nor failed: " +
                  std::string(ErrorCodeName(cause.code)) + ": " + cause.message,
              std::move(cause.errors), std::move(cause.details)};
  error.details["cause"] = ErrorCodeName(cause.code);
  return error;
}

// The verdict schema for a judge on `route`.
std::shared_ptr<const generation::AnswerSchema> SchemaFor(const RubricJudge& prepared, const JudgeRoute& route,
                                                          OutputMode& mode) {
  const bool strict_wire = mode == OutputMode::kNative || mode == OutputMode::kTool;
  if (!strict_wire || route.provider_kind == "simulated") return prepared.plain;
  const auto& strict = route.provider_kind == "anthropic" ? prepared.anthropic
                       : route.provider_kind == "gemini"  ? prepared.gemini
                                                          : prepared.openai;
  if (strict->strict_wire.is_null()) {
    mode = OutputMode::kNone;  // that strict mode cannot take it
    return prepared.plain;
  }
  return strict;
}

}  // namespace

JudgeSpec MakeJudgeSpec(std::shared_ptr<const Rubric> rubric, const JudgeRoute& route, generation::GenerationSpec base,
                        int samples) {
  JudgeSpec judge;
  judge.generation = std::move(base);
  generation::GenerationSpec& g = judge.generation;
  g.model = route.model;
  g.provider = route.provider;
  g.price = route.price;
  g.role = AttemptRole::kJudge;
  g.mode = route.mode;
  g.schema = SchemaFor(*rubric->judge, route, g.mode);
  g.schema_name = generation::ResponseFormatName(g.task_id + "_verdict");
  g.prompt = {};
  g.extra_validator = [rubric](const json::value& answer) { return CheckEveryCriterionOnce(*rubric, answer); };
  judge.rubric = std::move(rubric);
  judge.samples = std::max(1, samples);
  return judge;
}

void SetJudgeRoutes(JudgeSpec& judge, const std::vector<JudgeRoute>& fallbacks,
                    const std::optional<JudgeRoute>& escalation, const std::vector<JudgeRoute>& on_refusal) {
  auto to_route = [&](const JudgeRoute& route) {
    OutputMode mode = route.mode;
    auto schema = SchemaFor(*judge.rubric->judge, route, mode);
    return generation::ModelRoute{route.model, route.provider, mode, std::move(schema), route.price};
  };
  judge.generation.fallbacks.clear();
  for (const JudgeRoute& route : fallbacks) judge.generation.fallbacks.push_back(to_route(route));
  judge.generation.escalation.reset();
  if (escalation) judge.generation.escalation = to_route(*escalation);
  judge.generation.on_refusal.clear();
  for (const JudgeRoute& route : on_refusal) judge.generation.on_refusal.push_back(to_route(route));
}

Reviewer::Reviewer(generation::ProviderLookup providers, generation::ModelDowngrades& downgrades,
                   providers::RetryingProviderOptions options)
    : providers_(std::move(providers)), downgrades_(downgrades), options_(std::move(options)) {}

boost::asio::awaitable<Result<json::value>> Reviewer::Review(const JudgeSpec& judge, const json::value& subject,
                                                             const json::value* context, InvocationContext& ctx) {
  providers::Provider* provider = providers_(judge.generation.provider);
  if (provider == nullptr) {
    co_return Fail(ErrorCode::kConfigInvalid, "\"" + judge.review_id() + "\" runs on provider \"" +
                                                  judge.generation.provider +
                                                  "\", which this process has not configured");
  }
  const generation::Prompt prompt{judge.rubric->judge->system_prompt, JudgeUserPrompt(subject, context), {}, {}, {}};
  // A gate's judge must not change how the generation reports its mode.
  const RunMode outer_mode = ctx.metrics().mode;
  generation::StructuredGenerator generator(providers_, downgrades_, options_);
  std::vector<json::value> answers;
  for (int i = 0; i < judge.samples; ++i) {
    auto answer = co_await generator.Generate(judge.generation, prompt, ctx, i);
    if (outer_mode != RunMode::kUnset) ctx.metrics().mode = outer_mode;
    if (!answer) {
      // A setup problem (no API key, unknown provider) or a cancelled call is
      // not the judge's doing: it keeps its own code (still neither pass nor fail).
      if (answer.error().code == ErrorCode::kConfigInvalid || answer.error().code == ErrorCode::kCancelled) {
        co_return std::unexpected(
            std::move(answer.error().WithContext("judge of rubric \"" + judge.rubric->id + "\"")));
      }
      Error error = JudgeError(judge, std::move(answer.error()));
      if (judge.samples > 1) {
        error.message += " (sample " + std::to_string(i + 1) + " of " + std::to_string(judge.samples) + ")";
      }
      co_return std::unexpected(std::move(error));
    }
    answer->attempt->pass = Aggregate(*judge.rubric, {answer->value}).at("pass").as_bool();
    ctx.AddAttempt(std::move(*answer->attempt));
    answers.push_back(std::move(answer->value));
  }
  co_return Aggregate(*judge.rubric, answers);
}

}  // namespace skillrunner::review
