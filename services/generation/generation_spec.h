#pragma once

// What a structured generation needs, made once at load by the core from a
// skill (or a judge) and never copied per invocation.

#include <boost/json/value.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "services/common/error.h"
#include "services/common/invocation.h"
#include "services/generation/coercion.h"
#include "services/generation/prompt_template.h"
#include "services/generation/rules.h"
#include "services/providers/retrying_provider.h"
#include "services/validation/compiled_schema.h"

namespace skillrunner::generation {

// How a validation retry asks again (design.md §9.2 `retry.strategy`):
// continuation replies to the invalid answer (design.md §5.1); fresh repeats the
// original messages with every error in one more user turn, without the
// invalid answer (no error accumulates in the conversation).
enum class RetryStrategy { kContinuation, kFresh };

// design.md §3 `retry:`.
struct RetryPolicy {
  int validation_retries = 1;
  double retry_temperature = 0.2;
  RetryStrategy strategy = RetryStrategy::kContinuation;
  providers::TransientRetryPolicy transient;
};

// The prompt texts with their placeholders parsed once at load.
struct PromptTemplate {
  std::string system;
  std::string user;
  std::vector<Placeholder> system_placeholders;
  std::vector<Placeholder> user_placeholders;
};

// The schema an answer must match, in every form the loop needs.
struct AnswerSchema {
  boost::json::value original;                                 // as written
  std::string text;                                            // compact JSON, for prompts
  std::shared_ptr<const validation::CompiledSchema> compiled;  // for validation
  // The provider's strict copy (native mode), or null when the provider
  // cannot take it (the generation then runs the validation loop).
  boost::json::value strict_wire;
  // strict_wire holds the root as {"value": ROOT} (strict_schema.h): answers
  // are unwrapped before validation, and errors fed back under /value.
  bool wrapped = false;
  // What native and tool mode send (strict_wire, or original when it is
  // null), made once by ShareWire so that requests point at it; when unset
  // (a schema built by hand), each request gets its own copy.
  std::shared_ptr<const boost::json::value> wire;
};

// Sets schema.wire from its strict_wire and original; call after the last
// change to either.
void ShareWire(AnswerSchema& schema);

// Where a generation runs (design.md §9.3): a model of the models table, its
// provider, how it gives structured output, and the schema with that
// provider's strict copy.
struct ModelRoute {
  std::string model;
  std::string provider;
  OutputMode mode = OutputMode::kNone;
  std::shared_ptr<const AnswerSchema> schema;
  std::optional<Price> price;  // design.md §9.4: the model's price, if the table gives one
};

// One structured generation: a model, a schema the answer must match, and how
// to retry (design.md §5.1). Used by LLM_JSON_GENERATION skills and by judges.
struct GenerationSpec {
  std::string skill_id;   // the skill whose invocation runs it
  int skill_version = 0;  // that skill's version (RequestMetadata::skill_version)
  std::string task_id;    // what it produces (RequestMetadata::task_id)
  std::string model;
  std::string provider;        // a provider name of the config
  std::optional<Price> price;  // the model's (design.md §9.4), for each attempt's cost_usd
  AttemptRole role = AttemptRole::kGeneration;
  OutputMode mode = OutputMode::kNone;
  std::string schema_name;  // response_format name ([a-zA-Z0-9_-], <= 64)
  std::shared_ptr<const AnswerSchema> schema;
  PromptTemplate prompt;  // LLM_JSON_GENERATION skills; judges build their own prompt
  double temperature = 0.7;
  int max_output_tokens = 1024;
  RetryPolicy retry;
  bool retry_truncated = false;
  Coercion coercion = Coercion::kStrict;  // design.md §9.2 `coercion:` (coercion.h)
  std::vector<Rule> rules;                // design.md §9.2 `validators:`, after the schema passed
  // design.md §9.3: tried in order when a model's transient budget is spent, each
  // with a fresh transient budget and the validation budget that is left.
  std::vector<ModelRoute> fallbacks;
  // One more generation, with the last errors, after MAX_RETRIES_EXCEEDED.
  std::optional<ModelRoute> escalation;
  // design.md §11.5: tried in order, with the same request, after REFUSED or CONTENT_FILTERED; the
  // routes' own on_refusal is not followed.
  std::vector<ModelRoute> on_refusal;
  // Rules a schema cannot say (e.g. a judge must rate every criterion once);
  // their failures share the one validation retry.
  std::function<std::vector<FieldError>(const boost::json::value&)> extra_validator;
};

// The rendered conversation start of one generation.
struct Prompt {
  std::string system;
  std::string user;
  std::vector<std::string> avoid;  // earlier mistakes in this session
  // A regeneration after a failed review, continuation style: the rejected
  // answer (JSON text) as the model's turn after the first messages, then the
  // critique as the next user turn. Both empty otherwise.
  std::string rejected_answer;
  std::string critique;
};

}  // namespace skillrunner::generation
