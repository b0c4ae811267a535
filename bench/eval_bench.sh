#!/usr/bin/env bash
# Eval benchmark (issue 7; not a test): wall time of `skillrunner eval` for
# 10,000 cases against a loopback OpenAI-kind provider answering after 100 ms
# at concurrency 100, versus the ideal 10 s (10,000 x 100 ms / 100); rubric
# cases/s with no provider latency versus design.md §7's target (>= 3,000/s);
# and the same suites in promptfoo (npm, installed outside the repository).
#
#   bench/eval_bench.sh                 # everything, about 5-10 min on 2 cores
#   PF=0 bench/eval_bench.sh            # skillrunner only
#   CASES=2000 PF_CASES=500 bench/eval_bench.sh   # a quick run
#
# Knobs (defaults): CASES=10000 cases per suite, CONC=100 cases in flight,
# DELAY_MS=100 server latency of the slow runs, PF=1 run promptfoo,
# PF_CASES=$CASES tests per promptfoo eval (fewer: the table says so and
# scales nothing), PF_DIR=/tmp/promptfoo-bench (npm install there),
# PF_VERSION=0.121.20 (the version the README's comparison table measured), BENCH_TMP
# (scratch, default a new /tmp/eval-bench.XXXXXX, removed unless KEEP=1),
# STEP_TIMEOUT=900 seconds per timed step, BUILD=1 build first.
#
# The fake server (build/fake_openai_server) answers every request, whatever
# its path, with one chat.completion whose content is a passing rubric
# verdict for criteria "correct" and "clear". The benchmark skill's output
# schema is that same shape (a grading skill), so the one body is a valid
# generation, a valid skillrunner judge verdict, and (it has "pass": true) a
# valid promptfoo llm-rubric grade. Each judged case costs 2 HTTP requests.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=bench/promptfoo_suite.sh
. "$ROOT/bench/promptfoo_suite.sh"
# shellcheck source=bench/grade_answer_skill.sh
. "$ROOT/bench/grade_answer_skill.sh"
CASES=${CASES:-10000}
CONC=${CONC:-100}
DELAY_MS=${DELAY_MS:-100}
PF=${PF:-1}
PF_CASES=${PF_CASES:-$CASES}
PF_DIR=${PF_DIR:-/tmp/promptfoo-bench}
PF_VERSION=${PF_VERSION:-0.121.20}
STEP_TIMEOUT=${STEP_TIMEOUT:-900}
BUILD=${BUILD:-1}
KEEP=${KEEP:-0}
SR="$ROOT/build/skillrunner"
FAKE="$ROOT/build/fake_openai_server"

