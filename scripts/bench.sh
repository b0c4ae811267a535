#!/usr/bin/env bash
# Builds and runs the benchmarks (programs, not tests): HttpClient round trips
# against a loopback server, the runner's own overhead per invocation, `run`
# of one skill in a 2,000-skill tree, the socket server under load (pipelined,
# open loop, and with nginx as the provider when nginx is installed), the viewer on a big history, and eval
# runs (with promptfoo from npm when PF=1, the default of bench/eval_bench.sh).
#   scripts/bench.sh [requests]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WITH_TESTS=1 "$ROOT/scripts/setup.sh"  # the benchmarks link the tests' support library
if ! command -v jq >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y -qq --no-install-recommends jq >&2
fi
cmake --build "$ROOT/build" -j"${JOBS:-$(nproc)}" --target skillrunner http_client_bench runner_bench server_bench open_loop_bench rollout_bench view_bench fake_openai_server >&2
N="${1:-20000}"
echo "## HttpClient against a loopback server"
"$ROOT/build/http_client_bench" "$N"
echo
echo "## Runner overhead per LLM_JSON_GENERATION invocation (the library path; CPU per call at c=64, and"
echo "## one sequential call beyond the loopback server's own round trip)"
"$ROOT/build/runner_bench" "$N"
echo
echo "## run of one skill in a generated tree of 2,000 skills (its index cached after the first)"
"$ROOT/bench/run_tree_bench.sh" 2000
echo
echo "## The socket server at 1 and 2 io threads (the load in this process, serve in its own: the CPU per"
echo "## invocation is serve's own rusage), simulated and over HTTP to bench/fake_openai_server; then"
echo "## 100,000 invocations in flight at once (1,000 connections x 100 pipelined, the provider answering"
echo "## after 20 s): peak RSS and KiB per invocation in flight"
"$ROOT/build/server_bench" 5 100000 1000 20000 --threads 1,2
echo
echo "## serve's added latency, open loop (calls on a fixed schedule, latency from when each was due) at"
echo "## 1,000 and 5,000 calls/s over HTTP to bench/fake_openai_server, beside the fake server's own;"
echo "## each rate for the skill alone, with a rollout, and with a rollout whose answers are all judged online"
"$ROOT/build/open_loop_bench" 5 1000,5000 32
echo
echo "## What a rollout adds to a call's hot path (routing and counting), in one process"
"$ROOT/build/rollout_bench" 1000000
echo
echo "## skillrunner view on a generated history of 1,000 runs x 1,000 cases (generated once into"
echo "## build/view-bench.sqlite): each answer's latency, one request at a time, and the viewer's peak memory"
"$ROOT/build/view_bench" 1000 1000 40 "$ROOT/build/view-bench.sqlite"
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
  echo
  echo "## serve's CPU per call with nginx answering a fixed chat.completion as the provider"
  "$ROOT/bench/nginx_upstream_bench.sh" 5
fi
echo
echo "## Eval runs"
"$ROOT/bench/eval_bench.sh"
echo
echo "## Prompt caching (an eval of 200 cases with a ~1,500-token system prompt)"
BUILD=0 "$ROOT/bench/caching_bench.sh"
