#!/usr/bin/env bash
# Builds and runs the benchmarks (programs, not tests): HttpClient round trips
# against a loopback server, and the runner's own overhead per invocation.
#   scripts/bench.sh [requests]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/setup.sh"
cmake --build "$ROOT/build" -j"${JOBS:-$(nproc)}" --target http_client_bench runner_bench >&2
N="${1:-20000}"
echo "## HttpClient against a loopback server"
"$ROOT/build/http_client_bench" "$N"
echo
echo "## Runner overhead per LLM_JSON_GENERATION invocation"
"$ROOT/build/runner_bench" "$N"