log() { printf '[eval_bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
command -v jq >/dev/null || { log "jq is required (apt-get install jq)"; exit 1; }

if [ "$BUILD" = 1 ]; then
  log "building skillrunner and fake_openai_server"
  # A first build after CMakeLists.txt changed regenerates and may miss a new target: retry once.
  timeout 1800 cmake --build "$ROOT/build" -j"${JOBS:-2}" --target skillrunner fake_openai_server >&2 ||
    timeout 1800 cmake --build "$ROOT/build" -j"${JOBS:-2}" --target skillrunner fake_openai_server >&2
fi

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T=${BENCH_TMP:-$(mktemp -d /tmp/eval-bench.XXXXXX)}
mkdir -p "$T"
SERVER_PID=""
stop_server() {
  if [ -n "$SERVER_PID" ] && kill -0 "$SERVER_PID" 2>/dev/null; then
    kill "$SERVER_PID"
    wait "$SERVER_PID" 2>/dev/null || true
    cat "$T/server.err" >&2 || true
  fi
  SERVER_PID=""
}
cleanup() {
  stop_server
  if [ "$KEEP" = 1 ]; then log "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT

# ------------------------------------------------------------------ fake server
URL=""
start_server() { # DELAY_MS
  stop_server
  "$FAKE" "$1" >"$T/server.out" 2>"$T/server.err" &
  SERVER_PID=$!
  for _ in $(seq 100); do
    URL=$(head -1 "$T/server.out" 2>/dev/null || true)
    [ -n "$URL" ] && break
    sleep 0.05
  done
  [ -n "$URL" ] || { log "fake_openai_server did not start"; cat "$T/server.err" >&2; exit 1; }
  log "fake_openai_server (pid $SERVER_PID) at $URL, answering after $1 ms"
}
# user+sys CPU seconds of the fake server so far (it shares the 2 cores).
server_cpu() {
  awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$SERVER_PID/stat"
}

# ------------------------------------------------------------------ the skill, rubric, dataset, suites
mkdir -p "$T/skills/grade_answer" "$T/rubrics" "$T/suites"
{
  cat <<'EOF'
# A grading skill: its answer has the shape of a rubric verdict, so the fake
# server's one canned body serves generation and judging alike.
id: grade_answer
version: 1
description: Grade an answer to a question against two criteria.
template_type: LLM_JSON_GENERATION
model: bench-model
temperature: 0.2
max_output_tokens: 512
input_schema:
  type: object
  required: [question, answer]
  additionalProperties: false
  properties:
    question: { type: string, minLength: 1 }
    answer: { type: string }
EOF
  grade_answer_output_schema
  cat <<'EOF'
prompt:
  system: You grade answers to arithmetic questions. Judge each criterion separately.
  user: "Question: {{input.question}}\nAnswer: {{input.answer}}"
retry:
  validation_retries: 1
timeout_ms: 60000
EOF
} >"$T/skills/grade_answer/skill.yaml"
cat >"$T/rubrics/bench_quality.yaml" <<'EOF'
id: bench_quality
description: Is the grade right and well explained?
criteria:
  - id: correct
    description: The grade matches whether the answer is right.
    required: true
  - id: clear
    description: The reasoning is one or two plain sentences.
indeterminate_below_confidence: 50
EOF
awk -v n="$CASES" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"c%d\",\"input\":{\"question\":\"What is %d plus %d?\",\"answer\":\"%d\"}}\n", i, i, i % 97, i + i % 97 }' \
  >"$T/skills/grade_answer/cases.jsonl"
for rubric in none rubric; do
  {
    echo "id: bench_$rubric"
    echo "concurrency: $CONC"
    echo "skills:"
    echo "  - skill: grade_answer"
    [ "$rubric" = rubric ] && echo "    rubric: bench_quality"
    echo "thresholds: { schema_compliance: 0.98 }"
  } >"$T/suites/$rubric.yaml"
done
write_config() { # BASE_URL -> $T/skillrunner.yaml (an openai-kind provider on loopback: no key needed)
  cat >"$T/skillrunner.yaml" <<EOF
providers:
  fake: { kind: openai, base_url: "$1/v1", api_key_env: SKILLRUNNER_BENCH_NO_KEY, max_connections_per_host: 128 }
models:
  bench-model: { provider: fake, structured_output: native }
default_provider: fake
EOF
}
cat >"$T/skillrunner-sim.yaml" <<'EOF'
providers:
  sim: { kind: simulated, latency_ms: 0, seed: 1 }
models:
  bench-model: { provider: sim, structured_output: native }
default_provider: sim
EOF

# ------------------------------------------------------------------ timed runs
ROWS="$T/rows.tsv"
: >"$ROWS"
row() { printf '%s\n' "$*" >>"$ROWS"; }

# Runs CMD... under timeout and GNU time; sets WALL USER SYS RSS_MB RC.
timed() {
  local tf="$T/time.out" t0 t1
  RC=0
  t0=$(date +%s%N)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%e %U %S %M' -o "$tf" timeout "$STEP_TIMEOUT" "$@" || RC=$?
  else
    { TIMEFORMAT='%R %U %S'; time timeout "$STEP_TIMEOUT" "$@" || RC=$?; } 2>"$tf"
  fi
  t1=$(date +%s%N)
  WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e9 }')
  read -r _ USER SYS RSS_KB < <(tail -1 "$tf") || true
  RSS_MB=$([ -n "${RSS_KB:-}" ] && awk -v k="$RSS_KB" 'BEGIN { printf "%.0f", k / 1024 }' || echo "-")
  [ "$RC" = 124 ] && log "timed out after ${STEP_TIMEOUT}s: $*"
  return 0
}

