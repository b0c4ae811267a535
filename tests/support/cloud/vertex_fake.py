#!/usr/bin/python3
"""Fake Google OAuth2 token endpoint, GCE metadata server and Vertex AI.

Runs on 127.0.0.1 only, with /usr/bin/python3 (3.11) and Debian's
python3-jwt / python3-cryptography.  Every request is checked the way Google
checks it; a failed check is answered in Google's own wire format.

Command line
  --port-file PATH     bind 127.0.0.1:0, write "PORT\\n" to PATH.tmp, rename
  --log PATH           append one JSON line per request (flushed each line)
  --public-key PEM     the service account's RSA public key (or certificate)
  --client-email EMAIL the service account (the JWT's iss)
  --project P --location L   what the Vertex paths must name

Routes (log "route" name in brackets)
  POST /token  grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer
               &assertion=JWT                                      [token]
      RS256 only, signature against --public-key, iss == --client-email,
      aud == http://<Host header><path>, scope has .../auth/cloud-platform,
      |iat - now| <= 300 s, exp > now, iat < exp <= iat + 3600.
      Refused: 400 {"error":"invalid_grant","error_description":"..."}
      (wrong grant_type: unsupported_grant_type; no assertion: invalid_request)
  GET /computeMetadata/v1/instance/service-accounts/default/token [metadata-token]
  GET /computeMetadata/v1/instance/service-accounts/default/email [metadata-email]
  GET /computeMetadata/v1/project/project-id                      [metadata-project]
  GET /                                                           [metadata-root]
      all need "Metadata-Flavor: Google" (else 403 text); answers carry it.
  POST /v1/projects/P/locations/L/publishers/google/models/M:generateContent
                                                          [generateContent]
  POST ...:streamGenerateContent?alt=sse                  [streamGenerateContent]
  POST /v1/projects/P/locations/L/publishers/anthropic/models/M:rawPredict
                                                          [rawPredict]
  POST ...:streamRawPredict                               [streamRawPredict]
      need "Authorization: Bearer <token issued here, unexpired>" (else 401
      UNAUTHENTICATED); wrong project/location: 404 NOT_FOUND; a body that
      is not a JSON object, generateContent without contents, rawPredict with
      "model" or without anthropic_version "vertex-2023-10-16", or a stream
      without alt=sse: 400 INVALID_ARGUMENT.  (v1beta1 paths work too.)
  anything else: 404 NOT_FOUND                            [unknown]

Control endpoints (no auth, not logged)
  POST /_fake/enqueue {"route": NAME, "responses": [RESP, ...]}  FIFO script
  GET  /_fake/requests                      logged requests, as a JSON array
  POST /_fake/reset                         clear scripts, log and log file
  POST /_fake/config {"token_lifetime_s": N}       merge settings

A scripted RESP replaces the default success answer of a request that passed
its checks (a refused request does not consume it):
  {"status": 200, "body": {...}}                     JSON
  {"status": 429, "error_type": "RESOURCE_EXHAUSTED", "message": "..."}
        (Google RPC error {"error":{"code","message","status"}})
  {"raw": "text", "status": N, "content_type": "..."}
  {"sse": [CHUNK, ...], "split_every": N}             event stream
and any of them may add "delay_ms": N and "headers": {...}.  CHUNK is a
string sent as is with a flush, {"delay_ms": N} (pause) or
{"disconnect": true} (drop the connection, no final chunk).  Streams use
chunked transfer encoding; split_every N writes N-byte pieces 5 ms apart.

Each log line: method, path, query (raw), headers (lowercase names), body
(JSON when it parses, else text), route, auth ("ok" or the refusal reason),
plus "model", "project", "location", "publisher" on Vertex routes.
SIGTERM exits 0.
"""

import argparse
import json
import re
import secrets
import string
import threading
import time
from urllib.parse import parse_qs, parse_qsl, unquote

import jwt
from cryptography import x509
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from fake_http import DISCONNECT, Journal, Reply, json_resp, serve, text_resp  # beside this file

ROUTES = ("token", "metadata-token", "metadata-email", "metadata-project",
          "metadata-root", "generateContent", "streamGenerateContent",
          "rawPredict", "streamRawPredict")
VERTEX_PATH = re.compile(r"^/(v1|v1beta1)/projects/([^/]+)/locations/([^/]+)"
                         r"/publishers/([^/]+)/models/([^/:]+):([A-Za-z]+)$")
METHODS = {"google": ("generateContent", "streamGenerateContent"),
           "anthropic": ("rawPredict", "streamRawPredict")}
