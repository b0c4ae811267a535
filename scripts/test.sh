#!/usr/bin/env bash
# Sets everything up (scripts/setup.sh), then runs the test suite with ctest.
#   SANITIZE=1 scripts/test.sh   runs it under address+undefined sanitizers
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
"$ROOT/scripts/setup.sh"
BUILD_DIR="build"
[ "${SANITIZE:-0}" = "1" ] && BUILD_DIR="build-asan"
# Tests never see a real provider's settings.
unset OPENAI_API_KEY OPENAI_BASE_URL ANTHROPIC_API_KEY ANTHROPIC_BASE_URL SKILLRUNNER_PROVIDER SKILLRUNNER_TOKEN || true
cd "$ROOT/$BUILD_DIR"
ctest --output-on-failure -j"${JOBS:-2}" "$@"
