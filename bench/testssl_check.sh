#!/usr/bin/env bash
# Debian's testssl.sh against `serve --tls-cert` (design: TLS on every listener). Outside CI: a full
# run takes about a minute. Certificates come from `openssl req` here, the server's with a CRL
# distribution point (what testssl asks a certificate to name), the CA passed with --add-ca.
# Exit 0 when testssl finds nothing "NOT ok"; its findings go to $OUT (default: a temp file).
#   bench/testssl_check.sh [path/to/skillrunner]
set -euo pipefail
BIN="${1:-build/skillrunner}"
command -v testssl >/dev/null || { echo "testssl_check: apt-get install testssl.sh" >&2; exit 2; }
DIR="$(mktemp -d)"
trap 'kill "${SERVE:-0}" 2>/dev/null || true; rm -rf "$DIR"' EXIT
cd "$DIR"
openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -subj "/CN=testssl check CA" -days 2 2>/dev/null
openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr -subj "/CN=localhost" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\ncrlDistributionPoints=URI:http://crl.example/ca.crl\n' > ext
openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out server.pem -days 2 -extfile ext 2>/dev/null
printf 'providers:\n  sim: { kind: simulated }\ndefault_provider: sim\n' > skillrunner.yaml
mkdir -p skills rubrics
cd - >/dev/null
"$BIN" serve --config "$DIR/skillrunner.yaml" --skills "$DIR/skills" --rubrics "$DIR/rubrics" --listen 127.0.0.1:0 \
  --tls-cert "$DIR/server.pem" --tls-key "$DIR/server.key" 2> "$DIR/serve.err" &
SERVE=$!
for _ in $(seq 100); do grep -q "port [0-9]*" "$DIR/serve.err" 2>/dev/null && break; sleep 0.1; done
PORT="$(sed -n 's/.*(port \([0-9]*\)).*/\1/p' "$DIR/serve.err" | head -1)"
OUT="${OUT:-$DIR/testssl.txt}"
testssl --quiet --color 0 --warnings off --add-ca "$DIR/ca.pem" "127.0.0.1:$PORT" > "$OUT" 2>&1 || true
sed -n '/Testing protocols/,/Testing cipher categories/p' "$OUT"
if grep -n "NOT ok" "$OUT"; then echo "testssl_check: findings above" >&2; exit 1; fi
echo "testssl_check: nothing NOT ok"
