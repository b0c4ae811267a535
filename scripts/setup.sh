#!/usr/bin/env bash
# Installs what building needs from Debian 12 packages (idempotent: apt-get
# update runs only when a package is missing), then configures and builds the
# program into build/, without the tests.
#   WITH_TESTS=1  also installs the tests' extras (GoogleTest, the JSON-Schema
#                 test suite, redis-server) and builds the tests and benchmarks
#                 (scripts/test.sh and scripts/bench.sh set it)
#   SANITIZE=1  builds with address+undefined sanitizers into build-asan/
#   SANITIZE=thread  builds with ThreadSanitizer into build-tsan/
#   BUILD_DIR   overrides the build folder
#   LINE_TABLES=1  debug information as line tables only (-g1): a third faster to
#                 compile, stacks keep file:line (.ci/run sets it)
#   DEPS_ONLY=1  stops after the dependencies (scripts/fuzz.sh builds its own)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT"

PACKAGES=(
  g++ cmake make git python3 ca-certificates ccache pkg-config
  libboost1.81-dev libboost-json1.81-dev libboost-url1.81-dev
  libyaml-cpp-dev libspdlog-dev libfmt-dev libcli11-dev libssl-dev
  libsqlite3-dev openssl libhiredis-dev libpq-dev libcsv-dev
)
# The tests' own packages (scripts/test.sh sets WITH_TESTS=1): GoogleTest, the JSON-Schema test suite,
# Redis for the shared-state tests, mypy for the Python client's, clang-format-15 for FormatTest,
# Chromium for the viewer's browser test (driven by playwright-core from npm; nothing downloads a browser),
# PostgreSQL 15 for the history's PostgreSQL tests (a throwaway cluster per run, scripts/postgres_cluster.sh);
# Node 18+ and npm for the TypeScript client's: Debian's nodejs and npm, unless a node and an npm are already on PATH.
# botocore (it checks every SigV4 signature), cryptography and PyJWT (the service-account JWTs) for the
# Bedrock and Vertex AI fakes (tests/support/cloud).
TEST_PACKAGES=(libgtest-dev googletest json-schema-test-suite redis-server python3-mypy clang-format-15 chromium postgresql-15
  python3-botocore python3-cryptography python3-jwt curl)
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  TEST_PACKAGES+=(nodejs npm)
fi
WITH_TESTS="${WITH_TESTS:-0}"
[ "$WITH_TESTS" = 1 ] && PACKAGES+=("${TEST_PACKAGES[@]}")

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# valijson: the Debian package depends on Qt5, Poco and MariaDB dev packages
# (for adapters we do not use), so unpack only its headers into .deps/.
VJ="$ROOT/.deps/valijson"
if [ ! -f "$VJ/usr/include/valijson/validator.hpp" ]; then
  echo "setup: unpacking libvalijson-dev headers into .deps/valijson" >&2
  tmp="$(mktemp -d)"
  (cd "$tmp" && apt-get download libvalijson-dev >/dev/null 2>&1) || {
    $SUDO apt-get update -qq && (cd "$tmp" && apt-get download libvalijson-dev >/dev/null)
  }
  mkdir -p "$VJ"
  dpkg-deb -x "$tmp"/libvalijson-dev_*.deb "$VJ"
  rm -rf "$tmp"
fi

[ "${DEPS_ONLY:-0}" = 1 ] && exit 0

BUILD_DIR="${BUILD_DIR:-build}"
EXTRA=()
if [ "$WITH_TESTS" = 1 ]; then
  EXTRA+=(-DSKILLRUNNER_BUILD_TESTS=ON)
else
  EXTRA+=(-DSKILLRUNNER_BUILD_TESTS=OFF)
fi
if [ "${SANITIZE:-0}" = "1" ]; then
  BUILD_DIR="build-asan"
  EXTRA+=(-DSKILLRUNNER_SANITIZE=ON)
elif [ "${SANITIZE:-0}" = "thread" ]; then
  BUILD_DIR="build-tsan"
  EXTRA+=(-DSKILLRUNNER_TSAN=ON)
fi
if [ "${LINE_TABLES:-0}" = "1" ]; then
  EXTRA+=(-DSKILLRUNNER_LINE_TABLES=ON)
else
  EXTRA+=(-DSKILLRUNNER_LINE_TABLES=OFF)
fi
JOBS="${JOBS:-$(nproc)}"
cmake -S "$ROOT" -B "$ROOT/$BUILD_DIR" -DCMAKE_BUILD_TYPE="${BUILD_TYPE:-RelWithDebInfo}" "${EXTRA[@]}" >&2
cmake --build "$ROOT/$BUILD_DIR" -j"$JOBS" >&2
echo "setup: built $ROOT/$BUILD_DIR/skillrunner" >&2
