#!/usr/bin/env bash
# libFuzzer targets (issue 18), built with clang-15 (installed when missing)
# into build-fuzz/ with ASan and UBSan, each from the sources it exercises.
#   scripts/fuzz.sh TARGET SECONDS     e.g. scripts/fuzz.sh jsonrpc 60
#   scripts/fuzz.sh all SECONDS
#   RUNS=10000000 scripts/fuzz.sh all 1800   stops each at 10 million executions
#                                            or 30 minutes, whichever comes first
# Run it under `nice -n 19` on a shared machine: it compiles two files at a
# time. Each source is compiled once into build-fuzz/obj/ (again when it or a
# header it includes changed); a target links its own file and an archive of
# the objects of its sources, so only what it uses is linked in.
# The seeds in tests/fuzz/corpus/TARGET/ are committed; what the fuzzer adds
# goes to build-fuzz/corpus/TARGET/. A crash is written to
# build-fuzz/TARGET-crash-* and the run fails: make it a regression test.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUT="$ROOT/build-fuzz"
TARGETS=(jsonrpc skill_yaml suite_yaml provider_answer schema_strict http_response)
[ $# -eq 2 ] || { echo "usage: scripts/fuzz.sh TARGET|all SECONDS (targets: ${TARGETS[*]})" >&2; exit 2; }
if ! command -v clang++-15 >/dev/null || [ ! -e /usr/lib/llvm-15/lib/clang/15*/lib/linux/libclang_rt.fuzzer-x86_64.a ]; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get install -y -qq --no-install-recommends clang-15 libfuzzer-15-dev >&2
fi
DEPS_ONLY=1 "$ROOT/scripts/setup.sh" >/dev/null  # the packages, and the headers of valijson

# Sources (relative to the root) besides tests/fuzz/TARGET_fuzz.cpp and
# tests/fuzz/boost_assert.cpp (Boost's assertions stay on): the
# units its code reaches (as the linker of the CMake build picks them from
# the layer libraries). generated/embedded_schemas.cpp is made in build-fuzz/.
cd "$ROOT"
wire() { echo services/common/*.cpp services/generation/strict_*.cpp services/http/http_types.cpp \
  services/providers/{openai,anthropic,gemini}_provider.cpp services/providers/{http_errors,provider}.cpp; }
loader() { echo services/common/*.cpp services/validation/*.cpp generated/embedded_schemas.cpp \
  runner/{config,diagnostic,schema_lint,skill_loader,yaml_json}.cpp services/generation/strict_*.cpp \
  services/generation/{answer_check,coercion,json_extract,prompt_builder,prompt_template,rules,structured_generator}.cpp \
  services/handler/{builtin_handlers,exec_handler,handler}.cpp \
  services/providers/{fault_script,provider,retrying_provider}.cpp services/state/redis.cpp; }
sources_of() {
  case "$1" in
    jsonrpc) echo runner/server/{json_rpc,line_framer,params}.cpp services/common/*.cpp ;;
    skill_yaml) loader ;;
    suite_yaml) echo "$(loader)" runner/{judges,skill_registry}.cpp runner/eval/{dataset,suite}.cpp \
      services/review/{aggregate,judge_prompt,prepared_judge,reviewer,verdict_schema}.cpp ;;
    provider_answer) echo "$(wire)" services/validation/*.cpp services/generation/{answer_check,coercion,json_extract}.cpp ;;
    schema_strict) echo "$(wire)" services/validation/error_paths.cpp \
      services/providers/{plausible_text,regex_sample,schema_instance,schema_scalars,schema_walk}.cpp ;;
    http_response) echo services/common/*.cpp services/http/{beast_separate_compilation,exchange,http_types,http_url}.cpp ;;
    *) echo "unknown fuzz target \"$1\" (targets: ${TARGETS[*]})" >&2; exit 2 ;;
  esac
}

# libstdc++ 12 offers std::expected only when __cpp_concepts says 202002;
# clang 15 implements what <expected> uses but still says 201907.
CXXFLAGS=(-std=c++2b -O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined
  -Wno-builtin-macro-redefined -U__cpp_concepts -D__cpp_concepts=202002L
  -I"$ROOT" -isystem "$ROOT/.deps/valijson/usr/include" -DVALIJSON_USE_EXCEPTIONS=1
  -DBOOST_ASIO_SEPARATE_COMPILATION -DBOOST_BEAST_SEPARATE_COMPILATION -DBOOST_ASIO_NO_DEPRECATED
  -DBOOST_PROCESS_USE_STD_FS -DSPDLOG_COMPILED_LIB -DSPDLOG_FMT_EXTERNAL -DSPDLOG_SHARED_LIB -DFMT_SHARED
  -DSKILLRUNNER_VERSION=\"fuzz\" -DSKILLRUNNER_SOURCE_DIR=\"$ROOT\" -DBOOST_ENABLE_ASSERT_HANDLER)
LIBS=(-lboost_json -lboost_url -lyaml-cpp -lspdlog -lfmt -lssl -lcrypto -lsqlite3 -lhiredis -lpthread)

embedded_schemas() { # build-fuzz/generated/embedded_schemas.cpp, from the list CMakeLists.txt embeds
  local out="$OUT/generated/embedded_schemas.cpp" inputs
  inputs=$(sed -n '/^set(EMBEDDED_SCHEMAS/,/)/p' "$ROOT/CMakeLists.txt" | grep -o '${CMAKE_SOURCE_DIR}/[^ )]*' |
    sed "s|\${CMAKE_SOURCE_DIR}|$ROOT|")
  # shellcheck disable=SC2086
  if [ ! -f "$out" ] || [ -n "$(find $inputs "$ROOT/scripts/embed.cmake" -newer "$out" 2>/dev/null)" ]; then
    mkdir -p "$OUT/generated"
    cmake -DOUT="$out" -DINPUTS="$(echo $inputs | tr ' ' ';')" -P "$ROOT/scripts/embed.cmake"
  fi
}

object_of() { local path=${1#"$OUT"/}; path=${path#"$ROOT"/}; echo "$OUT/obj/${path//\//_}.o"; }

stale() { # SOURCE: its object is missing or older than it or a header it includes
  local obj; obj=$(object_of "$1")
  [ -f "$obj" ] && [ -f "$obj.d" ] || return 0
  local deps; deps=$(sed -e '1s/^[^:]*://' -e 's/\\$//' "$obj.d")
  # shellcheck disable=SC2086
  [ -n "$(find $deps -newer "$obj" -print -quit 2>&1)" ]
}

compile() { # SOURCE (absolute) -> its object, with the header list beside it
  local obj; obj=$(object_of "$1")
  rm -f "$obj"
  clang++-15 "${CXXFLAGS[@]}" -MMD -MF "$obj.d" -c "$1" -o "$obj" || echo "fuzz: compiling $1 failed" >&2
}

flags_changed() { # the objects were compiled with other flags: drop them
  [ "$(cat "$OUT/obj/flags" 2>/dev/null)" != "${CXXFLAGS[*]}" ] || return 0
  rm -rf "$OUT/obj" && mkdir -p "$OUT/obj" && echo "${CXXFLAGS[*]}" >"$OUT/obj/flags"
}

build() { # TARGET -> build-fuzz/TARGET
  local target=$1 files=("$ROOT/tests/fuzz/${1}_fuzz.cpp" "$ROOT/tests/fuzz/boost_assert.cpp") src objs=() pending=()
  mkdir -p "$OUT/obj" "$OUT/lib"
  flags_changed
  for src in $(sources_of "$target"); do
    case "$src" in
      generated/*) embedded_schemas; files+=("$OUT/$src") ;;
      *) files+=("$ROOT/$src") ;;
    esac
  done
  for src in "${files[@]}"; do
    objs+=("$(object_of "$src")")
    if stale "$src"; then pending+=("$src"); fi
  done
  for src in "${pending[@]}"; do  # two at a time
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
    echo "fuzz: compiling ${src#"$ROOT"/}" >&2
    compile "$src" &
  done
  wait
  for obj in "${objs[@]}"; do [ -f "$obj" ] || { echo "fuzz: $target not built" >&2; exit 1; }; done
  rm -f "$OUT/lib/$target.a"
  ar rcs "$OUT/lib/$target.a" "${objs[@]:2}"
  clang++-15 -fsanitize=fuzzer,address,undefined "${objs[@]:0:2}" "$OUT/lib/$target.a" "${LIBS[@]}" -o "$OUT/$target"
}

run() { # TARGET SECONDS
  local target=$1 seconds=$2 seeds="$ROOT/tests/fuzz/corpus/$1" corpus="$OUT/corpus/$1"
  mkdir -p "$corpus"
  build "$target"
  echo "fuzz: $target for ${seconds}s" >&2
  (cd "$OUT" && PATH="/usr/lib/llvm-15/bin:$PATH" "./$target" -max_total_time="$seconds" ${RUNS:+-runs="$RUNS"} -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$target-" -print_final_stats=1 "$corpus" "$seeds")
}

if [ "$1" = all ]; then
  for t in "${TARGETS[@]}"; do run "$t" "$2"; done
else
  sources_of "$1" >/dev/null
  run "$1" "$2"
fi
