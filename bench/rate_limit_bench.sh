#!/usr/bin/env bash
# Rate-limit benchmark (issues 13 and 39; not a test): the same fake OpenAI
# server (build/fake_openai_server) behind nginx `limit_req` at RATE
# requests/s, where every request beyond the limit is answered 429 with
# `Retry-After: 1` and an OpenAI-style rate_limit_exceeded body. CASES eval
# cases of one generation and one judge call each (2 x CASES requests; the
# ideal wall is 2 x CASES / RATE seconds), for each nginx burst of BURSTS
# (standing cases: 0, a provider that spaces requests strictly, and 20,
# `burst=20 nodelay`, one that takes a burst beyond its pace the way token
# buckets do), at each concurrency of CONCS:
#
#   1. skillrunner eval, no `rate_limits` in the suite
#   2. skillrunner eval, suite `rate_limits` at exactly the server's limit
#      (RATE x 60 requests_per_minute), or at LIMIT_FACTOR times it (a limit
#      configured above the real one: a dropped tier); `limitsxF` in KINDS is
#      a row at F times it (KINDS="nolimits limitsx2 limitsx4")
#   3. promptfoo with no rate-limit configuration, when it is installed
#      (PROMPTFOO, ./node_modules/.bin, /tmp/promptfoo-bench/node_modules/.bin
#      as bench/eval_bench.sh installs it, or PATH); skipped with a message
#      otherwise. This script never installs it: `npm i promptfoo` first.
#
# A case is lost when its record in results.jsonl has an `error` or a
# `judge_error` (or has no record at all, after a timeout). nginx's access log
# gives the requests it admitted (200) and refused (429) in each run.
#
#   bench/rate_limit_bench.sh                     # BURSTS="0 20", CONCS="64 256", about 10 min
#   CONCS=64 PF=0 bench/rate_limit_bench.sh       # one round per burst, skillrunner only
#   CONCS=64 PF=0 RUNS=5 KINDS="nolimits limitsx2" bench/rate_limit_bench.sh
#                                                 # the goal: each median at most 1.05x the ideal, 0 lost
#   BURSTS=20 CONCS=64 PF=0 bench/rate_limit_bench.sh   # one burst only (BURST=20 says the same)
#   CONCS=64 PF=0 PROVIDERS=2 RUNS=5 KINDS="nolimits limitsx2 limitsx4" bench/rate_limit_bench.sh
#                                                 # two entries on one account, limits set too high
#   BUILD_DIR=build-other bench/rate_limit_bench.sh
#
# Knobs (defaults): BUILD_DIR=build (skillrunner and fake_openai_server are
# copied from there at the start, so a rebuild during the run cannot swap
# them; fake_openai_server is built there when missing, or always with
# BUILD=1), CASES=1000, CONCS="64 256", RATE=100 requests/s, BURSTS="0 20"
# (each a standing case, its rows apart: the requests nginx lets through
# beyond the steady pace, limit_req burst with nodelay; BURST=N, when set,
# runs that one burst only),
# DELAY_MS=100 the fake server's latency per answer, RUN_TIMEOUT=300 seconds
# per run (it is killed then, and its missing cases count as lost), PF=auto
# (1: promptfoo required, 0: skip), KINDS="nolimits limits" (the skillrunner
# rows to run), LIMIT_FACTOR=1 (the `limits` row's requests_per_minute as a
# multiple of the server's limit), PROVIDERS=1 (2: the judge calls go through a
# second provider entry, `fake_judge`, at the same nginx: two entries sharing
# one account; a limits row then gives each entry its half of the factor's
# rate, so "2x" is the sum over both), RUNS=1 (each row this many times, each
# with a fresh nginx; the table adds the median wall per row when RUNS > 1),
# PROMPTFOO=path of its binary, BENCH_TMP
# (scratch, default a new /tmp/rate-limit-bench.XXXXXX, removed unless KEEP=1).
#
# Needs: nginx (Debian nginx-light, installed with apt-get when missing), jq
# (likewise), python3, curl. Everything listens on 127.0.0.1 only.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
HERE="$ROOT/bench/rate_limit"
# shellcheck source=bench/promptfoo_suite.sh
. "$ROOT/bench/promptfoo_suite.sh"
BUILD_DIR=${BUILD_DIR:-build}
case "$BUILD_DIR" in /*) ;; *) BUILD_DIR="$ROOT/$BUILD_DIR" ;; esac
BUILD=${BUILD:-auto}
CASES=${CASES:-1000}
CONCS=${CONCS:-64 256}
RATE=${RATE:-100}
BURSTS=${BURSTS:-${BURST:-0 20}}
for b in $BURSTS; do
  case "$b" in *[!0-9]*) echo "BURSTS must be whole numbers of requests (got $b)" >&2; exit 2 ;; esac
done
BURST=""  # the burst of the run in progress (start_nginx)
DELAY_MS=${DELAY_MS:-100}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
PF=${PF:-auto}
KINDS=${KINDS:-nolimits limits}
LIMIT_FACTOR=${LIMIT_FACTOR:-1}
PROVIDERS=${PROVIDERS:-1}
RUNS=${RUNS:-1}
case "$PROVIDERS" in 1|2) ;; *) echo "PROVIDERS must be 1 or 2" >&2; exit 2 ;; esac
KEEP=${KEEP:-0}

log() { printf '[rate_limit_bench %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "$*"; exit 1; }

# ------------------------------------------------------------------ packages
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
apt_install() { # PACKAGE...
  log "installing $* (apt-get)"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2 ||
    { $SUDO apt-get update -qq >&2 &&
      $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >&2; }
}
NGINX=${NGINX:-$(command -v nginx || true)}
[ -n "$NGINX" ] || { [ -x /usr/sbin/nginx ] && NGINX=/usr/sbin/nginx; } || true
if [ -z "$NGINX" ]; then
  apt_install nginx-light
  NGINX=$(command -v nginx || echo /usr/sbin/nginx)
fi
[ -x "$NGINX" ] || die "nginx not found after installing nginx-light"
command -v jq >/dev/null || apt_install jq
command -v curl >/dev/null || apt_install curl
command -v python3 >/dev/null || die "python3 is required"

# ------------------------------------------------------------------ binaries
if [ "$BUILD" = 1 ] || { [ "$BUILD" = auto ] && [ ! -x "$BUILD_DIR/fake_openai_server" ]; }; then
  log "building fake_openai_server in $BUILD_DIR"
  timeout 1800 cmake --build "$BUILD_DIR" -j"${JOBS:-2}" --target fake_openai_server >&2
fi
[ -x "$BUILD_DIR/skillrunner" ] || die "$BUILD_DIR/skillrunner is missing: build it first (scripts/setup.sh)"
[ -x "$BUILD_DIR/fake_openai_server" ] || die "$BUILD_DIR/fake_openai_server is missing"

LOAD0=$(cut -d' ' -f1-3 /proc/loadavg)
T=${BENCH_TMP:-$(mktemp -d /tmp/rate-limit-bench.XXXXXX)}
mkdir -p "$T/bin"
chmod 755 "$T"  # nginx workers run as nobody when the master is root
cp -p "$BUILD_DIR/skillrunner" "$BUILD_DIR/fake_openai_server" "$T/bin/"
SR="$T/bin/skillrunner"
FAKE="$T/bin/fake_openai_server"
SR_VERSION=$("$SR" --version 2>/dev/null | head -1 || echo "?")
SR_BUILT=$(date -u -r "$BUILD_DIR/skillrunner" +%Y-%m-%dT%H:%MZ)
SR_COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "?")
[ -n "$(git -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null)" ] && SR_COMMIT="$SR_COMMIT+dirty"

FAKE_PID=""
NGINX_PID=""
stop_pid() { # PID
  if [ -n "$1" ] && kill -0 "$1" 2>/dev/null; then
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
  fi
}
stop_nginx() { stop_pid "$NGINX_PID"; NGINX_PID=""; }
cleanup() {
  stop_nginx
  stop_pid "$FAKE_PID"
  if [ "$KEEP" = 1 ]; then log "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ------------------------------------------------------------------ fake server
"$FAKE" "$DELAY_MS" >"$T/fake.out" 2>"$T/fake.err" &
FAKE_PID=$!
FAKE_URL=""
for _ in $(seq 100); do
  FAKE_URL=$(head -1 "$T/fake.out" 2>/dev/null || true)
  [ -n "$FAKE_URL" ] && break
  sleep 0.05
done
[ -n "$FAKE_URL" ] || { cat "$T/fake.err" >&2; die "fake_openai_server did not start"; }
log "fake_openai_server (pid $FAKE_PID) at $FAKE_URL, answering after $DELAY_MS ms"

# ------------------------------------------------------------------ nginx, fresh for every run
NG_PORT=""
start_nginx() { # LABEL: a fresh bucket at burst $BURST and access log ($T/nginx/access-LABEL.log)
  stop_nginx
  local ng="$T/nginx" conf
  mkdir -p "$ng/tmp"
  chmod 755 "$ng"
  NG_PORT=$(free_port)
  conf="$ng/nginx-$1.conf"
  local burst_opts=""
  [ "$BURST" = 0 ] || burst_opts="burst=$BURST nodelay"
  sed -e "s|@PORT@|$NG_PORT|g" -e "s|@UPSTREAM@|${FAKE_URL#http://}|g" -e "s|@RATE@|$RATE|g" \
      -e "s|@BURST_OPTS@|$burst_opts|g" -e "s|@ACCESS_LOG@|access-$1.log|g" "$HERE/nginx.conf.in" >"$conf"
  "$NGINX" -p "$ng/" -e "$ng/error.log" -c "$conf" -t >"$ng/configtest.log" 2>&1 ||
    { cat "$ng/configtest.log" >&2; die "nginx -t failed for $conf"; }
  "$NGINX" -p "$ng/" -e "$ng/error.log" -c "$conf" -g 'daemon off;' >>"$ng/stdout.log" 2>&1 &
  NGINX_PID=$!
  for _ in $(seq 100); do
    curl -s -o /dev/null "http://127.0.0.1:$NG_PORT/" 2>/dev/null && break
    sleep 0.05
  done
  kill -0 "$NGINX_PID" 2>/dev/null || { tail "$ng/error.log" >&2; die "nginx did not start"; }
  # The probe above is one admitted request: start the run with a clean log and bucket.
  sleep 0.2
  : >"$ng/access-$1.log"
}
# Statuses in an access log: sets N200 N429 NOTHER NREQ SPAN (first to last request, s)
# and LATE429 (429s after the first second of traffic) and PEAK (most 200s in one second).
# Retries: a request whose id (INVOCATION.N) follows a 429's (INVOCATION.N-1) is that 429's retry;
# EARLY counts those that came before the 429's `Retry-After: 1` was over (from the 429's answer
# to the retry's arrival: $msec less $request_time, nginx's millisecond grain), RETRIES all of them,
# MINGAP the shortest such gap (s; "-" without retries).
count_log() { # FILE
  read -r NREQ N200 N429 NOTHER SPAN LATE429 PEAK RETRIES EARLY MINGAP < <(awk '
    NR == 1 { t0 = $1 }
    { n++; t1 = $1; if ($2 == 200) { ok++; sec[int($1 - t0)]++ } else if ($2 == 429) { r++; if ($1 - t0 >= 1) late++ } else other++ }
    $4 != "-" && $4 != "" { arrived[$4] = $1 - $3; if ($2 == 429) refused[$4] = $1 }
    END { for (s in sec) if (sec[s] > peak) peak = sec[s]
          min = -1
          for (id in arrived) {
            k = match(id, /\.[0-9]+$/); if (!k) continue
            before = substr(id, 1, k) (substr(id, k + 1) - 1)
            if (!(before in refused)) continue
            gap = arrived[id] - refused[before]; retries++
            if (gap < 0.999) early++
            if (min < 0 || gap < min) min = gap
          }
          printf "%d %d %d %d %.1f %d %d %d %d %s\n", n, ok, r, other, (n ? t1 - t0 : 0), late, peak, retries, early,
                 (min < 0 ? "-" : sprintf("%.3f", min)) }' "$1")
}

# ------------------------------------------------------------------ skill, rubric, dataset, config, suites
mkdir -p "$T/skills" "$T/rubrics" "$T/suites"
cp -r "$HERE/skills/." "$T/skills/"
cp -r "$HERE/rubrics/." "$T/rubrics/"
awk -v n="$CASES" 'BEGIN { for (i = 0; i < n; i++) printf "{\"id\":\"c%d\",\"input\":{\"question\":\"What is %d plus %d?\",\"answer\":\"%d\"}}\n", i, i, i % 97, i + i % 97 }' \
  >"$T/skills/grade_answer/cases.jsonl"
RPM=$((RATE * 60))
# A kind's factor of the server's limit: limits is LIMIT_FACTOR, limitsxF is F, nolimits none.
factor_of() { # KIND
  case "$1" in nolimits) echo "" ;; limits) echo "$LIMIT_FACTOR" ;; limitsx*) echo "${1#limitsx}" ;;
    *) die "unknown kind $1 (nolimits, limits, limitsxF)" ;; esac
}
# requests_per_minute of each provider entry for KIND: the factor's rate, split over the entries.
entry_rpm_of() { # KIND
  local f
  f=$(factor_of "$1")
  [ -n "$f" ] && awk -v r="$RPM" -v f="$f" -v n="$PROVIDERS" 'BEGIN { printf "%g", r * f / n }'
  true
}
write_suites() { # CONC
  local kind rpm
  for kind in $KINDS; do
    rpm=$(entry_rpm_of "$kind")
    {
      echo "id: rate_limit_bench_$kind"
      echo "concurrency: $1"
      echo "skills:"
      echo "  - skill: grade_answer"
      echo "    rubric: bench_quality"
      [ "$PROVIDERS" = 2 ] && echo "    judge_model: judge-model"
      if [ -n "$rpm" ]; then
        if [ "$PROVIDERS" = 2 ]; then
          echo "rate_limits: { fake: { requests_per_minute: $rpm }, fake_judge: { requests_per_minute: $rpm } }"
        else
          echo "rate_limits: { fake: { requests_per_minute: $rpm } }"
        fi
      fi
      true
    } >"$T/suites/$kind-$1.yaml"
  done
}
write_config() { # CONC: openai-kind providers pointed at nginx (fake_judge: a second entry, same account), a dummy key
  cat >"$T/skillrunner.yaml" <<EOF
providers:
  fake: { kind: openai, base_url: "http://127.0.0.1:$NG_PORT/v1", api_key_env: SKILLRUNNER_RATE_BENCH_KEY, max_connections_per_host: $1 }
  fake_judge: { kind: openai, base_url: "http://127.0.0.1:$NG_PORT/v1", api_key_env: SKILLRUNNER_RATE_BENCH_KEY, max_connections_per_host: $1 }
models:
  bench-model: { provider: fake, structured_output: native }
  judge-model: { provider: fake_judge, structured_output: native }
EOF
}
export SKILLRUNNER_RATE_BENCH_KEY=sk-rate-limit-bench

# ------------------------------------------------------------------ runs
ROWS="$T/rows.tsv"
: >"$ROWS"
IDEAL=$(awk -v n="$CASES" -v r="$RATE" 'BEGIN { printf "%.1f", 2 * n / r }')
row() { # CONC RUN WALL LOST DETAIL EXIT (of the burst in progress, $BURST)
  local ratio="-"
  case "$3" in [0-9]*) ratio=$(awk -v w="$3" -v i="$IDEAL" 'BEGIN { printf "%.2fx", w / i }') ;; esac
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$BURST" "$1" "$2" "$3" "$ratio" "$4" "$5" \
    "$N200" "$N429" "$LATE429" "$PEAK" "$NOTHER" "$RETRIES retries, $EARLY early, shortest gap $MINGAP s" "$6" >>"$ROWS"
}
# Runs CMD... under timeout; sets WALL (s) and RC.
timed() {
  local t0 t1
  RC=0
  t0=$(date +%s%N)
  timeout -k 10 "$RUN_TIMEOUT" "$@" || RC=$?
  t1=$(date +%s%N)
  WALL=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", (b - a) / 1e9 }')
  [ "$RC" = 124 ] || [ "$RC" = 137 ] && log "timed out after ${RUN_TIMEOUT}s: $1"
  return 0
}

run_skillrunner() { # CONC KIND LABEL [RUN]
  local conc=$1 kind=$2 label="sr-b$BURST-$2-$1${4:+-$4}" out="$T/out-sr-b$BURST-$2-$1${4:+-$4}" res lost detail
  start_nginx "$label"
  write_config "$conc"
  rm -rf "$out"
  log "skillrunner eval: $3 ($CASES cases, concurrency $conc, nginx 127.0.0.1:$NG_PORT, burst $BURST)"
  timed "$SR" eval "$T/suites/$kind-$conc.yaml" --out "$out" --history "$T/history-$label.sqlite" \
    --config "$T/skillrunner.yaml" --skills "$T/skills" --rubrics "$T/rubrics" --concurrency "$conc" \
    --log-level "${SR_LOG_LEVEL:-warn}" 2>"$T/$label.log" >"$T/$label.out"
  stop_nginx
  count_log "$T/nginx/access-$label.log"
  res="$out/results.jsonl"
  [ -f "$res" ] || : >"$T/empty.jsonl"
  [ -f "$res" ] || res="$T/empty.jsonl"
  # A case is lost when its record carries an error or a judge error (or no result: what
  # runner/eval/records/case_outcome.cpp calls an error), or when it has no record at all.
  lost=$(jq -s --argjson n "$CASES" '
    [.[] | select(.error == null and .judge_error == null and .result != null) | .case] | unique | length as $ok
    | $n - $ok' "$res")
  detail=$(jq -rs --argjson n "$CASES" '
    ([.[] | select(.error != null or .result == null) | .error.code // "error"] | group_by(.) | map("\(length) \(.[0])")) +
    ([.[] | select(.error == null and .result != null and .judge_error != null) | "judge " + (.judge_error.code // "error")]
     | group_by(.) | map("\(length) \(.[0])")) +
    (if length < $n then ["\($n - length) without a record"] else [] end)
    | join(", ")' "$res")
  [ -n "$detail" ] || detail="-"
  log "  wall ${WALL}s (ideal ${IDEAL}s), exit $RC, lost $lost ($detail); nginx: $NREQ requests, $N200 x 200, $N429 x 429 ($LATE429 after the first second), $NOTHER other, over ${SPAN}s, busiest second $PEAK x 200; $RETRIES retries of a 429, $EARLY before its Retry-After (shortest gap ${MINGAP}s)"
  [ "$RC" = 0 ] || [ "$RC" = 1 ] || { log "  skillrunner exited $RC; its stderr ends:"; tail -5 "$T/$label.log" >&2 || true; }
  row "$conc" "$3" "$WALL" "$lost" "$detail" "$RC"
}

# ------------------------------------------------------------------ promptfoo
PFB=""
PF_NOTE=""
if [ "$PF" != 0 ]; then
  for c in "${PROMPTFOO:-}" "$ROOT/node_modules/.bin/promptfoo" "${PF_DIR:-/tmp/promptfoo-bench}/node_modules/.bin/promptfoo" \
           "$(command -v promptfoo || true)"; do
    [ -n "$c" ] && [ -x "$c" ] && { PFB=$c; break; }
  done
  if [ -z "$PFB" ]; then
    PF_NOTE="promptfoo is not installed (looked at \$PROMPTFOO, $ROOT/node_modules/.bin, ${PF_DIR:-/tmp/promptfoo-bench}/node_modules/.bin and PATH): its rows are skipped; \`npm i promptfoo\` (or PF_DIR=/tmp/promptfoo-bench bench/eval_bench.sh) installs it"
  elif ! command -v node >/dev/null; then
    PF_NOTE="promptfoo found at $PFB but node is not installed: its rows are skipped"; PFB=""
  fi
  [ "$PF" = 1 ] && [ -z "$PFB" ] && die "$PF_NOTE"
fi
PFV=""
if [ -n "$PFB" ]; then
  mkdir -p "$T/pf" "$T/pf-home"
  PFV=$(PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 PROMPTFOO_CONFIG_DIR="$T/pf-home" timeout 120 "$PFB" --version 2>/dev/null | tail -1 || true)
  log "promptfoo ${PFV:-?} at $PFB, node $(node --version)"
  cat >"$T/pf/prompt.json" <<'EOF'
[{"role": "system", "content": "You grade answers to arithmetic questions. Judge each criterion separately."},
 {"role": "user", "content": "Question: {{question}}\nAnswer: {{answer}}"}]
EOF
fi
# The same skill and dataset as bench/eval_bench.sh's rubric run: a strict
# json_schema generation, then one llm-rubric grade by the same server.
# Nothing about rate limits is configured: promptfoo's own defaults.
write_pf_config() { # FILE
  pf_write_config "rate_limit_bench - the grade_answer suite in promptfoo" "http://127.0.0.1:$NG_PORT" \
    sk-rate-limit-bench 1 "$T/skills/grade_answer/cases.jsonl" 0 "$1"
}
run_promptfoo() { # CONC
  local conc=$1 label="pf-b$BURST-$1" cfg="$T/pf/pf-b$BURST-$1.yaml" out="$T/pf/pf-b$BURST-$1.json" lost detail ok fail err n
  start_nginx "$label"
  write_pf_config "$cfg"
  log "promptfoo eval ($CASES tests, --max-concurrency $conc, nginx 127.0.0.1:$NG_PORT, burst $BURST)"
  # No PROMPTFOO_DISABLE_SHARING: with it 0.121.20 crashes at exit ("write after end", seen when it was measured).
  timed env OPENAI_API_KEY=sk-rate-limit-bench PROMPTFOO_DISABLE_TELEMETRY=1 PROMPTFOO_DISABLE_UPDATE=1 \
    PROMPTFOO_CONFIG_DIR="$T/pf-home" "$PFB" eval -c "$cfg" --no-cache --no-progress-bar --no-table \
    --max-concurrency "$conc" -o "$out" >"$T/$label.log" 2>&1
  stop_nginx
  count_log "$T/nginx/access-$label.log"
  if [ ! -s "$out" ]; then
    log "  promptfoo exited $RC without results; its output ends:"; tail -10 "$T/$label.log" >&2 || true
    row "$conc" "promptfoo ${PFV:-?}, no configuration" "$WALL" "$CASES" "no results (exit $RC)" "$RC"
    return
  fi
  ok=$(jq '.results.stats.successes // 0' "$out"); fail=$(jq '.results.stats.failures // 0' "$out")
  err=$(jq '.results.stats.errors // 0' "$out")
  n=$((ok + fail + err))
  # The fake server's every answer passes: a failed test is one whose grade (or generation) was lost too.
  lost=$((CASES - ok))
  detail="$err errors, $fail failed"
  [ "$n" -lt "$CASES" ] && detail="$detail, $((CASES - n)) without a result"
  local first
  first=$(jq -r '[.results.results[] | select(.success != true) | (.error // .gradingResult.reason // "?")] | .[0] // empty' "$out" | head -c 200)
  [ -n "$first" ] && detail="$detail (first: $(printf '%s' "$first" | tr '\n|\t' '  /'))"
  log "  wall ${WALL}s (ideal ${IDEAL}s), exit $RC, lost $lost ($detail); nginx: $NREQ requests, $N200 x 200, $N429 x 429 ($LATE429 after the first second), $NOTHER other, over ${SPAN}s, busiest second $PEAK x 200; $RETRIES retries of a 429, $EARLY before its Retry-After (shortest gap ${MINGAP}s)"
  row "$conc" "promptfoo ${PFV:-?}, no configuration" "$WALL" "$lost" "$detail" "$RC"
}

for BURST in $BURSTS; do
  for conc in $CONCS; do
    write_suites "$conc"
    for kind in $KINDS; do
      rpm=$(entry_rpm_of "$kind")
      entries="fake"
      [ "$PROVIDERS" = 2 ] && entries="fake and fake_judge"
      if [ -z "$rpm" ]; then
        what="skillrunner eval, no rate_limits"
      else
        what="skillrunner eval, rate_limits $rpm requests_per_minute each ($entries; $(factor_of "$kind")x the server's limit)"
      fi
      [ "$PROVIDERS" = 2 ] && [ -z "$rpm" ] && what="$what ($entries)"
      for run in $(seq "$RUNS"); do
        if [ "$RUNS" -gt 1 ]; then run_skillrunner "$conc" "$kind" "$what, run $run" "$run"
        else run_skillrunner "$conc" "$kind" "$what"; fi
      done
      if [ "$RUNS" -gt 1 ]; then
        # The median wall of this row's runs (an even count: the mean of the middle two).
        median=$(tail -n "$RUNS" "$ROWS" | cut -f4 | sort -n | awk '{ v[NR] = $1 } END { m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f", m }')
        log "  median wall of $RUNS runs at burst $BURST: ${median}s (ideal ${IDEAL}s)"
        N200="-" N429="-" LATE429="-" PEAK="-" NOTHER="-" RETRIES="-" EARLY="-" MINGAP="-"
        row "$conc" "$what, median of $RUNS" "$median" "-" "-" "-"
      fi
    done
    if [ -n "$PFB" ]; then run_promptfoo "$conc"; fi
  done
done
[ -n "$PF_NOTE" ] && log "$PF_NOTE"

# ------------------------------------------------------------------ table
echo
echo "## rate-limit benchmark: $SR_VERSION (binary of $SR_BUILT from $BUILD_DIR; tree at $SR_COMMIT), $(date -u +%Y-%m-%dT%H:%MZ)"
echo
echo "nginx $("$NGINX" -v 2>&1 | sed 's/.*\///') \`limit_req\` rate=${RATE}r/s, each burst of the table's first column (0: without burst, N: burst=N nodelay; 429 + \`Retry-After: 1\` beyond it)" \
     "in front of fake_openai_server (${DELAY_MS} ms per answer); $CASES cases x (1 generation + 1 judge) =" \
     "$((2 * CASES)) requests; ideal wall $IDEAL s; $(nproc) cores; load average before: $LOAD0, after: $(cut -d' ' -f1-3 /proc/loadavg);" \
     "each run killed after $RUN_TIMEOUT s"
echo
echo "| nginx burst | concurrency | run | wall s | x ideal | cases lost | how they were lost | 200s | 429s | 429s after 1st s | most 200s in 1 s | other statuses | retries of a 429 (before its Retry-After) | exit |"
echo "|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---|---:|"
while IFS=$'\t' read -r b c run wall ratio lost detail ok r late peak other retries rc; do
  echo "| $b | $c | $run | $wall | $ratio | $lost | $detail | $ok | $r | $late | $peak | $other | $retries | $rc |"
done <"$ROWS"
[ -n "$PF_NOTE" ] && { echo; echo "promptfoo: $PF_NOTE"; }
exit 0
