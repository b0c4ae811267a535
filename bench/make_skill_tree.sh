#!/usr/bin/env bash
# Writes a tree of N skills (default 2,000) under DIR for `run`'s start-up
# benchmark: skills/s0..s{N-1} (triage-like LLM_JSON_GENERATION skills on the
# built-in simulated provider; every tenth has a rubric review gate, every
# fiftieth an output schema in its own file) and rubrics/quality.yaml.
#   bench/make_skill_tree.sh DIR [N]
set -euo pipefail
DIR="$1"; N="${2:-2000}"
mkdir -p "$DIR/skills" "$DIR/rubrics"
cat > "$DIR/rubrics/quality.yaml" <<'YAML'
id: quality
description: Is the triage sound?
criteria:
  - id: grounded
    description: The summary only states facts from the ticket.
    required: true
  - id: priority
    description: The priority matches the urgency described.
YAML
OUTPUT='output_schema:
  type: object
  required: [priority, category, summary, needs_human]
  additionalProperties: false
  properties:
    priority: { type: integer, minimum: 1, maximum: 4 }
    category: { enum: [billing, bug, account, feature_request, other] }
    summary: { type: string, maxLength: 280 }
    needs_human: { type: boolean }'
for ((i = 0; i < N; i++)); do
  d="$DIR/skills/s$i"
  mkdir -p "$d"
  out="$OUTPUT"
  if ((i % 50 == 49)); then
    out="output_schema: output.schema.json"
    printf '%s\n' '{"type": "object", "required": ["priority"], "properties": {"priority": {"type": "integer", "minimum": 1, "maximum": 4}}}' > "$d/output.schema.json"
  fi
  gate=""
  ((i % 10 == 9)) && gate=$'review:\n  rubric: quality\n  model: judge-model'
  cat > "$d/skill.yaml" <<YAML
id: s$i
version: 1
description: Classify a support ticket by priority and category (variant $i).
template_type: LLM_JSON_GENERATION
model: model-$((i % 7))
temperature: 0.5
max_output_tokens: 400
input_schema:
  type: object
  required: [subject, body]
  additionalProperties: false
  properties:
    subject: { type: string, minLength: 1 }
    body: { type: string }
    customer_tier: { enum: [free, pro, enterprise] }
$out
prompt:
  system: You triage support tickets. Priority 1 is the most urgent.
  user: |
    Subject: {{input.subject}}
    Customer tier: {{input.customer_tier}}

    {{input.body}}
retry:
  validation_retries: 2
$gate
YAML
done
