#pragma once

// Judges (design.md §4, §5.3): k judge generations through StructuredGenerator,
// aggregated in code. Judges fail closed: an unusable judge answer is
// JUDGE_ERROR, never a pass and never a fail. LLM_REVIEW skills, review gates
// and eval judges all come here through the core.

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <memory>
#include <string>

#include "services/generation/llm_generation_service.h"
#include "services/review/rubric.h"

namespace skillrunner::review {

// Who judges against which rubric, and how; made once at load.
struct JudgeSpec {
  std::shared_ptr<const Rubric> rubric;
  // The judge's generation: model, provider, mode, verdict schema, system
  // prompt, temperature, retry; task_id is the review id (the review skill's
  // id, "<skill>.review" for a gate, "<skill>.eval" for an eval).
  generation::GenerationSpec generation;
  int samples = 1;

  const std::string& review_id() const { return generation.task_id; }
};

// The model a judge runs on, as the core routed it.
struct JudgeRoute {
  std::string model;
  std::string provider;
  std::string provider_kind;  // whose strict rules: openai | anthropic | gemini | simulated (Config::DialectKindOf)
  OutputMode mode = OutputMode::kNone;
  std::optional<Price> price;  // design.md §9.4
};

// A judge of `rubric` on `route`: the verdict schema in the provider's strict
// form when the mode is native (the validation loop when that provider's
// strict mode cannot take it; the schema as written for the simulated
// provider), the rubric's judge prompt, every criterion rated once.
// `base` carries skill_id, task_id, temperature, max_output_tokens and retry.
// Where the judge goes when its model gives up (design.md §9.3): its fallbacks in
// order and its escalation, and where it turns on a refusal (design.md §11.5: on_refusal), each
// with the verdict schema that provider takes.
void SetJudgeRoutes(JudgeSpec& judge, const std::vector<JudgeRoute>& fallbacks,
                    const std::optional<JudgeRoute>& escalation, const std::vector<JudgeRoute>& on_refusal);

JudgeSpec MakeJudgeSpec(std::shared_ptr<const Rubric> rubric, const JudgeRoute& route, generation::GenerationSpec base,
                        int samples);

class Reviewer {
 public:
  Reviewer(generation::ProviderLookup providers, generation::ModelDowngrades& downgrades,
           providers::RetryingProviderOptions options = {});

  // Runs judge.samples judge generations on `subject` (and `context`, when not
  // null) and aggregates them (aggregate.h). Every attempt is recorded in ctx.
  // Errors: CONFIG_INVALID (unknown provider) and JUDGE_ERROR
  // "the judge of rubric \"<r>\" (model \"<m>\") gave no usable verdict, so the
  // review neither passed nor failed: <CAUSE_CODE>: <cause message>", with the
  // cause's field errors and details (plus details.cause = the cause's code).
  // CONFIG_INVALID and CANCELLED from the judge's provider keep their code,
  // with "judge of rubric \"<r>\": " before the message.
  boost::asio::awaitable<Result<boost::json::value>> Review(const JudgeSpec& judge, const boost::json::value& subject,
                                                            const boost::json::value* context, InvocationContext& ctx);

 private:
  generation::ProviderLookup providers_;
  generation::ModelDowngrades& downgrades_;
  providers::RetryingProviderOptions options_;
};

}  // namespace skillrunner::review
