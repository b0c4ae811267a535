#!/usr/bin/env bash
# Browser test of `skillrunner view` (run by ctest; also by hand):
#   1. npm ci of playwright-core (cache in <repo>/.deps/npm, so a rerun is offline; no browser download)
#   2. two evals of tests/browser/fixture/evals/drift.yaml into one history: DRIFT=0, then DRIFT=1,
#      which flips 7 cases pass -> fail and 1 fail -> pass (no LLM, no network: a handler skill), and one
#      of evals/versions.yaml (a skill and its candidate, on the simulated provider)
#   3. `skillrunner view` on 127.0.0.1 (any free port) and `skillrunner view --export`
#   4. view_test.mjs drives the system Chromium over both, at 1400 and 800 px
# SKILLRUNNER_BINARY names the program (default <repo>/build/skillrunner); CHROMIUM the browser
# (default /usr/bin/chromium, Debian's `chromium`); screenshots go to ${SHOTS_DIR:-<repo>/build/view-shots}.
# The exit status is view_test.mjs's (1: a check failed); anything failing before it exits non-zero too.
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
BINARY="${SKILLRUNNER_BINARY:-$ROOT/build/skillrunner}"
CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
SHOTS="${SHOTS_DIR:-$ROOT/build/view-shots}"

fail() { echo "test.sh: $*" >&2; exit 1; }
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  fail "node and npm are needed (scripts/setup.sh installs Debian's nodejs and npm)"
fi
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 18 ? 0 : 1)' ||
  fail "Node 18 or newer is needed, found $(node --version)"
[ -x "$CHROMIUM" ] || fail "no browser at $CHROMIUM: apt-get install -y --no-install-recommends chromium"
[ -x "$BINARY" ] || fail "no skillrunner at $BINARY (set SKILLRUNNER_BINARY)"
command -v python3 >/dev/null 2>&1 || fail "python3 is needed (the fixture's handler skill)"

export npm_config_cache="$ROOT/.deps/npm" npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false
# playwright-core alone never downloads a browser; this makes sure nothing tries.
export PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
# The view must not want a token here (its own tests cover the token).
unset SKILLRUNNER_TOKEN
npm ci --prefix "$HERE" --prefer-offline --loglevel=error

WORK="$(mktemp -d)"
SERVER_PID=""
# shellcheck disable=SC2317  # run by the EXIT trap
cleanup() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT
HISTORY="$WORK/eval-history.sqlite"

# night N with DRIFT=D; exit 1 (a breached threshold) is what night two is for.
night() {
  local n="$1" drift="$2" status=0
  shift 2
  (cd "$HERE/fixture" && DRIFT="$drift" "$BINARY" eval evals/drift.yaml --out "$WORK/night-$n" \
    --history "$HISTORY" --run-id "view_night-$n" "$@") >"$WORK/night-$n.log" 2>&1 || status=$?
  if [ "$status" -gt 1 ]; then
    cat "$WORK/night-$n.log" >&2
    fail "the fixture's eval (night $n) exited $status"
  fi
}
run_id() {
  node -e 'process.stdout.write(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).run_id)' "$WORK/night-$1/summary.json"
}
night 1 0 --git-ref 1111aaa
night 2 1 --git-ref 2222bbb --baseline last
OLDER="$(run_id 1)"
NEWER="$(run_id 2)"
# The candidate-against-stable page: evals/versions.yaml (simulated; exit 1, its candidate breaches).
status=0
(cd "$HERE/fixture" && "$BINARY" eval evals/versions.yaml --out "$WORK/versions" --history "$HISTORY" \
  --run-id view_versions) >"$WORK/versions.log" 2>&1 || status=$?
if [ "$status" -gt 1 ]; then
  cat "$WORK/versions.log" >&2
  fail "the fixture's versions eval exited $status"
fi

"$BINARY" view --history "$HISTORY" --listen 127.0.0.1:0 2>"$WORK/view.err" &
SERVER_PID=$!
URL=""
for _ in $(seq 1 100); do  # 10 s
  URL="$(sed -n 's/^view: \(http[^ ]*\).*$/\1/p' "$WORK/view.err" | head -n 1)"
  [ -n "$URL" ] && break
  kill -0 "$SERVER_PID" 2>/dev/null || { cat "$WORK/view.err" >&2; fail "skillrunner view exited before listening"; }
  sleep 0.1
done
[ -n "$URL" ] || { cat "$WORK/view.err" >&2; fail "skillrunner view did not say 'view: URL' within 10 s"; }

# A failed export still lets the served pages be checked (more to go on), but fails the test.
exported=(--export "$WORK/export")
if ! "$BINARY" view --history "$HISTORY" --export "$WORK/export" >"$WORK/export.log" 2>&1; then
  cat "$WORK/export.log" >&2
  echo "test.sh: skillrunner view --export failed; checking the served pages only" >&2
  exported=()
fi

mkdir -p "$SHOTS"
status=0
node "$HERE/view_test.mjs" --url "$URL" "${exported[@]}" --newer "$NEWER" --older "$OLDER" --versions view_versions \
  --versions-summary "$WORK/versions/summary.json" \
  --shots "$SHOTS" --chromium "$CHROMIUM" || status=$?
if [ "$status" -ne 0 ]; then
  echo "test.sh: the server said:" >&2
  tail -n 20 "$WORK/view.err" >&2
fi
[ "${#exported[@]}" -gt 0 ] || { [ "$status" -ne 0 ] || status=1; }
exit "$status"
