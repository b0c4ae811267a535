#!/usr/bin/env bash
# Builds and tests the TypeScript client (run by ctest; also by hand).
#   test.sh build   npm ci of the pinned build tools (cache in <repo>/.deps/npm, so a rerun is offline),
#                   tsc --strict, and a check that the committed dist/ is what tsc makes of src/
#   test.sh test    compiles test/*.ts and runs them with node --test against a real `skillrunner serve`
#   test.sh         both
# SKILLRUNNER_BINARY names the server binary (default <repo>/build/skillrunner).
set -euo pipefail
HERE="$(cd "$(dirname "$0")/.." && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
MODE="${1:-all}"
cd "$HERE"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "test.sh: node and npm are needed (scripts/setup.sh installs Debian's nodejs and npm)" >&2
  exit 1
fi
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)'; then
  echo "test.sh: Node 18 or newer is needed, found $(node --version)" >&2
  exit 1
fi
export npm_config_cache="$ROOT/.deps/npm" npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false

build() {
  npm ci --prefer-offline --loglevel=error
  local fresh
  fresh="$(mktemp -d)"
  trap 'rm -rf "$fresh"' RETURN
  node_modules/.bin/tsc -p tsconfig.json --outDir "$fresh"
  if ! diff -r "$fresh" dist >/dev/null; then
    diff -ru dist "$fresh" | head -40 >&2 || true
    echo "test.sh: dist/ is not what tsc makes of src/: run 'npm run build' in clients/typescript and commit dist/" >&2
    exit 1
  fi
  echo "test.sh: dist/ is up to date (tsc $(node_modules/.bin/tsc --version))"
}

run_tests() {
  [ -d node_modules/typescript ] || npm ci --prefer-offline --loglevel=error
  rm -rf build-test
  node_modules/.bin/tsc -p tsconfig.test.json
  export SKILLRUNNER_BINARY="${SKILLRUNNER_BINARY:-$ROOT/build/skillrunner}"
  unset SKILLRUNNER_TOKEN
  node --test build-test/*.test.js
}

case "$MODE" in
  build) build ;;
  test) run_tests ;;
  all) build && run_tests ;;
  *) echo "usage: test.sh [build|test]" >&2; exit 2 ;;
esac