# LABEL SUITE CONFIG IDEAL_S REQS_PER_CASE
run_skillrunner() {
  local label=$1 suite=$2 config=$3 ideal=$4 out="$T/out-$1" s0=0 s1=0 scpu="-"
  rm -rf "$out"
  [ -n "$SERVER_PID" ] && s0=$(server_cpu)
  log "skillrunner: $label ($CASES cases, concurrency $CONC)"
  timed "$SR" eval "$suite" --out "$out" --history "$T/history-$label.sqlite" \
    --config "$config" --skills "$T/skills" --rubrics "$T/rubrics" --log-level warn 2>"$T/sr-$label.log" >/dev/null
  [ -n "$SERVER_PID" ] && { s1=$(server_cpu); scpu=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.2f", b - a }'); }
  if [ "$RC" != 0 ] && [ "$RC" != 1 ]; then
    log "skillrunner exited $RC"; tail -20 "$T/sr-$label.log" >&2
    row "skillrunner|$label|$CASES|$CONC|FAILED rc=$RC|-|-|-|-|$ideal|-"
    return
  fi
  local s="$out/summary.json" lines cases compliance passrate judge_err p50
  lines=$(wc -l <"$out/results.jsonl")
  cases=$(jq '.skills.grade_answer.cases' "$s")
  compliance=$(jq '.skills.grade_answer.schema_compliance' "$s")
  passrate=$(jq '.skills.grade_answer.rubric_pass_rate // "-"' "$s")
  judge_err=$(jq '.skills.grade_answer.judge_errors // 0' "$s")
  p50=$(jq '.skills.grade_answer.latency_ms.p50 // "-"' "$s")
  local cps cpu_ms
  cps=$(awk -v n="$cases" -v w="$WALL" 'BEGIN { printf "%.0f", n / w }')
  cpu_ms=$(awk -v n="$cases" -v u="$USER" -v s="$SYS" 'BEGIN { printf "%.3f", (u + s) * 1000 / n }')
  log "  wall ${WALL}s (ideal ${ideal}s), user ${USER}s sys ${SYS}s, max RSS ${RSS_MB} MB, $cps cases/s," \
      "results.jsonl $lines lines, schema_compliance $compliance, rubric_pass_rate $passrate, judge_errors $judge_err, p50 ${p50} ms, server CPU ${scpu}s, exit $RC"
  row "skillrunner|$label|$cases|$CONC|$WALL|$USER+$SYS|$cpu_ms|$RSS_MB|$cps|$ideal|compliance $compliance, rubric pass $passrate, judge errors $judge_err, p50 ${p50} ms, server CPU ${scpu}s"
}

ideal() { awk -v n="$1" -v d="$DELAY_MS" -v c="$CONC" -v r="$2" 'BEGIN { printf "%.1f", n * d * r / c / 1000 }'; }

start_server "$DELAY_MS"
write_config "$URL"
run_skillrunner "${DELAY_MS}ms-schema-only" "$T/suites/none.yaml" "$T/skillrunner.yaml" "$(ideal "$CASES" 1)"
run_skillrunner "${DELAY_MS}ms-rubric" "$T/suites/rubric.yaml" "$T/skillrunner.yaml" "$(ideal "$CASES" 2)"
start_server 0
write_config "$URL"
run_skillrunner "0ms-schema-only" "$T/suites/none.yaml" "$T/skillrunner.yaml" "-"
run_skillrunner "0ms-rubric" "$T/suites/rubric.yaml" "$T/skillrunner.yaml" "-"
stop_server
run_skillrunner "simulated-0ms-rubric" "$T/suites/rubric.yaml" "$T/skillrunner-sim.yaml" "-"

# ------------------------------------------------------------------ promptfoo
PF_NOTE=""
if [ "$PF" = 1 ]; then
  PFB="$PF_DIR/node_modules/.bin/promptfoo"
  have_pf() { [ -x "$PFB" ] && [ "$(node -p "require('$PF_DIR/node_modules/promptfoo/package.json').version" 2>/dev/null)" = "$PF_VERSION" ]; }
  if ! command -v node >/dev/null; then
    PF_NOTE="node is not installed: promptfoo skipped"
  elif ! have_pf; then
    log "npm install promptfoo@$PF_VERSION into $PF_DIR (time-boxed to 10 min)"
    mkdir -p "$PF_DIR"
    [ -f "$PF_DIR/package.json" ] || printf '{"name":"promptfoo-bench","private":true}\n' >"$PF_DIR/package.json"
    (cd "$PF_DIR" && timeout 600 npm install --save-exact --no-audit --no-fund "promptfoo@$PF_VERSION" >"$PF_DIR/npm-install.log" 2>&1) ||
      PF_NOTE="npm install promptfoo@$PF_VERSION failed or timed out (see $PF_DIR/npm-install.log): promptfoo skipped"
    [ -z "$PF_NOTE" ] && ! have_pf && PF_NOTE="promptfoo@$PF_VERSION not found after npm install: promptfoo skipped"
  fi
fi
if [ "$PF" = 1 ] && [ -z "$PF_NOTE" ]; then
  PFV=$(PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_CONFIG_DIR="$T/pf-home" "$PFB" --version 2>/dev/null | tail -1)
  log "promptfoo $PFV, node $(node --version)"
  mkdir -p "$T/pf" "$T/pf-home"
  # The same skill: system+user prompt, the output schema as a strict
  # response_format, the same dataset (first PF_CASES cases), and either an
  # is-json assertion against the output schema (schema compliance) or one
  # llm-rubric assertion graded by the same fake server.
  cat >"$T/pf/prompt.json" <<'EOF'
[{"role": "system", "content": "You grade answers to arithmetic questions. Judge each criterion separately."},
 {"role": "user", "content": "Question: {{question}}\nAnswer: {{answer}}"}]
EOF
  write_pf_config() { # BASE_URL RUBRIC(0|1) FILE
    pf_write_config "eval_bench - the grade_answer suite in promptfoo" "$1" sk-bench "$2" \
      "$T/skills/grade_answer/cases.jsonl" "$PF_CASES" "$3"
  }
  run_promptfoo() { # LABEL RUBRIC IDEAL
    local label=$1 rubric=$2 ideal=$3 cfg="$T/pf/$1.yaml" out="$T/pf/$1.json" s0 s1 scpu
    write_pf_config "$URL" "$rubric" "$cfg"
    s0=$(server_cpu)
    log "promptfoo: $label ($PF_CASES tests, --max-concurrency $CONC)"
    # No PROMPTFOO_DISABLE_SHARING: with it 0.121.20 crashes at exit ("write after end", seen when it was measured).
    timed env OPENAI_API_KEY=sk-bench PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 \
      PROMPTFOO_CONFIG_DIR="$T/pf-home" "$PFB" eval -c "$cfg" --no-cache --no-progress-bar --no-table \
      --max-concurrency "$CONC" -o "$out" >"$T/pf/$label.log" 2>&1
    s1=$(server_cpu)
    scpu=$(awk -v a="$s0" -v b="$s1" 'BEGIN { printf "%.2f", b - a }')
    if [ ! -s "$out" ]; then
      log "promptfoo exited $RC without results"; tail -20 "$T/pf/$label.log" >&2
      row "promptfoo $PFV|$label|$PF_CASES|$CONC|FAILED rc=$RC|-|-|-|-|$ideal|-"
      return
    fi
    local ok fail err n cps cpu_ms dur
    ok=$(jq '.results.stats.successes' "$out"); fail=$(jq '.results.stats.failures' "$out")
    err=$(jq '.results.stats.errors' "$out"); dur=$(jq '.results.stats.durationMs // "-"' "$out")
    n=$((ok + fail + err))
    cps=$(awk -v n="$n" -v w="$WALL" 'BEGIN { printf "%.0f", n / w }')
    cpu_ms=$(awk -v n="$n" -v u="$USER" -v s="$SYS" 'BEGIN { printf "%.3f", (u + s) * 1000 / n }')
    log "  wall ${WALL}s (ideal ${ideal}s), user ${USER}s sys ${SYS}s, max RSS ${RSS_MB} MB, $cps tests/s," \
        "passed $ok failed $fail errors $err, evaluation ${dur} ms, server CPU ${scpu}s, exit $RC"
    row "promptfoo $PFV|$label|$n|$CONC|$WALL|$USER+$SYS|$cpu_ms|$RSS_MB|$cps|$ideal|passed $ok, failed $fail, errors $err, own duration ${dur} ms, server CPU ${scpu}s, exit $RC"
  }
  start_server "$DELAY_MS"
  run_promptfoo "${DELAY_MS}ms-schema-only" 0 "$(ideal "$PF_CASES" 1)"
  run_promptfoo "${DELAY_MS}ms-rubric" 1 "$(ideal "$PF_CASES" 2)"
  start_server 0
  run_promptfoo "0ms-rubric" 1 "-"
  stop_server
elif [ "$PF" = 1 ]; then
  log "$PF_NOTE"
fi

# ------------------------------------------------------------------ table
echo
echo "## eval benchmark: $(nproc) cores, $CASES cases, concurrency $CONC, server delay ${DELAY_MS} ms ($(date -u +%Y-%m-%dT%H:%MZ); load average before: $LOAD0, after: $(cut -d' ' -f1-3 /proc/loadavg))"
echo "ideal = cases x delay x requests per case / concurrency; design.md §7 target: >= 3,000 rubric cases/s with no provider latency"
echo
echo "| tool | run | cases | conc | wall s | CPU user+sys s | CPU ms/case | max RSS MB | cases/s | ideal s | notes |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"
while IFS='|' read -r a b c d e f g h i j k; do
  echo "| $a | $b | $c | $d | $e | $f | $g | $h | $i | $j | $k |"
done <"$ROWS"
[ -n "$PF_NOTE" ] && echo && echo "promptfoo: $PF_NOTE"
exit 0
