#pragma once

// LLM_REVIEW skills and the review gate of generation skills (DESIGN §4,
// §5.3): k judge generations through StructuredGenerator, aggregated in code.
// Judges fail closed: an unusable judge answer is JUDGE_ERROR, never a pass
// and never a fail.

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <memory>
#include <string>

#include "runner/skill_registry.h"
#include "runner/skill_service.h"
#include "services/generation/llm_generation_service.h"

namespace skillrunner::review {

// The runner's current registry (rubrics and the config). Holding the pointer
// keeps the rubric alive while a review runs, even across a registry swap.
using RegistryLookup = std::function<std::shared_ptr<const SkillRegistry>()>;

// Who judges, and how.
struct JudgeSettings {
  std::string review_id;  // the review skill's id, or "<skill>.review" for a gate
  std::string rubric;     // rubric id
  std::string model;
  std::string provider;
  std::string provider_kind;
  std::string output_mode = "none";  // native | json_object | none
  double temperature = 0;
  int max_output_tokens = 1024;
  int samples = 1;
  RetryPolicy retry;
  bool retry_truncated = false;
  std::uint64_t seed = 0;
  boost::json::value faults;  // simulated provider fault script, or null
};

// An LLM_REVIEW skill's judge: its model and settings; temperature 0 unless
// the descriptor sets `temperature`; `samples` from the descriptor (default 1).
JudgeSettings JudgeForReviewSkill(const Skill& skill, const InvocationOptions& options);

// What every judge of `skill` shares when it runs on `model`: the model's
// provider and structured-output mode (the skill's own when `model` is the
// skill's), temperature 0, at least 1024 output tokens, the skill's retry
// policy. CONFIG_INVALID "the judge model \"<m>\" is not in the models table
// and there is no default_provider" when the config cannot route `model`.
Result<JudgeSettings> JudgeOnModel(const Skill& skill, const std::string& model, const Config& config);

// A generation skill's `review:` gate: the gate's model (default the skill's
// own) resolved through `config`, temperature 0. CONFIG_INVALID when the
// model has no provider.
Result<JudgeSettings> JudgeForGate(const Skill& skill, const Config& config,
                                   const InvocationOptions& options);

class Reviewer {
 public:
  Reviewer(RegistryLookup registry, generation::ProviderLookup providers, providers::Sleeper& sleeper,
           generation::ModelDowngrades& downgrades, providers::RetryingProviderOptions options = {});

  // Runs judge.samples judge generations on `subject` (and `context`, when not
  // null) and aggregates them (aggregate.h). Every attempt is recorded in ctx.
  // Errors: CONFIG_INVALID (unknown rubric or provider) and JUDGE_ERROR
  // "the judge of rubric \"<r>\" (model \"<m>\") gave no usable verdict, so the
  // review neither passed nor failed: <CAUSE_CODE>: <cause message>", with the
  // cause's field errors and details (plus details.cause = the cause's code).
  // CONFIG_INVALID and CANCELLED from the judge's provider keep their code,
  // with "judge of rubric \"<r>\": " before the message.
  boost::asio::awaitable<Result<boost::json::value>> Review(const JudgeSettings& judge,
                                                            const boost::json::value& subject,
                                                            const boost::json::value* context,
                                                            InvocationContext& ctx);

  // The gate: reviews a generation skill's output (subject) against its input
  // (context) with the skill's `review:` settings.
  boost::asio::awaitable<Result<boost::json::value>> ReviewOutput(const Skill& skill,
                                                                  const boost::json::value& output,
                                                                  const boost::json::value& input,
                                                                  InvocationContext& ctx);

  // A hook for LlmGenerationService::SetReviewer. The Reviewer must outlive it.
  generation::OutputReviewer GateHook();

 private:
  RegistryLookup registry_;
  generation::ProviderLookup providers_;
  providers::Sleeper& sleeper_;
  generation::ModelDowngrades& downgrades_;
  providers::RetryingProviderOptions options_;
};

// LLM_REVIEW: input {subject, context?}; output the verdict of DESIGN §4.
class LlmReviewService : public SkillService {
 public:
  explicit LlmReviewService(std::shared_ptr<Reviewer> reviewer) : reviewer_(std::move(reviewer)) {}

  boost::asio::awaitable<Result<boost::json::value>> Run(const Skill& skill,
                                                         const boost::json::value& input,
                                                         InvocationContext& ctx) override;

 private:
  std::shared_ptr<Reviewer> reviewer_;
};

}  // namespace skillrunner::review
