#!/bin/bash
# Self-check of bedrock_fake.py and vertex_fake.py: starts each fake on
# 127.0.0.1, drives every route with curl and /usr/bin/python3 clients
# (botocore for SigV4 and event streams, python3-jwt for the JWT grant) and
# exits 0 when all checks pass.  Usage: bash fake_self_test.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PY=/usr/bin/python3
WORK="$(mktemp -d)"
PIDS=()

cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# start_fake NAME SCRIPT ARGS... : starts a fake, sets PORT and FAKE_PID
start_fake() {
  local name="$1" script="$2"; shift 2
  "$PY" "$HERE/$script" --port-file "$WORK/$name.port" --log "$WORK/$name.log" "$@" \
    2>"$WORK/$name.err" &
  FAKE_PID=$!
  PIDS+=("$FAKE_PID")
  for _ in $(seq 100); do
    [ -s "$WORK/$name.port" ] && break
    sleep 0.05
  done
  [ -s "$WORK/$name.port" ] || { cat "$WORK/$name.err" >&2; fail "$name did not start"; }
  PORT="$(cat "$WORK/$name.port")"
}

# stop_fake PID : SIGTERM must exit 0
stop_fake() {
  kill -TERM "$1"
  local rc=0
  wait "$1" || rc=$?
  [ "$rc" -eq 0 ] || fail "fake exited $rc on SIGTERM"
}

# ------------------------------------------------------------------ bedrock
start_fake bedrock bedrock_fake.py --region us-east-1 \
  --credentials AKIDSTATIC:staticsecret \
  --credentials ASIASTATIC:sessionsecret:statictoken \
  --web-identity-token web-token-123 \
  --role-arn arn:aws:iam::123456789012:role/skillrunner \
  --container-token container-secret
B="http://127.0.0.1:$PORT"

# IMDSv2 with curl
code=$(curl -s -o /dev/null -w '%{http_code}' "$B/latest/meta-data/iam/security-credentials/")
[ "$code" = 401 ] || fail "IMDS without token gave $code"
code=$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$B/latest/api/token")
[ "$code" = 400 ] || fail "IMDS token without ttl gave $code"
TOKEN=$(curl -sf -X PUT -H 'X-aws-ec2-metadata-token-ttl-seconds: 60' "$B/latest/api/token")
ROLE=$(curl -sf -H "X-aws-ec2-metadata-token: $TOKEN" "$B/latest/meta-data/iam/security-credentials/")
[ "$ROLE" = fake-role ] || fail "IMDS role is '$ROLE'"
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'X-aws-ec2-metadata-token: nope' \
  "$B/latest/meta-data/iam/security-credentials/fake-role")
[ "$code" = 401 ] || fail "IMDS with a wrong token gave $code"
curl -sf -H "X-aws-ec2-metadata-token: $TOKEN" \
  "$B/latest/meta-data/iam/security-credentials/fake-role" >"$WORK/imds.json"

