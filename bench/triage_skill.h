#pragma once

// The skill the benchmarks invoke: a ticket triage with a four-property strict
// schema. MODEL is replaced by the model of the benchmark's config.
namespace skillrunner::bench {

inline constexpr const char* kTriageSkill = R"(id: triage
template_type: LLM_JSON_GENERATION
model: MODEL
prompt: { system: "You triage tickets.", user: "Ticket: {{input.text}}" }
input_schema: { type: object, required: [text], properties: { text: { type: string } } }
output_schema:
  type: object
  required: [priority, category, summary, needs_human]
  additionalProperties: false
  properties:
    priority: { type: integer, minimum: 1, maximum: 4 }
    category: { enum: [billing, bug, account, feature_request, other] }
    summary: { type: string, maxLength: 280 }
    needs_human: { type: boolean }
)";

}  // namespace skillrunner::bench
