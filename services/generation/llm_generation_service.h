#pragma once

#include <functional>
#include <string_view>

#include "runner/skill_service.h"
#include "services/generation/session_memory.h"
#include "services/generation/structured_generator.h"

namespace skillrunner::generation {

// Finds the Provider a skill runs on by provider name (nullptr: unknown).
using ProviderLookup = std::function<providers::Provider*(std::string_view)>;

// Runs a generation skill's `review:` rubric on one of its outputs (subject)
// with its input as context: the verdict of DESIGN §4, or JUDGE_ERROR. The
// review module provides it (review::Reviewer::GateHook).
using OutputReviewer = std::function<boost::asio::awaitable<Result<boost::json::value>>(
    const Skill& skill, const boost::json::value& output, const boost::json::value& input,
    InvocationContext& ctx)>;

// LLM_JSON_GENERATION (DESIGN §5.1): renders the prompt from the input, then
// runs a StructuredGenerator on the skill's provider with the skill's schema.
// With a reviewer set, a skill with `review:` runs the gate (DESIGN §5.3):
// the output is reviewed; a failed review with retry_once regenerates once
// with the review's issues and fixes appended to the user prompt
// (ReviewFeedback) and reviews again. The final verdict (holding the first in
// `first` after a regeneration) goes to ctx.review(); a still-failing final
// review is a success with review.pass false. Judge errors fail the
// invocation (JUDGE_ERROR), and so does a failed regeneration.
class LlmGenerationService : public SkillService {
 public:
  LlmGenerationService(ProviderLookup providers, providers::Sleeper& sleeper,
                       ModelDowngrades& downgrades, SessionMemory& sessions,
                       providers::RetryingProviderOptions options = {});

  boost::asio::awaitable<Result<boost::json::value>> Run(const Skill& skill,
                                                         const boost::json::value& input,
                                                         InvocationContext& ctx) override;
  bool ValidatesOutput() const override { return true; }

  // Call before the first Run.
  void SetReviewer(OutputReviewer reviewer) { reviewer_ = std::move(reviewer); }

 private:
  boost::asio::awaitable<Result<boost::json::value>> Generate(const Skill& skill,
                                                              const boost::json::value& input,
                                                              const std::string& feedback,
                                                              InvocationContext& ctx);

  ProviderLookup providers_;
  providers::Sleeper& sleeper_;
  ModelDowngrades& downgrades_;
  SessionMemory& sessions_;
  providers::RetryingProviderOptions options_;
  OutputReviewer reviewer_;
};

// The instruction appended to the user prompt of a regeneration after a
// failed review: "A reviewer rejected an earlier answer:\n- <issue>\n..." then,
// when there are any, "Suggested fixes:\n- <fix>\n...", and "Answer again with
// these fixed."
std::string ReviewFeedback(const boost::json::value& verdict);

// The spec for a generation skill's own output (prompts rendered by the caller).
GenerationSpec SpecForSkill(const Skill& skill, std::string system, std::string user,
                            const InvocationOptions& options);

// Renders a prompt text of the skill; INPUT_INVALID naming the missing path.
Result<std::string> RenderPrompt(const Skill& skill, std::string_view which,
                                 const std::string& text, const std::vector<Placeholder>& placeholders,
                                 const boost::json::value& input);

}  // namespace skillrunner::generation
