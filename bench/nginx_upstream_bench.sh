#!/usr/bin/env bash
# serve's CPU per call against nginx answering a fixed chat.completion (not a test): the HTTP level
# of build/server_bench (32 connections x 8 pipelined through the OpenAI provider) with nginx (one
# worker, `return 200`) as the provider instead of build/fake_openai_server, at 1 and 2 io threads,
# once with nginx keeping connections open and once at nginx's default of 1,000 requests a
# connection (`keepalive_requests`), which makes serve's pool open new ones.
# With BASELINE_BUILD=DIR (another build folder with its server_bench, e.g. of an earlier commit), that
# build runs the same levels right after this one's against the same nginx, for a side-by-side figure.
#   bench/nginx_upstream_bench.sh [seconds]       (needs nginx: Debian nginx-light)
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
SECONDS_PER_LEVEL="${1:-5}"
NGINX=${NGINX:-$(command -v nginx || echo /usr/sbin/nginx)}
[ -x "$NGINX" ] || { echo "nginx not found (apt-get install nginx-light)" >&2; exit 1; }
cmake --build "$ROOT/build" -j"${JOBS:-2}" --target server_bench >&2
T=$(mktemp -d /tmp/nginx-upstream-bench.XXXXXX)
chmod 755 "$T"
NGINX_PID=""
trap '[ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ANSWER='{"id":"chatcmpl-bench","object":"chat.completion","created":1700000000,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"{\\"priority\\":2,\\"category\\":\\"bug\\",\\"summary\\":\\"Login rejects the password.\\",\\"needs_human\\":false}"},"finish_reason":"stop"}],"usage":{"prompt_tokens":60,"completion_tokens":20,"total_tokens":80}}'
for requests in 100000000 1000; do
  mkdir -p "$T/tmp"
  cat >"$T/nginx.conf" <<CONF
worker_processes 1;
pid nginx.pid;
error_log error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  keepalive_requests $requests;
  keepalive_timeout 75s;
  client_body_temp_path tmp/client_body;
  server {
    listen 127.0.0.1:$PORT backlog=4096;
    location / { default_type application/json; return 200 '$ANSWER'; }
  }
}
CONF
  "$NGINX" -p "$T/" -e "$T/error.log" -c "$T/nginx.conf" -g 'daemon off;' &
  NGINX_PID=$!
  for _ in $(seq 100); do curl -s -o /dev/null "http://127.0.0.1:$PORT/" && break; sleep 0.05; done
  echo "## nginx keepalive_requests $requests"
  for build in "$ROOT/build" ${BASELINE_BUILD:+"$BASELINE_BUILD"}; do
    echo "# $build"
    "$build/server_bench" "$SECONDS_PER_LEVEL" 0 --threads 1,2 --upstream "http://127.0.0.1:$PORT" | grep -E "serve --threads|upstream"
  done
  kill "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null || true; NGINX_PID=""
done
