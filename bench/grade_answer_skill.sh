# Sourced by bench/eval_bench.sh and bench/caching_bench.sh: the output schema
# of the benchmarks' grading skill (its answer has the shape of a rubric
# verdict for criteria "correct" and "clear", so one canned answer of the fake
# server serves generation and judging alike), as skill.yaml lines.
grade_answer_output_schema() {
  cat <<'EOF_SCHEMA'
output_schema:
  type: object
  required: [criteria_results, issues, suggested_fixes, pass]
  additionalProperties: false
  properties:
    criteria_results:
      type: array
      minItems: 1
      items:
        type: object
        required: [criterion_id, reasoning, verdict, confidence]
        additionalProperties: false
        properties:
          criterion_id: { enum: [correct, clear] }
          reasoning: { type: string }
          verdict: { enum: [pass, fail, indeterminate] }
          confidence: { type: number, minimum: 0, maximum: 100 }
    issues: { type: array, items: { type: string } }
    suggested_fixes: { type: array, items: { type: string } }
    pass: { type: boolean }
EOF_SCHEMA
}
