#!/usr/bin/env bash
# Builds llama.cpp's `llama-server` and a tiny random-weight model for the llama-server test suite
# (tests/integration/llama_server_test.cpp), which then runs instead of skipping. Idempotent.
#   usage: scripts/realllm/setup.sh [DIR]     (default: .deps/realllm; ~450 MB; 4-8 minutes on 2 cores)
# Source: llama.cpp at commit de3ff81, taken from the git bundle that the node-llama-cpp npm package
# (version below) carries, so one `npm pack` is the only download. The model is written by
# tiny_model.py with llama.cpp's own gguf-py and the Qwen2 tokenizer llama.cpp ships.
# Installs what it needs with apt when missing: git cmake ninja-build g++ npm python3-numpy.
# Prints DIR/bin/llama-server and DIR/tiny-qwen2vocab-llama.gguf.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
DIR=$(mkdir -p "${1:-.deps/realllm}" && cd "${1:-.deps/realllm}" && pwd)
NODE_LLAMA_CPP=3.22.1
PY=/usr/bin/python3; [ -x "$PY" ] || PY=python3

missing=()
for tool in git cmake ninja g++ npm; do
  command -v "$tool" >/dev/null || missing+=("$([ "$tool" = ninja ] && echo ninja-build || echo "$tool")")
done
"$PY" -c "import numpy" 2>/dev/null || missing+=(python3-numpy)
if [ ${#missing[@]} -gt 0 ]; then
  as_root=""; [ "$(id -u)" -ne 0 ] && as_root=sudo
  $as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [ ! -x "$DIR/bin/llama-server" ]; then
  cd "$DIR"
  if [ ! -d llama.cpp ]; then
    [ -f "node-llama-cpp-$NODE_LLAMA_CPP.tgz" ] || npm pack -q "node-llama-cpp@$NODE_LLAMA_CPP" >/dev/null
    tar xzf "node-llama-cpp-$NODE_LLAMA_CPP.tgz" package/llama/gitRelease.bundle
    git clone -q package/llama/gitRelease.bundle llama.cpp
  fi
  # No web UI (its build would download it), no OpenSSL, no examples or tests: the server alone.
  cmake -S llama.cpp -B llama.cpp/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_OPENSSL=OFF -DGGML_NATIVE=ON >/dev/null
  ninja -C llama.cpp/build -j"${JOBS:-$(nproc)}" llama-server >/dev/null
  mkdir -p bin
  cp llama.cpp/build/bin/llama-server bin/
fi

if [ ! -f "$DIR/tiny-qwen2vocab-llama.gguf" ]; then
  PYTHONPATH="$DIR/llama.cpp/gguf-py" "$PY" "$HERE/tiny_model.py" \
    "$DIR/llama.cpp/models/ggml-vocab-qwen2.gguf" "$DIR/tiny-qwen2vocab-llama.gguf"
fi
echo "$DIR/bin/llama-server"
echo "$DIR/tiny-qwen2vocab-llama.gguf"