# container credentials with curl
code=$(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: wrong' "$B/container-credentials")
[ "$code" = 401 ] || fail "container with a wrong token gave $code"
curl -sf -H 'Authorization: container-secret' "$B/container-credentials" >"$WORK/container.json"

"$PY" - "$B" "$WORK" <<'PYEOF'
import json, sys, time, urllib.error, urllib.parse, urllib.request
import xml.etree.ElementTree as ET
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.eventstream import ChecksumMismatch, EventStreamBuffer

BASE, WORK = sys.argv[1], sys.argv[2]
MODEL = "anthropic.claude-3-haiku-20240307-v1%3A0"
BODY = json.dumps({"messages": [{"role": "user", "content": [{"text": "hi"}]}]}).encode()


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


def http(method, url, body=None, headers=None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def control(path, payload=None):
    body = json.dumps(payload).encode() if payload is not None else None
    status, _, data = http("POST" if body is not None else "GET", BASE + path, body)
    check(status == 200, f"control {path} gave {status}")
    return json.loads(data)


def signed(route, creds, body=BODY, region="us-east-1", service="bedrock", tamper=False):
    url = f"{BASE}/model/{MODEL}/{route}"
    req = AWSRequest("POST", url, data=body, headers={"Content-Type": "application/json"})
    SigV4Auth(Credentials(*creds), service, region).add_auth(req)
    headers = dict(req.headers.items())
    if tamper:
        headers["Authorization"] = headers["Authorization"][:-4] + "0000"
    return http("POST", url, body, headers)


def error_type(headers):
    return {k.lower(): v for k, v in headers.items()}.get("x-amzn-errortype")


def parse_events(data):
    buf = EventStreamBuffer()
    buf.add_data(data)
    return [(m.headers.get(":message-type"), m.headers.get(":event-type")
             or m.headers.get(":exception-type"), json.loads(m.payload)) for m in buf]


STATIC = ("AKIDSTATIC", "staticsecret")

# converse, signed by botocore
status, headers, data = signed("converse", STATIC)
check(status == 200, f"signed converse gave {status} {data!r}")
out = json.loads(data)
check(out["output"]["message"]["content"][0]["text"] == '{"ok":true}', "converse body")
check("x-amzn-requestid" in {k.lower() for k in headers}, "x-amzn-RequestId header")

# refusals
status, headers, _ = signed("converse", STATIC, tamper=True)
check(status == 403 and error_type(headers) == "InvalidSignatureException", "tampered signature")
status, headers, _ = signed("converse", ("AKIDNOPE", "x"))
check(status == 403 and error_type(headers) == "UnrecognizedClientException", "unknown key")
status, headers, _ = signed("converse", STATIC, region="eu-west-1")
check(status == 403 and error_type(headers) == "InvalidSignatureException", "wrong region")
status, headers, _ = signed("converse", STATIC, service="s3")
check(status == 403 and error_type(headers) == "InvalidSignatureException", "wrong service")
status, headers, data = http("POST", f"{BASE}/model/{MODEL}/converse", BODY)
check(status == 403 and error_type(headers) == "MissingAuthenticationTokenException", "no auth")
check(json.loads(data)["message"] == "Missing Authentication Token", "no-auth message")
status, headers, _ = signed("converse", ("ASIASTATIC", "sessionsecret"))
check(status == 403 and error_type(headers) == "InvalidSignatureException", "missing token")
status, _, _ = signed("converse", ("ASIASTATIC", "sessionsecret", "statictoken"))
check(status == 200, "static session credentials")

# an old x-amz-date, properly signed for that time
url = f"{BASE}/model/{MODEL}/converse"
req = AWSRequest("POST", url, data=BODY, headers={"Content-Type": "application/json"})
auth = SigV4Auth(Credentials(*STATIC), "bedrock", "us-east-1")
stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(time.time() - 600))
req.context["timestamp"] = stamp
req.headers["X-Amz-Date"] = stamp
canonical = auth.canonical_request(req)
sig = auth.signature(auth.string_to_sign(req, canonical), req)
hdrs = dict(req.headers.items())
hdrs["Authorization"] = (f"AWS4-HMAC-SHA256 Credential={auth.scope(req)}, "
                         f"SignedHeaders={auth.signed_headers(auth.headers_to_sign(req))}, "
                         f"Signature={sig}")
status, headers, data = http("POST", url, BODY, hdrs)
check(status == 403 and b"Signature expired" in data, f"stale date gave {status} {data!r}")

log = [e for e in control("/_fake/requests") if e["route"] == "converse"]
check(log[0]["route"] == "converse" and log[0]["auth"] == "ok", "log of signed converse")
check(log[0]["model"] == "anthropic.claude-3-haiku-20240307-v1:0", "decoded model id")
check(log[0]["body"]["messages"][0]["role"] == "user", "logged body is JSON")
check("canonical_request" in log[1] and log[1]["auth"] == "signature mismatch", "mismatch log")

# scripted errors and delays
control("/_fake/enqueue", {"route": "converse", "responses": [
    {"status": 429, "error_type": "ThrottlingException", "message": "slow down"},
    {"status": 200, "body": {"custom": 1}, "delay_ms": 200},
    {"raw": "<html>bad gateway</html>", "status": 502, "content_type": "text/html"}]})
status, headers, data = signed("converse", STATIC)
check(status == 429 and error_type(headers) == "ThrottlingException", "scripted throttle")
check(json.loads(data) == {"message": "slow down"}, "throttle body")
started = time.time()
status, _, data = signed("converse", STATIC)
check(status == 200 and json.loads(data) == {"custom": 1}, "scripted body")
check(time.time() - started >= 0.2, "delay_ms")
status, headers, data = signed("converse", STATIC)
check(status == 502 and data == b"<html>bad gateway</html>", "scripted raw")
status, _, _ = signed("converse", STATIC)
check(status == 200, "default after the script")

# default converse-stream, parsed by botocore
status, headers, data = signed("converse-stream", STATIC)
check(status == 200, f"converse-stream gave {status}")
check(headers["Content-Type"] == "application/vnd.amazon.eventstream", "stream content type")
events = parse_events(data)
names = [e[1] for e in events]
check(names == ["messageStart", "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
                "messageStop", "metadata"], f"stream events {names}")
text = "".join(e[2]["delta"]["text"] for e in events if e[1] == "contentBlockDelta")
check(text == '{"ok":true}', "stream text")
check(events[4][2] == {"stopReason": "end_turn"}, "messageStop payload")

# scripted stream: exception frame, split writes, corrupt CRC
control("/_fake/enqueue", {"route": "converse-stream", "responses": [
    {"split_every": 7, "events": [
        {"type": "messageStart", "payload": {"role": "assistant"}},
        {"exception": "ThrottlingException", "payload": {"message": "mid-stream"}}]},
    {"events": [{"type": "messageStart", "payload": {"role": "assistant"}, "corrupt_crc": True}]}]})
status, _, data = signed("converse-stream", STATIC)
events = parse_events(data)
check(events[1] == ("exception", "ThrottlingException", {"message": "mid-stream"}), "exception")
status, _, data = signed("converse-stream", STATIC)
try:
    parse_events(data)
    check(False, "corrupt CRC was accepted")
except ChecksumMismatch:
    pass

# STS web identity, then the issued credentials
form = urllib.parse.urlencode({
    "Action": "AssumeRoleWithWebIdentity", "Version": "2011-06-15",
    "RoleArn": "arn:aws:iam::123456789012:role/skillrunner",
    "RoleSessionName": "test", "WebIdentityToken": "web-token-123"}).encode()
form_type = {"Content-Type": "application/x-www-form-urlencoded"}
status, _, data = http("POST", BASE + "/", form, form_type)
check(status == 200, f"STS gave {status} {data!r}")
ns = {"s": "https://sts.amazonaws.com/doc/2011-06-15/"}
c = ET.fromstring(data).find("s:AssumeRoleWithWebIdentityResult/s:Credentials", ns)
sts_creds = tuple(c.find("s:" + n, ns).text for n in ("AccessKeyId", "SecretAccessKey", "SessionToken"))
check(sts_creds[0].startswith("ASIA") and c.find("s:Expiration", ns).text.endswith("Z"), "STS creds")
status, _, _ = signed("converse", sts_creds)
check(status == 200, "converse with STS credentials")
status, headers, _ = signed("converse", sts_creds[:2] + ("wrong",))
check(status == 403 and error_type(headers) == "InvalidSignatureException", "wrong session token")
status, _, data = http("POST", BASE + "/", form.replace(b"web-token-123", b"nope"), form_type)
check(status == 400 and b"<Code>InvalidIdentityToken</Code>" in data, "STS wrong token")
status, _, data = http("GET", BASE + "/?" + form.decode().replace("skillrunner", "other"))
check(status == 403 and b"<Code>AccessDenied</Code>" in data, "STS wrong role")
control("/_fake/enqueue", {"route": "sts", "responses": [{"status": 503, "raw": "down"}]})
status, _, data = http("POST", BASE + "/", form, form_type)
check(status == 503 and data == b"down", "scripted STS")

# IMDS and container credentials (fetched with curl) sign requests too
for name in ("imds.json", "container.json"):
    with open(f"{WORK}/{name}") as f:
        got = json.load(f)
    status, _, _ = signed("converse", (got["AccessKeyId"], got["SecretAccessKey"], got["Token"]))
    check(status == 200, f"converse with {name} credentials")

# expiry of issued credentials
control("/_fake/config", {"credential_lifetime_s": 1})
status, _, data = http("POST", BASE + "/", form, form_type)
c = ET.fromstring(data).find("s:AssumeRoleWithWebIdentityResult/s:Credentials", ns)
short = tuple(c.find("s:" + n, ns).text for n in ("AccessKeyId", "SecretAccessKey", "SessionToken"))
time.sleep(1.2)
status, headers, _ = signed("converse", short)
check(status == 403 and error_type(headers) == "UnrecognizedClientException", "expired creds")

routes = {e["route"] for e in control("/_fake/requests")}
check({"converse", "converse-stream", "sts", "imds-token", "imds-role", "imds-creds",
       "container"} <= routes, f"routes logged: {routes}")
control("/_fake/reset", {})
check(control("/_fake/requests") == [], "reset")
print("bedrock fake: ok")
PYEOF

[ "$(wc -l <"$WORK/bedrock.log")" -eq 0 ] || fail "log file not cleared by reset"
stop_fake "$FAKE_PID"

# ------------------------------------------------------------------- vertex
openssl genrsa -out "$WORK/sa.pem" 2048 2>/dev/null
openssl rsa -in "$WORK/sa.pem" -pubout -out "$WORK/sa.pub" 2>/dev/null
openssl genrsa -out "$WORK/other.pem" 2048 2>/dev/null
EMAIL=fake-sa@proj-1.iam.gserviceaccount.com
start_fake vertex vertex_fake.py --public-key "$WORK/sa.pub" --client-email "$EMAIL" \
  --project proj-1 --location us-central1
V="http://127.0.0.1:$PORT"

# metadata server with curl
code=$(curl -s -o /dev/null -w '%{http_code}' "$V/computeMetadata/v1/instance/service-accounts/default/token")
[ "$code" = 403 ] || fail "metadata without flavor gave $code"
curl -sf -H 'Metadata-Flavor: Google' "$V/" >/dev/null || fail "metadata health check"
[ "$(curl -sf -H 'Metadata-Flavor: Google' "$V/computeMetadata/v1/project/project-id")" = proj-1 ] \
  || fail "metadata project id"
curl -sf -H 'Metadata-Flavor: Google' \
  "$V/computeMetadata/v1/instance/service-accounts/default/token" >"$WORK/md.json"

"$PY" - "$V" "$WORK" "$EMAIL" <<'PYEOF'
import json, sys, time, urllib.error, urllib.parse, urllib.request
import jwt

BASE, WORK, EMAIL = sys.argv[1:4]
SCOPE = "https://www.googleapis.com/auth/cloud-platform"
PREFIX = f"{BASE}/v1/projects/proj-1/locations/us-central1/publishers"


def check(cond, what):
    if not cond:
        raise SystemExit("FAIL: " + what)


def http(method, url, body=None, headers=None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def control(path, payload=None):
    body = json.dumps(payload).encode() if payload is not None else None
    status, _, data = http("POST" if body is not None else "GET", BASE + path, body)
    check(status == 200, f"control {path} gave {status}")
    return json.loads(data)


def assertion(key="sa.pem", alg="RS256", **claims):
    now = int(time.time())
    body = {"iss": EMAIL, "scope": SCOPE, "aud": BASE + "/token", "iat": now, "exp": now + 3600}
    body.update(claims)
    with open(f"{WORK}/{key}") as f:
        pem = f.read()
    secret = pem if alg == "RS256" else "shared"
    return jwt.encode(body, secret, algorithm=alg, headers={"kid": "k1"})


def grant(jwt_text):
    form = urllib.parse.urlencode({"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
                                   "assertion": jwt_text}).encode()
    status, _, data = http("POST", BASE + "/token", form,
                           {"Content-Type": "application/x-www-form-urlencoded"})
    return status, json.loads(data)


def vertex(path, token, body, query=""):
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = "Bearer " + token
    return http("POST", PREFIX + path + query, json.dumps(body).encode(), headers)


status, out = grant(assertion())
check(status == 200 and out["access_token"].startswith("ya29.") and out["expires_in"] == 3599
      and out["token_type"] == "Bearer", f"token grant {status} {out}")
TOKEN = out["access_token"]

bad = {"other key": assertion(key="other.pem"), "HS256": assertion(alg="HS256"),
       "wrong iss": assertion(iss="x@y"), "wrong aud": assertion(aud="https://oauth2.googleapis.com/token"),
       "no scope": assertion(scope="email"), "old iat": assertion(iat=int(time.time()) - 4000),
       "too long": assertion(exp=int(time.time()) + 7200)}
for what, text in bad.items():
    status, out = grant(text)
    check(status == 400 and out["error"] == "invalid_grant", f"{what}: {status} {out}")

GEN = {"contents": [{"role": "user", "parts": [{"text": "hi"}]}]}
status, _, data = vertex("/google/models/gemini-2.0-flash:generateContent", TOKEN, GEN)
out = json.loads(data)
check(status == 200 and out["candidates"][0]["content"]["parts"][0]["text"] == '{"ok":true}'
      and out["modelVersion"] == "gemini-2.0-flash", f"generateContent {status} {out}")

with open(f"{WORK}/md.json") as f:
    md_token = json.load(f)["access_token"]
status, _, _ = vertex("/google/models/gemini-2.0-flash:generateContent", md_token, GEN)
check(status == 200, "metadata token works on Vertex")

status, headers, data = vertex("/google/models/gemini-2.0-flash:streamGenerateContent", TOKEN, GEN,
                               "?alt=sse")
check(status == 200 and headers["Content-Type"].startswith("text/event-stream"), "stream type")
chunks = [json.loads(c[len("data: "):]) for c in data.decode().split("\r\n\r\n") if c]
text = "".join(c["candidates"][0]["content"]["parts"][0]["text"] for c in chunks)
check(text == '{"ok":true}' and chunks[-1]["candidates"][0]["finishReason"] == "STOP", "SSE text")
status, _, _ = vertex("/google/models/gemini-2.0-flash:streamGenerateContent", TOKEN, GEN)
check(status == 400, "stream without alt=sse")

MSG = {"anthropic_version": "vertex-2023-10-16", "max_tokens": 64,
       "messages": [{"role": "user", "content": "hi"}]}
model = "claude-3-5-haiku@20241022"
status, _, data = vertex(f"/anthropic/models/{model}:rawPredict", TOKEN, MSG)
out = json.loads(data)
check(status == 200 and out["content"][0]["text"] == '{"ok":true}' and out["model"] == model,
      f"rawPredict {status} {out}")
status, _, data = vertex(f"/anthropic/models/{model}:rawPredict", TOKEN, dict(MSG, model=model))
check(status == 400 and json.loads(data)["error"]["status"] == "INVALID_ARGUMENT", "model in body")
status, _, _ = vertex(f"/anthropic/models/{model}:rawPredict", TOKEN,
                      dict(MSG, anthropic_version="2023-06-01"))
check(status == 400, "wrong anthropic_version")
status, _, data = vertex(f"/anthropic/models/{model}:streamRawPredict", TOKEN, dict(MSG, stream=True))
events = [b.split("\n")[0][len("event: "):] for b in data.decode().split("\n\n") if b]
check(status == 200 and events[0] == "message_start" and events[-1] == "message_stop"
      and "message_delta" in events, f"streamRawPredict events {events}")

status, _, data = vertex("/google/models/gemini-2.0-flash:generateContent", "ya29.unknown", GEN)
err = json.loads(data)["error"]
check(status == 401 and err["status"] == "UNAUTHENTICATED" and err["code"] == 401, "unknown token")
status, _, _ = vertex("/google/models/gemini-2.0-flash:generateContent", None, GEN)
check(status == 401, "no token")
status, _, data = http("POST", f"{BASE}/v1/projects/other/locations/us-central1/publishers/google/"
                       "models/gemini-2.0-flash:generateContent", json.dumps(GEN).encode(),
                       {"Authorization": "Bearer " + TOKEN})
check(status == 404 and json.loads(data)["error"]["status"] == "NOT_FOUND", "wrong project")

control("/_fake/enqueue", {"route": "generateContent", "responses": [
    {"status": 429, "body": {"error": {"code": 429, "message": "Resource exhausted",
                                       "status": "RESOURCE_EXHAUSTED"}}}]})
status, _, data = vertex("/google/models/gemini-2.0-flash:generateContent", TOKEN, GEN)
check(status == 429 and json.loads(data)["error"]["status"] == "RESOURCE_EXHAUSTED", "scripted 429")
control("/_fake/enqueue", {"route": "streamRawPredict", "responses": [
    {"split_every": 5, "sse": ["event: message_start\ndata: {}\n\n", {"delay_ms": 50},
                               "event: message_stop\ndata: {}\n\n"]}]})
status, _, data = vertex(f"/anthropic/models/{model}:streamRawPredict", TOKEN, MSG)
check(data == b"event: message_start\ndata: {}\n\nevent: message_stop\ndata: {}\n\n", "scripted SSE")

control("/_fake/config", {"token_lifetime_s": 1})
status, out = grant(assertion())
time.sleep(1.2)
status, _, _ = vertex("/google/models/gemini-2.0-flash:generateContent", out["access_token"], GEN)
check(status == 401, "expired token")

log = control("/_fake/requests")
routes = {e["route"] for e in log}
check({"token", "metadata-token", "metadata-root", "metadata-project", "generateContent",
       "streamGenerateContent", "rawPredict", "streamRawPredict"} <= routes, f"routes {routes}")
check(any(e["auth"] == "unknown or expired access token" for e in log), "refusal logged")
print("vertex fake: ok")
PYEOF

[ "$(wc -l <"$WORK/vertex.log")" -gt 10 ] || fail "vertex log file too short"
stop_fake "$FAKE_PID"
echo "fake self-test: all ok"
