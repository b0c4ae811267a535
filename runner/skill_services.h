#pragma once

// The services behind each template_type, adapted to SkillService, and the
// review gate (design.md §5.3) composed over generation and review.

#include <memory>

#include "runner/skill_service.h"
#include "services/generation/llm_generation_service.h"
#include "services/handler/builtin_handlers.h"
#include "services/review/reviewer.h"

namespace skillrunner {

class SkillRunner;

// Handler skills: the HandlerService on the skill's HandlerSpec.
class HandlerSkills : public SkillService {
 public:
  explicit HandlerSkills(std::shared_ptr<handler::HandlerService> handlers) : handlers_(std::move(handlers)) {}
  boost::asio::awaitable<Result<Produced>> Run(const Skill& skill, const boost::json::value& input,
                                               InvocationContext& ctx) override;
  bool ValidatesOutput() const override { return true; }

 private:
  std::shared_ptr<handler::HandlerService> handlers_;
};

// LLM_JSON_GENERATION skills, with their review gate: the output is reviewed
// (in a forked context, so the generation's attempt is recorded first, with
// its final kind); a failed review with retry_once regenerates once with the
// review's issues and fixes (ReviewFeedback): after the rejected answer under
// retry.strategy continuation, appended to the user prompt under fresh
// (generation::Regeneration), and reviews again. The final verdict (holding the first in `first` after a
// regeneration) goes to ctx.review(); a still-failing final review is a
// success with review.pass false. Judge errors fail the invocation
// (JUDGE_ERROR), and so does a failed regeneration.
class GenerationSkills : public SkillService {
 public:
  GenerationSkills(std::shared_ptr<generation::LlmGenerationService> generation,
                   std::shared_ptr<review::Reviewer> reviewer)
      : generation_(std::move(generation)), reviewer_(std::move(reviewer)) {}
  boost::asio::awaitable<Result<Produced>> Run(const Skill& skill, const boost::json::value& input,
                                               InvocationContext& ctx) override;
  bool ValidatesOutput() const override { return true; }

 private:
  // A skill with a review gate: generate, review, maybe regenerate. Run is
  // no coroutine of its own (an ungated skill's invocation in flight holds
  // no frame for the gate); this one runs only for gated skills.
  boost::asio::awaitable<Result<Produced>> GenerateAndReview(const Skill& skill, const boost::json::value& input,
                                                             InvocationContext& ctx);
  // Reviews `produced` and records its attempt (kind ok, or review when a
  // regeneration follows) before the judge's; the verdict, or the judge's error.
  boost::asio::awaitable<Result<boost::json::value>> ReviewAndRecord(const Skill& skill, Produced& produced,
                                                                     const boost::json::value& input,
                                                                     bool regenerate_on_fail, InvocationContext& ctx);

  std::shared_ptr<generation::LlmGenerationService> generation_;
  std::shared_ptr<review::Reviewer> reviewer_;
};

// LLM_REVIEW skills: input {subject, context?}; output the verdict of design.md §4.
class ReviewSkills : public SkillService {
 public:
  explicit ReviewSkills(std::shared_ptr<review::Reviewer> reviewer) : reviewer_(std::move(reviewer)) {}
  boost::asio::awaitable<Result<Produced>> Run(const Skill& skill, const boost::json::value& input,
                                               InvocationContext& ctx) override;

 private:
  std::shared_ptr<review::Reviewer> reviewer_;
};

// The critique of a regeneration after a failed review: "A reviewer rejected
// this answer:\n- <issue>\n..." (`answer_shown`: the turn follows the rejected
// answer; else "an earlier answer", appended to the user prompt) then, when
// there are any, "Suggested fixes:\n- <fix>\n...", and "Answer again with
// these fixed."
std::string ReviewFeedback(const boost::json::value& verdict, bool answer_shown);

// What the real services share, owned by the caller and outliving the runner.
struct ServiceDeps {
  generation::ProviderLookup providers;
  handler::ProcessRunner& process_runner;
  generation::ModelDowngrades& downgrades;
  generation::SessionMemory& sessions;
  providers::RetryingProviderOptions retry_options = {};
  // What runs exec validators: a runner that waits for a process place (design.md §12.0; the
  // handlers' places are taken by SkillRunner before they start). Null: process_runner.
  handler::ProcessRunner* rule_runner = nullptr;
};

// Registers the real services for every template_type, and the judge that
// SkillRunner::Judge uses.
void InstallServices(SkillRunner& runner, const ServiceDeps& deps);

}  // namespace skillrunner
