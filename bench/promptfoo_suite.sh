# Sourced by bench/eval_bench.sh and bench/rate_limit_bench.sh: the
# grade_answer suite as a promptfoo config (the same skill, schema, prompt and
# dataset skillrunner runs), so that both benchmarks compare like with like.

# pf_write_config DESCRIPTION BASE_URL API_KEY RUBRIC(0|1) CASES_JSONL MAX_CASES FILE
# RUBRIC 1: an is-json assertion and one llm-rubric grade by the same server;
# 0: is-json only. MAX_CASES 0: every case.
pf_write_config() {
  local description=$1 base=$2 key=$3 rubric=$4 cases=$5 max=$6 file=$7
  {
    cat <<EOF
description: $description
providers:
  - id: openai:chat:bench-model
    config:
      apiBaseUrl: '$base/v1'
      apiKey: $key
      temperature: 0.2
      max_tokens: 512
      response_format:
        type: json_schema
        json_schema:
          name: grade_answer
          strict: true
          schema: &schema
            type: object
            required: [criteria_results, issues, suggested_fixes, pass]
            additionalProperties: false
            properties:
              criteria_results:
                type: array
                items:
                  type: object
                  required: [criterion_id, reasoning, verdict, confidence]
                  additionalProperties: false
                  properties:
                    criterion_id: { enum: [correct, clear] }
                    reasoning: { type: string }
                    verdict: { enum: [pass, fail, indeterminate] }
                    confidence: { type: number }
              issues: { type: array, items: { type: string } }
              suggested_fixes: { type: array, items: { type: string } }
              pass: { type: boolean }
prompts:
  - file://prompt.json
defaultTest:
EOF
    if [ "$rubric" = 1 ]; then
      cat <<EOF
  options:
    provider:
      id: openai:chat:bench-model
      config: { apiBaseUrl: '$base/v1', apiKey: $key, temperature: 0 }
  assert:
    - type: is-json
      value: *schema
    - type: llm-rubric
      value: "correct (required): the grade matches whether the answer is right. clear: the reasoning is one or two plain sentences."
EOF
    else
      cat <<'EOF'
  assert:
    - type: is-json
      value: *schema
EOF
    fi
    echo "tests:"
    if [ "$max" -gt 0 ]; then head -n "$max" "$cases"; else cat "$cases"; fi |
      jq -r '"  - vars: { question: \(.input.question | @json), answer: \(.input.answer | @json) }\n    metadata: { id: \(.id | @json) }"'
  } >"$file"
}
