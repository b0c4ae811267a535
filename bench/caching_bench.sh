#!/usr/bin/env bash
# Prompt caching benchmark (issue 16; not a test): an eval of 200 cases whose
# skill has a ~1,500-token system prompt and schema, against a loopback
# OpenAI-kind server that reports caching the way OpenAI does (a request's
# longest earlier-seen prefix, from 1,024 tokens in steps of 128; 4 characters
# a token). Run twice, with caching reported and without, at gpt-4o-mini's
# prices ($0.15 input, $0.075 cached input, $0.60 output per million): the
# share of input tokens served from the cache, and the cost with and without.
#
#   bench/caching_bench.sh            # about 10 s
#   CASES=1000 CONC=32 bench/caching_bench.sh
#
# Knobs (defaults): CASES=200, CONC=8 cases in flight, BUILD=1 build first,
# BENCH_TMP (scratch; removed unless KEEP=1).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CASES=${CASES:-200}
CONC=${CONC:-8}
BUILD=${BUILD:-1}
KEEP=${KEEP:-0}
# shellcheck source=bench/grade_answer_skill.sh
. "$ROOT/bench/grade_answer_skill.sh"
SR="$ROOT/build/skillrunner"
FAKE="$ROOT/build/fake_openai_server"
log() { printf '[caching_bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
command -v jq >/dev/null || { log "jq is required (apt-get install jq)"; exit 1; }
if [ "$BUILD" = 1 ]; then
  cmake --build "$ROOT/build" -j"${JOBS:-2}" --target skillrunner fake_openai_server >&2
fi

T=${BENCH_TMP:-$(mktemp -d /tmp/caching-bench.XXXXXX)}
mkdir -p "$T/skills/grade_answer" "$T/suites"
SERVER_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true; fi
  SERVER_PID=""
}
cleanup() { stop_server; if [ "$KEEP" = 1 ]; then log "kept $T"; else rm -rf "$T"; fi; }
trap cleanup EXIT

# The skill: a grading skill (the fake server's one canned verdict is a valid
# answer), its system prompt ~1,300 tokens of grading rules, plus the schema
# the validation loop appends to it (~150 tokens): the same bytes in every case.
{
  cat <<'EOF'
id: grade_answer
template_type: LLM_JSON_GENERATION
model: bench-model
temperature: 0.2
max_output_tokens: 256
input_schema:
  type: object
  required: [question, answer]
  properties: { question: { type: string }, answer: { type: string } }
EOF
  grade_answer_output_schema
  cat <<'EOF'
prompt:
  user: "Question: {{input.question}}\nAnswer: {{input.answer}}"
  system: |
    You grade answers to arithmetic questions for a tutoring service. Judge each criterion separately.
EOF
  for i in $(seq 1 36); do
    printf '    Rule %d: when the answer states a number, compare it with the exact result; note rounding, units and sign, and say which step went wrong.\n' "$i"
  done
} >"$T/skills/grade_answer/skill.yaml"
awk -v n="$CASES" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"c%d\",\"input\":{\"question\":\"What is %d plus %d?\",\"answer\":\"%d\"}}\n", i, i, i % 97, i + i % 97 }' \
  >"$T/skills/grade_answer/cases.jsonl"
printf 'id: caching\nconcurrency: %s\nskills:\n  - skill: grade_answer\n' "$CONC" >"$T/suites/caching.yaml"

run() { # MODE (--prompt-cache | --prompt-tokens) LABEL
  "$FAKE" "$1" 0 >"$T/server.out" 2>"$T/server.err" &
  SERVER_PID=$!
  local url=""
  for _ in $(seq 100); do url=$(head -1 "$T/server.out" 2>/dev/null || true); [ -n "$url" ] && break; sleep 0.05; done
  [ -n "$url" ] || { log "fake_openai_server did not start"; cat "$T/server.err" >&2; exit 1; }
  cat >"$T/skillrunner.yaml" <<EOF
providers:
  fake: { kind: openai, base_url: "$url/v1", api_key_env: SKILLRUNNER_BENCH_NO_KEY }
models:
  bench-model: { provider: fake, structured_output: none,
                 price: { input: 0.15, cached_input: 0.075, output: 0.60 } }
default_provider: fake
EOF
  rm -rf "$T/out-$2"
  "$SR" eval "$T/suites/caching.yaml" --out "$T/out-$2" --history "$T/history.sqlite" --config "$T/skillrunner.yaml" \
    --skills "$T/skills" --rubrics "$T/skills" --log-level warn >/dev/null 2>"$T/sr-$2.log" || true
  stop_server
  jq -r --arg name "$2" '.totals | "| \($name) | \(.cases) | \(.input_tokens) | \(.cached_input_tokens) | \(
      if .input_tokens > 0 then (100 * .cached_input_tokens / .input_tokens * 10 | round / 10) else 0 end)% | $\(
      .cost_usd * 1e6 | round / 1e6) |"' "$T/out-$2/summary.json"
}

log "$CASES cases at concurrency $CONC"
echo "| server reports | cases | input tokens | cached | share cached | cost (USD) |"
echo "|---|---|---|---|---|---|"
run --prompt-cache "caching (OpenAI-style)"
run --prompt-tokens "no caching"
