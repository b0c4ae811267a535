#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh with WITH_TESTS=1: the tests' extra
# packages and the test build), then runs the test suite with ctest.
#   SANITIZE=1 scripts/test.sh   runs it under address+undefined sanitizers
#   SANITIZE=thread scripts/test.sh   runs it under ThreadSanitizer (build-tsan/)
#   REALLLM=1 scripts/test.sh    first builds llama.cpp's llama-server and its tiny model into
#                                .deps/realllm (scripts/realllm/setup.sh: 4-8 minutes once, then
#                                cached) so that the llama-server suite runs instead of skipping
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
WITH_TESTS=1 "$ROOT/scripts/setup.sh"
BUILD_DIR="build"
[ "${SANITIZE:-0}" = "1" ] && BUILD_DIR="build-asan"
[ "${SANITIZE:-0}" = "thread" ] && BUILD_DIR="build-tsan"
# The handler skills (word_stats) and the client tests run `python3`: Debian's, first on PATH. A
# version manager's shim (pyenv) costs half a second a start, which at an eval's concurrency on two
# cores runs the handlers past their timeout_ms.
export PATH="/usr/bin:$PATH"
# Tests never see a real provider's settings.
unset OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY ANTHROPIC_BASE_URL GEMINI_API_KEY GEMINI_BASE_URL \
  SKILLRUNNER_PROVIDER SKILLRUNNER_TOKEN || true
# Nor a trace collector: spans would leave the machine. Nor a cloud's credentials or a database's
# settings: the Bedrock, Vertex AI and PostgreSQL tests give their own, and no test may reach EC2's
# metadata address.
while IFS= read -r name; do unset "$name"; done < <(env | sed -n 's/^\(\(OTEL\|AWS\|PG\)_[A-Z_]*\)=.*/\1/p')
unset PGHOST PGPORT PGUSER PGPASSWORD PGDATABASE PGPASSFILE PGSERVICE GOOGLE_APPLICATION_CREDENTIALS \
  GCE_METADATA_HOST || true
export AWS_EC2_METADATA_DISABLED=true
REALLLM_DIR="${SKILLRUNNER_REALLLM_DIR:-$ROOT/.deps/realllm}"
if [ "${REALLLM:-0}" = "1" ]; then
  bash "$ROOT/scripts/realllm/setup.sh" "$REALLLM_DIR" >/dev/null
fi
if [ -x "$REALLLM_DIR/bin/llama-server" ]; then
  echo "llama-server suite: runs against $REALLLM_DIR/bin/llama-server" >&2
else
  echo "llama-server suite: skipped (no $REALLLM_DIR/bin/llama-server; REALLLM=1 scripts/test.sh builds it)" >&2
fi
if [ "${SANITIZE:-0}" = "1" ]; then
  # Global-buffer-overflow checks off: registering the instrumented globals (every string literal of
  # the 540 MB test binary) was most of a sanitized process's start. A test process took 0.77 s and
  # each `skillrunner` a test starts 0.5 s before anything ran; without, 0.34 s and 0.28 s. Every test
  # is a process of its own. Heap, stack, use-after-free, leak and undefined-behaviour checks stay on.
  export ASAN_OPTIONS="report_globals=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
cd "$ROOT/$BUILD_DIR"
ctest --output-on-failure -j"${JOBS:-2}" "$@"
