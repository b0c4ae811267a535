#pragma once

#include <boost/asio/awaitable.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "services/common/invocation.h"
#include "services/generation/generation_spec.h"
#include "services/generation/session_memory.h"
#include "services/generation/structured_generator.h"

namespace skillrunner::generation {

// LLM_JSON_GENERATION (design.md §5.1): renders the prompt from the input, adds
// what the session remembers, and runs a StructuredGenerator on the spec's
// provider. Validation errors are remembered for the session. The review
// gate around it is the core's (runner/review_gate.h). Thread-safe.
// A regeneration after a failed review (design.md §5.3). Under the
// spec's `retry.strategy: continuation` the model is shown its rejected
// answer (as its own turn after the first messages) and then the critique
// (the next user turn); under `fresh` the critique alone, appended to the
// user prompt.
struct Regeneration {
  std::string critique;
  std::string rejected_answer;  // JSON text
};

class LlmGenerationService {
 public:
  // `rules` runs exec validators (runner/exec_rules.h).
  LlmGenerationService(ProviderLookup providers, ModelDowngrades& downgrades, SessionMemory& sessions,
                       providers::RetryingProviderOptions options = {}, std::shared_ptr<RuleRunner> rules = nullptr);

  // `regeneration` (null for a first generation): see Regeneration. The
  // prompt is rendered when this is called; without a session it hands back
  // the generator's own awaitable (no frame of its own in flight).
  boost::asio::awaitable<Result<Produced>> Generate(const GenerationSpec& spec, const boost::json::value& input,
                                                    const Regeneration* regeneration, InvocationContext& ctx);

 private:
  // The prompt for `spec` (with `regeneration`'s critique), or why not.
  Result<Prompt> Prepare(const GenerationSpec& spec, const boost::json::value& input,
                         const Regeneration* regeneration) const;
  // With a session: what it remembers goes into the prompt, and the
  // validation errors of this generation are remembered.
  boost::asio::awaitable<Result<Produced>> GenerateInSession(const GenerationSpec& spec, Prompt prompt,
                                                             InvocationContext& ctx);

  ProviderLookup providers_;
  SessionMemory& sessions_;
  std::shared_ptr<RuleRunner> rules_;
  StructuredGenerator generator_;
};

// Renders the prompt of `spec` for `input`; INPUT_INVALID naming the missing
// path and the prompt part.
Result<Prompt> RenderPrompt(const GenerationSpec& spec, const boost::json::value& input);

}  // namespace skillrunner::generation
