#!/usr/bin/env bash
# libFuzzer targets (issue 18), built with clang-15 (installed when missing)
# into build-fuzz/ with ASan and UBSan, each from the sources it exercises.
#   scripts/fuzz.sh TARGET SECONDS     e.g. scripts/fuzz.sh jsonrpc 60
#   scripts/fuzz.sh all SECONDS
# The seeds in tests/fuzz/corpus/TARGET/ are committed; what the fuzzer adds
# goes to build-fuzz/corpus/TARGET/. A crash is written to
# build-fuzz/TARGET-crash-* and the run fails: make it a regression test.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TARGETS=(jsonrpc)
[ $# -eq 2 ] || { echo "usage: scripts/fuzz.sh TARGET|all SECONDS (targets: ${TARGETS[*]})" >&2; exit 2; }
if ! command -v clang++-15 >/dev/null || [ ! -e /usr/lib/llvm-15/lib/clang/15*/lib/linux/libclang_rt.fuzzer-x86_64.a ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y -qq --no-install-recommends clang-15 libfuzzer-15-dev >&2
fi
"$ROOT/scripts/setup.sh" >/dev/null  # the headers valijson and the generated files need

sources_of() {
  case "$1" in
    jsonrpc) echo "runner/server/json_rpc.cpp runner/server/line_framer.cpp" ;;
    *) echo "unknown fuzz target \"$1\" (targets: ${TARGETS[*]})" >&2; exit 2 ;;
  esac
}

build() { # TARGET -> build-fuzz/TARGET
  local target=$1 out="$ROOT/build-fuzz"
  mkdir -p "$out"
  local files=("$ROOT/tests/fuzz/${target}_fuzz.cpp")
  for f in $(sources_of "$target"); do files+=("$ROOT/$f"); done
  clang++-15 -std=c++2b -O1 -g -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$ROOT" -DSKILLRUNNER_VERSION=\"fuzz\" "${files[@]}" -lboost_json -o "$out/$target"
}

run() { # TARGET SECONDS
  local target=$1 seconds=$2 seeds="$ROOT/tests/fuzz/corpus/$1" corpus="$ROOT/build-fuzz/corpus/$1"
  mkdir -p "$corpus"
  build "$target"
  echo "fuzz: $target for ${seconds}s" >&2
  (cd "$ROOT/build-fuzz" && "./$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$target-crash-" -print_final_stats=1 "$corpus" "$seeds")
}

if [ "$1" = all ]; then
  for t in "${TARGETS[@]}"; do run "$t" "$2"; done
else
  run "$1" "$2"
fi
