#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/rollout/rollout_spec.h"
#include "runner/tree/yaml_json.h"
#include "services/common/invocation.h"
#include "services/generation/generation_spec.h"
#include "services/handler/handler.h"
#include "services/review/reviewer.h"
#include "services/validation/compiled_schema.h"

namespace skillrunner {

enum class TemplateType { kHandler, kLlmJsonGeneration, kLlmReview };

// "LLM_JSON_GENERATION", "LLM_REVIEW", or "handler" for skills without one.
std::string_view TemplateTypeName(TemplateType type);

using generation::RetryPolicy;
using providers::TransientRetryPolicy;

struct ReviewGate {
  // The LLM_REVIEW skill that judges (its rubric, model, samples and
  // temperature), or empty for a gate given by rubric (and model, samples).
  std::string skill;
  std::string rubric;  // with `skill`: that skill's rubric, filled in at load
  bool retry_once = false;
  std::optional<std::string> model;  // default: the skill's own model
  int samples = 1;
};

// One checked skill descriptor (design.md §3). Immutable once loaded. The
// services' own settings (generation, judge, handler) are made from it once,
// at load; nothing re-reads the descriptor at invoke time.
struct Skill {
  std::string id;
  int version = 1;
  SourcePosition version_at;  // where `version:` is written (the file's start when it is not)
  std::string description;
  TemplateType template_type = TemplateType::kHandler;
  std::string model;          // empty for handler skills
  std::string provider;       // resolved from the config's models table
  std::string provider_kind;  // openai | anthropic | simulated
  // How structured output is obtained, from `structured_output:` or else the
  // models table.
  OutputMode output_mode = OutputMode::kNone;
  bool retry_truncated = false;
  generation::Coercion coercion = generation::Coercion::kStrict;
  std::vector<generation::Rule> rules;  // validators:
  double temperature = 0.7;
  int max_output_tokens = 1024;
  std::optional<double> max_cost_usd;           // design.md §9.4: the whole invocation's budget in USD
  std::optional<OutputMode> structured_output;  // as the descriptor says
  std::chrono::milliseconds timeout{60000};

  // Schemas: the JSON as written (inline or loaded from the path) and compiled.
  boost::json::value input_schema_json;
  boost::json::value output_schema_json;
  std::shared_ptr<const validation::CompiledSchema> input_schema;
  std::shared_ptr<const validation::CompiledSchema> output_schema;

  generation::PromptTemplate prompt;
  RetryPolicy retry;
  std::optional<ReviewGate> review;
  std::string rubric;  // LLM_REVIEW skills

  std::string handler;               // "exec" or a built-in name
  std::vector<std::string> command;  // exec: argv
  // exec: a pool of this many places of its own (`max_concurrent:`); unset: the shared places.
  std::optional<int> max_concurrent;

  std::filesystem::path dir;      // the skill folder
  std::filesystem::path file;     // its skill.yaml
  boost::json::value descriptor;  // the descriptor as loaded, for describe

  // What the services run, made at load (null where the kind has none).
  std::shared_ptr<const generation::GenerationSpec> generation;  // LLM_JSON_GENERATION
  std::shared_ptr<const review::JudgeSpec> judge;                // LLM_REVIEW: its judge; generation: the review gate's
  std::shared_ptr<const handler::HandlerSpec> handler_spec;      // handler skills

  // design.md §11.2: a stable version's canary (its `rollout:` block) and the
  // candidate it names, loaded and linked with it; a candidate has neither.
  std::optional<rollout::RolloutSpec> rollout;
  std::shared_ptr<const Skill> candidate;
  // The judge of the rollout's online review, the same for both arms (its
  // rubric or skill, else the review gate's judge).
  std::shared_ptr<const review::JudgeSpec> online_judge;
};

}  // namespace skillrunner
