#include "services/review/llm_review_service.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "services/review/aggregate.h"
#include "services/review/judge_prompt.h"
#include "services/review/verdict_schema.h"

namespace skillrunner::review {
namespace json = boost::json;

namespace {

Error JudgeError(const JudgeSettings& judge, Error cause) {
  Error error{ErrorCode::kJudgeError,
              "the judge of rubric \"" + judge.rubric + "\" (model \"" + judge.model +
                  "\") gave no usable verdict, so the review neither passed nor failed: " +
                  std::string(ErrorCodeName(cause.code)) + ": " + cause.message,
              std::move(cause.errors), std::move(cause.details)};
  error.details["cause"] = ErrorCodeName(cause.code);
  return error;
}

// The wire copy of the verdict schema for a native (strict) judge; null when
// the judge does not use strict mode (or the provider cannot take it).
const json::value* StrictVerdictSchema(const JudgeSettings& judge, const RubricJudge& prepared,
                                       std::string& mode) {
  if (mode != "native" || judge.provider_kind == "simulated") return nullptr;
  const json::value& wire =
      judge.provider_kind == "anthropic" ? prepared.anthropic_wire : prepared.openai_wire;
  if (wire.is_null()) {
    spdlog::warn("the verdict schema of \"{}\" cannot go to {} strict mode; the judge uses the validation loop",
                 judge.review_id, judge.provider_kind);
    mode = "none";
    return nullptr;
  }
  return &wire;
}

}  // namespace

JudgeSettings JudgeForReviewSkill(const Skill& skill, const InvocationOptions& options) {
  JudgeSettings judge;
  judge.review_id = skill.id;
  judge.rubric = skill.rubric;
  judge.model = skill.model;
  judge.provider = skill.provider;
  judge.provider_kind = skill.provider_kind;
  judge.output_mode = skill.output_mode;
  const json::object* descriptor = skill.descriptor.if_object();
  judge.temperature = descriptor && descriptor->contains("temperature") ? skill.temperature : 0.0;
  if (const json::value* samples = descriptor ? descriptor->if_contains("samples") : nullptr;
      samples && samples->is_int64()) {
    judge.samples = static_cast<int>(std::max<std::int64_t>(1, samples->get_int64()));
  }
  judge.max_output_tokens = skill.max_output_tokens;
  judge.retry = skill.retry;
  judge.retry_truncated = skill.retry_truncated;
  judge.seed = options.seed.value_or(skill.simulation_seed.value_or(0));
  judge.faults = skill.simulation_faults;
  return judge;
}

Result<JudgeSettings> JudgeOnModel(const Skill& skill, const std::string& model, const Config& config) {
  JudgeSettings judge;
  judge.model = model;
  if (model == skill.model) {
    judge.provider = skill.provider;
    judge.provider_kind = skill.provider_kind;
    judge.output_mode = skill.output_mode;
  } else {
    auto provider = config.ProviderFor(model);
    if (!provider) {
      return Fail(ErrorCode::kConfigInvalid,
                  "the judge model \"" + model + "\" is not in the models table and there is no default_provider");
    }
    judge.provider = *provider;
    judge.output_mode = config.StructuredOutputFor(model);
    if (auto it = config.providers.find(judge.provider); it != config.providers.end()) {
      judge.provider_kind = it->second.kind;
    }
  }
  judge.temperature = 0;
  judge.max_output_tokens = std::max(1024, skill.max_output_tokens);
  judge.retry = skill.retry;
  judge.retry_truncated = skill.retry_truncated;
  return judge;
}

Result<JudgeSettings> JudgeForGate(const Skill& skill, const Config& config, const InvocationOptions& options) {
  const ReviewGate& gate = *skill.review;
  auto judge = JudgeOnModel(skill, gate.model.value_or(skill.model), config);
  if (!judge) return std::unexpected(std::move(judge.error().WithContext("review gate of skill \"" + skill.id + "\"")));
  judge->review_id = skill.id + ".review";
  judge->rubric = gate.rubric;
  judge->samples = std::max(1, gate.samples);
  judge->seed = options.seed.value_or(skill.simulation_seed.value_or(0));
  judge->faults = skill.simulation_faults;
  return judge;
}

Reviewer::Reviewer(RegistryLookup registry, generation::ProviderLookup providers, providers::Sleeper& sleeper,
                   generation::ModelDowngrades& downgrades, providers::RetryingProviderOptions options)
    : registry_(std::move(registry)),
      providers_(std::move(providers)),
      sleeper_(sleeper),
      downgrades_(downgrades),
      options_(std::move(options)) {}

boost::asio::awaitable<Result<json::value>> Reviewer::Review(const JudgeSettings& judge, const json::value& subject,
                                                             const json::value* context, InvocationContext& ctx) {
  std::shared_ptr<const SkillRegistry> registry = registry_();
  const Rubric* rubric = registry ? registry->FindRubric(judge.rubric) : nullptr;
  if (rubric == nullptr) {
    co_return Fail(ErrorCode::kConfigInvalid,
                   "rubric \"" + judge.rubric + "\" of \"" + judge.review_id + "\" is not loaded");
  }
  providers::Provider* provider = providers_(judge.provider);
  if (provider == nullptr) {
    co_return Fail(ErrorCode::kConfigInvalid, "\"" + judge.review_id + "\" runs on provider \"" + judge.provider +
                                                  "\", which this process has not configured");
  }
  const RubricJudge& prepared = *rubric->judge;
  std::string mode = judge.output_mode;
  const json::value* wire = StrictVerdictSchema(judge, prepared, mode);

  generation::GenerationSpec spec;
  spec.skill_id = judge.review_id;
  spec.model = judge.model;
  spec.mode = mode;
  spec.schema_name = generation::ResponseFormatName(judge.review_id + "_verdict");
  spec.schema = &prepared.verdict_schema;
  spec.schema_text = &prepared.verdict_schema_text;
  spec.compiled_schema = prepared.compiled.get();
  spec.strict_wire_schema = wire;
  spec.system = prepared.system_prompt;
  spec.user = JudgeUserPrompt(subject, context);
  spec.temperature = judge.temperature;
  spec.max_output_tokens = judge.max_output_tokens;
  spec.retry = judge.retry;
  spec.retry_truncated = judge.retry_truncated;
  spec.extra_validator = [rubric](const json::value& answer) { return CheckEveryCriterionOnce(*rubric, answer); };
  spec.simulation.skill_id = judge.review_id;
  spec.simulation.output_schema = prepared.verdict_schema;
  for (const auto& criterion : rubric->criteria) spec.simulation.criteria.push_back(criterion.id);
  spec.simulation.faults = judge.faults;

  // A gate's judge must not change how the generation reports its mode.
  const std::string outer_mode = ctx.metrics().mode;
  generation::StructuredGenerator generator(*provider, sleeper_, downgrades_, options_);
  std::vector<json::value> answers;
  for (int i = 0; i < judge.samples; ++i) {
    spec.simulation.seed = judge.seed + static_cast<std::uint64_t>(i);
    auto answer = co_await generator.Generate(spec, ctx);
    if (!outer_mode.empty()) ctx.metrics().mode = outer_mode;
    if (!answer) {
      // A setup problem (no API key, unknown provider) or a cancelled call is
      // not the judge's doing: it keeps its own code (still neither pass nor fail).
      if (answer.error().code == ErrorCode::kConfigInvalid || answer.error().code == ErrorCode::kCancelled) {
        co_return std::unexpected(std::move(answer.error().WithContext("judge of rubric \"" + judge.rubric + "\"")));
      }
      Error error = JudgeError(judge, std::move(answer.error()));
      if (judge.samples > 1) {
        error.message += " (sample " + std::to_string(i + 1) + " of " + std::to_string(judge.samples) + ")";
      }
      co_return std::unexpected(std::move(error));
    }
    answers.push_back(std::move(*answer));
  }
  co_return Aggregate(*rubric, answers);
}

boost::asio::awaitable<Result<json::value>> Reviewer::ReviewOutput(const Skill& skill, const json::value& output,
                                                                   const json::value& input, InvocationContext& ctx) {
  std::shared_ptr<const SkillRegistry> registry = registry_();
  if (!registry || !skill.review) co_return Fail(ErrorCode::kConfigInvalid, "skill \"" + skill.id + "\" has no review gate");
  auto judge = JudgeForGate(skill, registry->config(), ctx.options());
  if (!judge) co_return std::unexpected(std::move(judge.error()));
  co_return co_await Review(*judge, output, &input, ctx);
}

generation::OutputReviewer Reviewer::GateHook() {
  return [this](const Skill& skill, const json::value& output, const json::value& input, InvocationContext& ctx) {
    return ReviewOutput(skill, output, input, ctx);
  };
}

boost::asio::awaitable<Result<json::value>> LlmReviewService::Run(const Skill& skill, const json::value& input,
                                                                  InvocationContext& ctx) {
  const JudgeSettings judge = JudgeForReviewSkill(skill, ctx.options());
  const json::object* in = input.if_object();
  const json::value* subject = in ? in->if_contains("subject") : nullptr;
  if (subject == nullptr) {
    co_return std::unexpected(Error{ErrorCode::kInputInvalid, "a review needs a \"subject\"",
                                    {{"", "missing required property \"subject\""}}, {}});
  }
  const json::value* context = in->if_contains("context");
  co_return co_await reviewer_->Review(judge, *subject, context, ctx);
}

}  // namespace skillrunner::review
