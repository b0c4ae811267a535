#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/prompt_template.h"
#include "services/validation/compiled_schema.h"

namespace skillrunner {

enum class TemplateType { kHandler, kLlmJsonGeneration, kLlmReview };

// "LLM_JSON_GENERATION", "LLM_REVIEW", or "handler" for skills without one.
std::string_view TemplateTypeName(TemplateType type);

struct TransientRetryPolicy {
  int max_retries = 3;
  std::chrono::milliseconds initial_delay{2000};
  double multiplier = 2.0;
  std::chrono::milliseconds max_delay{8000};
  std::chrono::milliseconds max_server_delay{60000};
};

struct RetryPolicy {
  int validation_retries = 1;
  double retry_temperature = 0.2;
  TransientRetryPolicy transient;
};

// The prompt texts with their placeholders parsed once at load.
struct PromptTemplate {
  std::string system;
  std::string user;
  std::vector<Placeholder> system_placeholders;
  std::vector<Placeholder> user_placeholders;
};

struct ReviewGate {
  std::string rubric;
  bool retry_once = false;
  std::optional<std::string> model;  // default: the skill's own model
  int samples = 1;
};

// One checked skill descriptor (DESIGN §3). Immutable once loaded.
struct Skill {
  std::string id;
  int version = 1;
  std::string description;
  TemplateType template_type = TemplateType::kHandler;
  std::string model;            // empty for handler skills
  std::string provider;         // resolved from the config's models table
  std::string provider_kind;    // openai | anthropic | simulated
  // How structured output is obtained: "native" (provider strict mode),
  // "json_object" (JSON mode + schema in the prompt) or "none" (validation
  // loop), from `structured_output:` or else the models table.
  std::string output_mode = "none";
  // native mode: the output schema transformed for the provider's strict mode
  // (computed once at load).
  std::optional<boost::json::value> strict_wire_schema;
  // The skill's simulated-provider fault script (`simulation.faults`), or null.
  boost::json::value simulation_faults;
  std::optional<std::uint64_t> simulation_seed;
  // Retry once with max_output_tokens doubled after a truncated answer.
  bool retry_truncated = false;
  double temperature = 0.7;
  int max_output_tokens = 1024;
  std::optional<std::string> structured_output;  // native | json_object | none
  std::chrono::milliseconds timeout{60000};

  // Schemas: the JSON as written (inline or loaded from the path) and compiled.
  boost::json::value input_schema_json;
  boost::json::value output_schema_json;
  std::shared_ptr<const validation::CompiledSchema> input_schema;
  std::shared_ptr<const validation::CompiledSchema> output_schema;
  std::string output_schema_text;  // compact JSON, for prompts

  PromptTemplate prompt;
  RetryPolicy retry;
  std::optional<ReviewGate> review;
  std::string rubric;  // LLM_REVIEW skills

  std::string handler;               // "exec" or a built-in name
  std::vector<std::string> command;  // exec: argv

  std::filesystem::path dir;   // the skill folder
  std::filesystem::path file;  // its skill.yaml
  boost::json::value descriptor;  // the descriptor as loaded, for describe
};

}  // namespace skillrunner