JWT_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer"
CLOUD_PLATFORM = "https://www.googleapis.com/auth/cloud-platform"
ANTHROPIC_VERSION = "vertex-2023-10-16"
MAX_IAT_SKEW_S = 300
MAX_JWT_LIFETIME_S = 3600
SA_PATH = "/computeMetadata/v1/instance/service-accounts/default/"
FLAVOR = {"Metadata-Flavor": "Google"}
JSON_TYPE = "application/json; charset=UTF-8"
SHORT_LIVED = ("Invalid JWT: Token must be a short-lived token (60 minutes) and in "
               "a reasonable timeframe. Check your iat and exp values in the JWT claim.")
UNAUTHENTICATED = ("Request had invalid authentication credentials. Expected OAuth 2 "
                   "access token, login cookie or other valid authentication credential.")


# ---------------------------------------------------------------- helpers

def random_text(length, alphabet=string.ascii_letters + string.digits + "-_"):
    return "".join(secrets.choice(alphabet) for _ in range(length))


def load_public_key(path):
    with open(path, "rb") as pem:
        data = pem.read()
    if b"BEGIN CERTIFICATE" in data:
        return x509.load_pem_x509_certificate(data).public_key()
    return load_pem_public_key(data)


# --------------------------------------------------- journal and requests


# ------------------------------------------------------------ wire replies


def rpc_error(code, status, message, headers=None):
    return {"status": code, "error_type": status, "message": message,
            "headers": headers or {}}


def oauth_error(error, description):
    return json_resp(400, {"error": error, "error_description": description})


def sse_items(chunks):
    items = []
    for chunk in chunks:
        if isinstance(chunk, str):
            items.append(chunk.encode())
        elif chunk.get("disconnect"):
            items.append(DISCONNECT)
        elif chunk.get("delay_ms"):
            items.append(chunk["delay_ms"] / 1000.0)
    return items


def render(resp):
    """Turn a RESP dict (scripted or built in) into a Reply."""
    status = resp.get("status", 200)
    if "sse" in resp:
        reply = Reply(status, "text/event-stream")
        reply.stream = sse_items(resp["sse"])
        reply.split_every = int(resp.get("split_every", 0))
    elif "raw" in resp:
        reply = Reply(status, resp.get("content_type", "text/plain"),
                      resp["raw"].encode())
    elif "error_type" in resp:
        error = {"code": status, "message": resp.get("message", ""),
                 "status": resp["error_type"]}
        reply = Reply(status, JSON_TYPE, json.dumps({"error": error}).encode())
    else:
        reply = Reply(status, JSON_TYPE, json.dumps(resp.get("body", {})).encode())
    reply.headers.update(resp.get("headers", {}))
    reply.delay_s = resp.get("delay_ms", 0) / 1000.0
    return reply


# ------------------------------------------------------------ default answers

def default_generate(model):
    return json_resp(200, {
        "candidates": [{"content": {"role": "model", "parts": [{"text": '{"ok":true}'}]},
                        "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                          "totalTokenCount": 15},
        "modelVersion": model})


def default_stream_generate(model):
    first = {"candidates": [{"content": {"role": "model", "parts": [{"text": '{"ok":'}]}}],
             "modelVersion": model}
    last = {"candidates": [{"content": {"role": "model", "parts": [{"text": "true}"}]},
                            "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5,
                              "totalTokenCount": 15},
            "modelVersion": model}
    return {"sse": [f"data: {json.dumps(c)}\r\n\r\n" for c in (first, last)]}


def default_raw_predict(model):
    return json_resp(200, {
        "id": "msg_fake", "type": "message", "role": "assistant", "model": model,
        "content": [{"type": "text", "text": '{"ok":true}'}],
        "stop_reason": "end_turn", "usage": {"input_tokens": 10, "output_tokens": 5}})


def anthropic_event(name, data):
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def default_stream_raw_predict(model):
    message = {"id": "msg_fake", "type": "message", "role": "assistant",
               "model": model, "content": [], "stop_reason": None,
               "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
    delta = lambda text: {"type": "content_block_delta", "index": 0,  # noqa: E731
                          "delta": {"type": "text_delta", "text": text}}
    events = [
        ("message_start", {"type": "message_start", "message": message}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "text", "text": ""}}),
        ("ping", {"type": "ping"}),
        ("content_block_delta", delta('{"ok":')),
        ("content_block_delta", delta("true}")),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                           "usage": {"output_tokens": 5}}),
        ("message_stop", {"type": "message_stop"})]
    return {"sse": [anthropic_event(name, data) for name, data in events]}


DEFAULTS = {"generateContent": default_generate,
            "streamGenerateContent": default_stream_generate,
            "rawPredict": default_raw_predict,
            "streamRawPredict": default_stream_raw_predict}


