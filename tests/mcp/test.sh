#!/usr/bin/env bash
# MCP test (run by ctest; also by hand): the official MCP TypeScript SDK (@modelcontextprotocol/sdk,
# pinned in package.json, npm ci with its cache in <repo>/.deps/npm) as the client of
#   - `skillrunner mcp` over stdio, and
#   - `skillrunner serve --mcp-listen 127.0.0.1:0` over Streamable HTTP (with a token),
# on a copy of tests/mcp/fixture (handler skills and one generation on the simulated provider; no
# network). mcp_test.mjs lists the tools, calls them, cancels a slow call, follows progress and sees
# list_changed after a reload, and checks the HTTP refusals (Origin, token, session).
# SKILLRUNNER_BINARY names the program (default <repo>/build/skillrunner). Exit 1: a check failed.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BINARY="${SKILLRUNNER_BINARY:-$ROOT/build/skillrunner}"

fail() { echo "test.sh: $*" >&2; exit 1; }
command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 ||
  fail "node and npm are needed (scripts/setup.sh installs Debian's nodejs and npm)"
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' ||
  fail "Node 18 or newer is needed, found $(node --version)"
[ -x "$BINARY" ] || fail "no skillrunner at $BINARY (set SKILLRUNNER_BINARY)"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed (the fixture's handler skills)"

export npm_config_cache="$ROOT/.deps/npm" npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
unset SKILLRUNNER_TOKEN
npm ci --prefix "$HERE" --prefer-offline --loglevel=error

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cp -r "$HERE/fixture" "$WORK/tree"
node "$HERE/mcp_test.mjs" --binary "$BINARY" --tree "$WORK/tree"