# ------------------------------------------------------------ the service

class TokenStore:
    """Access tokens issued by the token endpoint or metadata server."""

    def __init__(self, config):
        self.lock = threading.Lock()
        self.config = config
        self.tokens = {}

    def issue(self):
        lifetime = int(self.config["token_lifetime_s"])
        token = "ya29." + random_text(120)
        with self.lock:
            self.tokens[token] = time.time() + lifetime
        return {"access_token": token, "expires_in": lifetime, "token_type": "Bearer"}

    def valid(self, token):
        with self.lock:
            expires = self.tokens.get(token)
        return expires is not None and expires > time.time()


class VertexApp:
    """Routes requests, applies the cloud's checks, picks the answer."""

    def __init__(self, args):
        self.args = args
        self.config = {"token_lifetime_s": 3599}
        self.journal = Journal(args.log)
        self.tokens = TokenStore(self.config)
        self.public_key = load_public_key(args.public_key) if args.public_key else None

    def handle(self, req):
        route, fn = self.match(req)
        auth, resp = fn(route, req)
        self.journal.record(req.log_entry(route, auth))
        return render(resp)

    def match(self, req):
        path, method = unquote(req.raw_path), req.method
        found = VERTEX_PATH.match(path)
        if found and method == "POST":
            _, project, location, publisher, model, verb = found.groups()
            req.extra.update(project=project, location=location,
                             publisher=publisher, model=model)
            if verb in METHODS.get(publisher, ()):
                return verb, self.vertex
        table = {("POST", "/token"): ("token", self.token),
                 ("GET", "/"): ("metadata-root", self.metadata),
                 ("GET", SA_PATH + "token"): ("metadata-token", self.metadata),
                 ("GET", SA_PATH + "email"): ("metadata-email", self.metadata),
                 ("GET", "/computeMetadata/v1/project/project-id"):
                     ("metadata-project", self.metadata)}
        return table.get((method, path), ("unknown", self.unknown))

    def scripted_or(self, route, make_default):
        """The next scripted RESP for route, else make_default()."""
        scripted = self.journal.pop(route)
        return scripted if scripted is not None else make_default()

    def unknown(self, route, req):
        return "ok", rpc_error(404, "NOT_FOUND",
                               f"The requested URL {req.raw_path} was not found "
                               "on this server.")

    # -- OAuth2 token endpoint

    def token(self, route, req):
        form = dict(parse_qsl(req.body.decode("utf-8", errors="replace")))
        if form.get("grant_type") != JWT_GRANT:
            return "unsupported grant_type", oauth_error(
                "unsupported_grant_type", f"Invalid grant_type: {form.get('grant_type', '')}")
        if not form.get("assertion"):
            return "missing assertion", oauth_error(
                "invalid_request", "Missing required parameter: assertion")
        audience = "http://" + req.headers.get("host", "") + req.raw_path
        problem = self.jwt_problem(form["assertion"], audience)
        if problem:
            return problem, oauth_error("invalid_grant", problem)
        return "ok", self.scripted_or(route, lambda: json_resp(200, self.tokens.issue()))

    def jwt_problem(self, assertion, audience):
        """Return why Google would refuse the assertion, or None."""
        try:
            header = jwt.get_unverified_header(assertion)
        except jwt.PyJWTError as error:
            return f"Invalid JWT: {error}"
        if header.get("alg") != "RS256":
            return f"Invalid JWT: alg must be RS256, not {header.get('alg')!r}"
        if self.public_key is None:
            return "Invalid JWT Signature."
        try:
            claims = jwt.decode(assertion, self.public_key, algorithms=["RS256"],
                                options={"verify_exp": False, "verify_iat": False,
                                         "verify_nbf": False, "verify_aud": False,
                                         "verify_iss": False})
        except jwt.InvalidSignatureError:
            return "Invalid JWT Signature."
        except jwt.PyJWTError as error:
            return f"Invalid JWT: {error}"
        return self.claims_problem(claims, audience)

    def claims_problem(self, claims, audience):
        if claims.get("iss") != self.args.client_email:
            return "Invalid grant: account not found"
        if claims.get("aud") != audience:
            return f"Invalid JWT: Failed audience check. The right audience is {audience}"
        if CLOUD_PLATFORM not in str(claims.get("scope", "")).split():
            return "Invalid OAuth scope or ID token audience provided."
        iat, exp, now = claims.get("iat"), claims.get("exp"), time.time()
        if not all(isinstance(v, (int, float)) for v in (iat, exp)):
            return SHORT_LIVED
        if abs(now - iat) > MAX_IAT_SKEW_S or exp <= now:
            return SHORT_LIVED
        if exp <= iat or exp - iat > MAX_JWT_LIFETIME_S:
            return SHORT_LIVED
        return None

    # -- GCE metadata server

    def metadata(self, route, req):
        if req.headers.get("metadata-flavor") != "Google":
            return "missing Metadata-Flavor: Google", text_resp(
                403, "Missing required header \"Metadata-Flavor\": \"Google\"\n",
                "text/html; charset=UTF-8", FLAVOR)
        if "x-forwarded-for" in req.headers:
            return "X-Forwarded-For present", text_resp(403, "Forbidden\n", headers=FLAVOR)
        defaults = {"metadata-root": lambda: text_resp(200, "computeMetadata/\n"),
                    "metadata-project": lambda: text_resp(200, self.args.project or ""),
                    "metadata-email": lambda: text_resp(200, self.args.client_email or ""),
                    "metadata-token": lambda: json_resp(200, self.tokens.issue())}
        resp = dict(self.scripted_or(route, defaults[route]))
        resp["headers"] = dict(FLAVOR, **resp.get("headers", {}))
        return "ok", resp

    # -- Vertex AI

    def vertex(self, route, req):
        refusal = self.bearer_refusal(req)
        if refusal:
            return refusal, rpc_error(401, "UNAUTHENTICATED", UNAUTHENTICATED, {
                "WWW-Authenticate": 'Bearer realm="https://accounts.google.com/"'})
        problem = self.location_problem(req) or self.body_problem(route, req)
        if problem:
            return "ok", problem
        model = req.extra["model"]
        return "ok", self.scripted_or(route, lambda: DEFAULTS[route](model))

    def bearer_refusal(self, req):
        scheme, _, token = req.headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return "missing Bearer token"
        if not self.tokens.valid(token.strip()):
            return "unknown or expired access token"
        return None

    def location_problem(self, req):
        extra = req.extra
        if extra["project"] != self.args.project:
            return rpc_error(404, "NOT_FOUND", f"Project `{extra['project']}` not found "
                             "or the caller has no access to it.")
        if extra["location"] != self.args.location:
            return rpc_error(404, "NOT_FOUND",
                             f"Publisher Model `projects/{extra['project']}/locations/"
                             f"{extra['location']}/publishers/{extra['publisher']}/models/"
                             f"{extra['model']}` not found.")
        return None

    def body_problem(self, route, req):
        body = req.json_object()
        if body is None:
            return rpc_error(400, "INVALID_ARGUMENT", "Invalid JSON payload received.")
        if route == "streamGenerateContent" \
                and "sse" not in parse_qs(req.query).get("alt", []):
            return rpc_error(400, "INVALID_ARGUMENT", "This fake only streams with alt=sse.")
        if route in ("generateContent", "streamGenerateContent"):
            if not body.get("contents"):
                return rpc_error(400, "INVALID_ARGUMENT", "Unable to submit request "
                                 "because it has an empty contents field.")
            return None
        if "model" in body:
            return rpc_error(400, "INVALID_ARGUMENT", "Invalid JSON payload received. "
                             'Unknown name "model": Cannot find field.')
        if body.get("anthropic_version") != ANTHROPIC_VERSION:
            return rpc_error(400, "INVALID_ARGUMENT",
                             f"anthropic_version must be {ANTHROPIC_VERSION!r}.")
        return None

    # -- control endpoints

    def control(self, req):
        path, data = req.raw_path, req.json_object() or {}
        if path == "/_fake/requests" and req.method == "GET":
            return render(json_resp(200, self.journal.snapshot()))
        if req.method != "POST":
            return render(json_resp(404, {"message": "unknown control endpoint"}))
        if path == "/_fake/enqueue":
            return render(self.enqueue(data))
        if path == "/_fake/reset":
            self.journal.reset()
            return render(json_resp(200, {"ok": True}))
        if path == "/_fake/config":
            self.config.update(data)
            return render(json_resp(200, self.config))
        return render(json_resp(404, {"message": "unknown control endpoint"}))

    def enqueue(self, data):
        route, responses = data.get("route"), data.get("responses")
        if route not in ROUTES or not isinstance(responses, list):
            return json_resp(400, {"message": f"want route in {list(ROUTES)} "
                                              "and a responses list"})
        self.journal.enqueue(route, responses)
        return json_resp(200, {"ok": True, "queued": len(responses)})


# ------------------------------------------------------------ HTTP plumbing


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log")
    parser.add_argument("--public-key")
    parser.add_argument("--client-email")
    parser.add_argument("--project")
    parser.add_argument("--location")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    serve(VertexApp(args), args.port_file, "vertex-fake")


if __name__ == "__main__":
    main()
