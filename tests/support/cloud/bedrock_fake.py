#!/usr/bin/python3
"""Fake AWS Bedrock Runtime plus the AWS credential endpoints, for tests.

Runs on 127.0.0.1 only, with /usr/bin/python3 (3.11) and Debian's
python3-botocore.  Every request is checked the way AWS checks it; a failed
check is answered in AWS's own wire format.

Command line
  --port-file PATH     bind 127.0.0.1:0, write "PORT\\n" to PATH.tmp, rename
  --log PATH           append one JSON line per request (flushed each line)
  --region REGION      region the SigV4 scope must name (default us-east-1)
  --credentials AKID:SECRET[:SESSIONTOKEN]   static keys accepted (repeatable)
  --web-identity-token TOKEN --role-arn ARN  what STS accepts
  --container-token TOKEN                    container endpoint's token

Routes (log "route" name in brackets)
  POST /model/{modelId}/converse          [converse]         SigV4 required
  POST /model/{modelId}/converse-stream   [converse-stream]  SigV4 required
  GET|POST /  Action=AssumeRoleWithWebIdentity                [sts]
  PUT  /latest/api/token                                      [imds-token]
  GET  /latest/meta-data/iam/security-credentials/            [imds-role]
  GET  /latest/meta-data/iam/security-credentials/fake-role   [imds-creds]
  GET  /container-credentials                                 [container]
  anything else: 404 UnknownOperationException               [unknown]

SigV4 check (model routes): the Authorization header is parsed; the key id
must be static or issued by STS / IMDS / container and unexpired (else 403
UnrecognizedClientException); scope region/service/terminator, x-amz-date
(present, within 5 minutes, same day as the scope), host and x-amz-date
signed, session token present/equal/signed, a signed x-amz-content-sha256
equal to the body's hash, and the signature recomputed with botocore from the
signed headers as received (else 403 InvalidSignatureException; the log line
then carries "canonical_request" and "string_to_sign").  No Authorization
header: 403 MissingAuthenticationTokenException.  A malformed one: 403
IncompleteSignatureException.

Control endpoints (no auth, not logged)
  POST /_fake/enqueue {"route": NAME, "responses": [RESP, ...]}  FIFO script
  GET  /_fake/requests                      logged requests, as a JSON array
  POST /_fake/reset                         clear scripts, log and log file
  POST /_fake/config {"credential_lifetime_s": N}   merge settings

A scripted RESP replaces the default success answer of a request that passed
its checks (a refused request does not consume it):
  {"status": 200, "body": {...}}                     JSON
  {"status": N, "error_type": "ThrottlingException", "message": "..."}
  {"raw": "text", "status": N, "content_type": "..."}
  {"events": [EVENT, ...], "split_every": N}          event stream
and any of them may add "delay_ms": N and "headers": {...}.  EVENT is
  {"type": "messageStart", "payload": {...}}          :message-type event
  {"exception": "ThrottlingException", "payload": {...}}
  "corrupt_crc": true (message CRC off by one), "delay_ms": N (pause first),
  {"disconnect": true} (drop the connection, no final chunk).
Streams are sent with chunked transfer encoding; split_every N writes the
bytes in N-byte chunks with a 5 ms pause between them.

Each log line: method, path, query (raw), headers (lowercase names), body
(JSON when it parses, else text), route, auth ("ok" or the refusal reason),
plus "model" on model routes.  SIGTERM exits 0.
"""

import argparse
import binascii
import datetime
import hashlib
import hmac
import json
import re
import secrets
import string
import struct
import threading
import time
import uuid
from urllib.parse import parse_qsl, unquote
from xml.sax.saxutils import escape

from botocore.auth import SIGNED_HEADERS_BLACKLIST, SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from fake_http import DISCONNECT, Journal, Reply, json_resp, serve, text_resp  # beside this file

ROUTES = ("converse", "converse-stream", "sts", "imds-token", "imds-role",
          "imds-creds", "container")
MODEL_PATH = re.compile(r"^/model/([^/]+)/(converse|converse-stream)$")
AUTH_HEADER = re.compile(
    r"^AWS4-HMAC-SHA256\s+Credential=([^,\s]+),\s*"
    r"SignedHeaders=([^,\s]+),\s*Signature=([0-9a-fA-F]+)\s*$")
AMZ_DATE = "%Y%m%dT%H%M%SZ"
MAX_SKEW_S = 300
SERVICE = "bedrock"
STS_NS = "https://sts.amazonaws.com/doc/2011-06-15/"
CREDS_PREFIX = "/latest/meta-data/iam/security-credentials/"
IMDS_ROLE = "fake-role"
SIGNATURE_MISMATCH = (
    "The request signature we calculated does not match the signature you "
    "provided. Check your AWS Secret Access Key and signing method. Consult "
    "the service documentation for details.")
INVALID_TOKEN = "The security token included in the request is invalid."


# ---------------------------------------------------------------- helpers

def iso_z(epoch):
    moment = datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def random_text(length, alphabet=string.ascii_letters + string.digits):
    return "".join(secrets.choice(alphabet) for _ in range(length))


# --------------------------------------------------- journal and requests


# ------------------------------------------------------------ wire replies


def error_resp(status, error_type, message):
    return {"status": status, "error_type": error_type, "message": message}


# ------------------------------------------------------------ event stream

def encode_headers(pairs):
    out = b""
    for name, value in pairs:
        name_b, value_b = name.encode(), value.encode()
        out += bytes([len(name_b)]) + name_b + b"\x07"
        out += struct.pack(">H", len(value_b)) + value_b
    return out


def encode_frame(header_pairs, payload, corrupt_crc=False):
    headers = encode_headers(header_pairs)
    total = 12 + len(headers) + len(payload) + 4
    prelude = struct.pack(">II", total, len(headers))
    message = prelude + struct.pack(">I", binascii.crc32(prelude)) + headers + payload
    crc = (binascii.crc32(message) + (1 if corrupt_crc else 0)) & 0xFFFFFFFF
    return message + struct.pack(">I", crc)


def encode_event(event):
    if "exception" in event:
        pairs = [(":exception-type", event["exception"]),
                 (":content-type", "application/json"),
                 (":message-type", "exception")]
    else:
        pairs = [(":event-type", event["type"]),
                 (":content-type", "application/json"),
                 (":message-type", "event")]
    payload = json.dumps(event.get("payload", {})).encode()
    return encode_frame(pairs, payload, event.get("corrupt_crc", False))


def stream_items(events):
    items = []
    for event in events:
        if event.get("delay_ms"):
            items.append(event["delay_ms"] / 1000.0)
        if event.get("disconnect"):
            items.append(DISCONNECT)
        elif "type" in event or "exception" in event:
            items.append(encode_event(event))
    return items


def default_stream():
    usage = {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15}
    events = [("messageStart", {"role": "assistant"}),
              ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": '{"ok":'}}),
              ("contentBlockDelta", {"contentBlockIndex": 0, "delta": {"text": "true}"}}),
              ("contentBlockStop", {"contentBlockIndex": 0}),
              ("messageStop", {"stopReason": "end_turn"}),
              ("metadata", {"usage": usage, "metrics": {"latencyMs": 12}})]
    return {"events": [{"type": t, "payload": p} for t, p in events]}


def default_converse():
    return json_resp(200, {
        "output": {"message": {"role": "assistant",
                               "content": [{"text": '{"ok":true}'}]}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 10, "outputTokens": 5, "totalTokens": 15},
        "metrics": {"latencyMs": 12}})


def render(resp):
    """Turn a RESP dict (scripted or built in) into a Reply."""
    status = resp.get("status", 200)
    if "events" in resp:
        reply = Reply(status, "application/vnd.amazon.eventstream")
        reply.stream = stream_items(resp["events"])
        reply.split_every = int(resp.get("split_every", 0))
    elif "raw" in resp:
        reply = Reply(status, resp.get("content_type", "text/plain"),
                      resp["raw"].encode())
    elif "error_type" in resp:
        body = json.dumps({"message": resp.get("message", "")}).encode()
        reply = Reply(status, "application/json", body,
                      {"x-amzn-ErrorType": resp["error_type"]})
    else:
        reply = Reply(status, "application/json",
                      json.dumps(resp.get("body", {})).encode())
    reply.headers.update(resp.get("headers", {}))
    reply.headers.setdefault("x-amzn-RequestId", str(uuid.uuid4()))
    reply.delay_s = resp.get("delay_ms", 0) / 1000.0
    return reply


# ------------------------------------------------------------ credentials

class CredentialStore:
    """Static keys plus keys issued by STS / IMDS / container, with expiry."""

    def __init__(self, config):
        self.lock = threading.Lock()
        self.config = config
        self.keys = {}

    def add_static(self, spec):
        parts = spec.split(":", 2)
        if len(parts) < 2:
            raise SystemExit(f"--credentials wants AKID:SECRET[:TOKEN], got {spec!r}")
        token = parts[2] if len(parts) == 3 else None
        self.keys[parts[0]] = {"secret": parts[1], "token": token, "expires": None}

    def issue(self):
        lifetime = float(self.config["credential_lifetime_s"])
        cred = {"akid": "ASIA" + random_text(16, string.ascii_uppercase + string.digits),
                "secret": random_text(40), "token": "FQoGZXIvYXdz" + random_text(200),
                "expires": time.time() + lifetime}
        with self.lock:
            self.keys[cred["akid"]] = cred
        return cred

    def lookup(self, akid):
        with self.lock:
            cred = self.keys.get(akid)
        if cred and cred["expires"] is not None and cred["expires"] <= time.time():
            return None
        return cred


class Refusal(Exception):
    def __init__(self, error_type, message, reason):
        super().__init__(reason)
        self.error_type = error_type
        self.message = message
        self.reason = reason


def invalid(message, reason=None):
    return Refusal("InvalidSignatureException", message, reason or message)


class SigV4Verifier:
    """Checks a request's AWS4-HMAC-SHA256 Authorization as AWS does."""

    def __init__(self, store, region):
        self.store = store
        self.region = region

    def check(self, req):
        """Return None when the request is properly signed, else a Refusal."""
        try:
            self._check(req)
            return None
        except Refusal as refusal:
            return refusal

    def _check(self, req):
        header = req.headers.get("authorization")
        if not header:
            raise Refusal("MissingAuthenticationTokenException",
                          "Missing Authentication Token", "missing Authorization header")
        scope, signed, signature = self._parse(header)
        cred = self.store.lookup(scope[0])
        if cred is None:
            raise Refusal("UnrecognizedClientException", INVALID_TOKEN,
                          f"unknown or expired access key id {scope[0]}")
        self._check_scope(scope)
        amz_date = self._check_date(req, scope[1])
        self._check_signed_headers(req, signed, cred)
        self._check_signature(req, scope[0], cred, signed, signature, amz_date)

    @staticmethod
    def _parse(header):
        match = AUTH_HEADER.match(header)
        scope = match.group(1).split("/") if match else []
        if len(scope) != 5:
            raise Refusal("IncompleteSignatureException",
                          f"Authorization header is malformed: {header!r}",
                          "malformed Authorization header")
        return scope, match.group(2).split(";"), match.group(3).lower()

    def _check_scope(self, scope):
        if scope[2] != self.region:
            raise invalid("Credential should be scoped to a valid region. ",
                          f"scope region {scope[2]!r} is not {self.region!r}")
        if scope[3] != SERVICE:
            raise invalid(f"Credential should be scoped to correct service: '{SERVICE}'. ",
                          f"scope service {scope[3]!r} is not {SERVICE!r}")
        if scope[4] != "aws4_request":
            raise invalid("Credential should be scoped with a valid terminator: "
                          f"'aws4_request', not '{scope[4]}'. ")

    @staticmethod
    def _check_date(req, scope_date):
        amz_date = req.headers.get("x-amz-date")
        if not amz_date:
            raise invalid("Authorization header requires existence of either a "
                          "'X-Amz-Date' or a 'Date' header.", "missing x-amz-date")
        try:
            when = datetime.datetime.strptime(amz_date, AMZ_DATE).replace(
                tzinfo=datetime.timezone.utc).timestamp()
        except ValueError:
            raise invalid(f"Invalid X-Amz-Date {amz_date!r}") from None
        check_skew(amz_date, when)
        if scope_date != amz_date[:8]:
            raise invalid("Date in Credential scope does not match YYYYMMDD from "
                          f"ISO-8601 version of date from HTTP: '{scope_date}' != "
                          f"'{amz_date[:8]}', from '{amz_date}'.")
        return amz_date

    def _check_signed_headers(self, req, signed, cred):
        for name in ("host", "x-amz-date"):
            if name not in signed:
                raise invalid(f"'{name}' must be a 'SignedHeader' in the AWS Authorization.")
        for name in signed:
            if name not in req.headers:
                raise invalid(SIGNATURE_MISMATCH, f"signed header {name!r} not in request")
            if name in SIGNED_HEADERS_BLACKLIST:
                raise invalid(SIGNATURE_MISMATCH,
                              f"signed header {name!r} is one botocore never signs")
        check_session_token(req, signed, cred)
        check_content_sha(req, signed)

    def _check_signature(self, req, akid, cred, signed, signature, amz_date):
        headers = {name: req.headers[name] for name in signed}
        url = "http://" + req.headers["host"] + req.raw_path
        if req.query:
            url += "?" + req.query
        aws_request = AWSRequest(req.method, url, data=req.body, headers=headers)
        aws_request.context["timestamp"] = amz_date
        auth = SigV4Auth(Credentials(akid, cred["secret"], cred["token"]),
                         SERVICE, self.region)
        canonical = auth.canonical_request(aws_request)
        to_sign = auth.string_to_sign(aws_request, canonical)
        expected = auth.signature(to_sign, aws_request)
        if not hmac.compare_digest(expected, signature):
            req.extra["canonical_request"] = canonical
            req.extra["string_to_sign"] = to_sign
            raise invalid(SIGNATURE_MISMATCH, "signature mismatch")


def check_skew(amz_date, when):
    now = time.time()
    stamp = lambda t: time.strftime(AMZ_DATE, time.gmtime(t))  # noqa: E731
    if when < now - MAX_SKEW_S:
        raise invalid(f"Signature expired: {amz_date} is now earlier than "
                      f"{stamp(now - MAX_SKEW_S)} ({stamp(now)} - 5 min.)")
    if when > now + MAX_SKEW_S:
        raise invalid(f"Signature not yet current: {amz_date} is still later than "
                      f"{stamp(now + MAX_SKEW_S)} ({stamp(now)} + 5 min.)")


def check_session_token(req, signed, cred):
    sent = req.headers.get("x-amz-security-token")
    if cred["token"] is None:
        if sent is not None:
            raise invalid(INVALID_TOKEN, "x-amz-security-token sent for a key without one")
        return
    if sent is None:
        raise invalid(INVALID_TOKEN, "missing x-amz-security-token")
    if not hmac.compare_digest(sent, cred["token"]):
        raise invalid(INVALID_TOKEN, "wrong x-amz-security-token")
    if "x-amz-security-token" not in signed:
        raise invalid(INVALID_TOKEN, "x-amz-security-token is not signed")


def check_content_sha(req, signed):
    sent = req.headers.get("x-amz-content-sha256")
    if sent is None or "x-amz-content-sha256" not in signed:
        return
    if sent != hashlib.sha256(req.body).hexdigest():
        raise invalid("The provided 'x-amz-content-sha256' header does not match "
                      "what was computed.", "x-amz-content-sha256 differs from the body")


# ------------------------------------------------------------ the service

class BedrockApp:
    """Routes requests, applies the cloud's checks, picks the answer."""

    def __init__(self, args):
        self.args = args
        self.config = {"credential_lifetime_s": 3600}
        self.journal = Journal(args.log)
        self.store = CredentialStore(self.config)
        for spec in args.credentials:
            self.store.add_static(spec)
        self.verifier = SigV4Verifier(self.store, args.region)
        self.imds_lock = threading.Lock()
        self.imds_tokens = {}

    def handle(self, req):
        route, fn = self.match(req)
        auth, resp = fn(route, req)
        self.journal.record(req.log_entry(route, auth))
        return render(resp)

    def match(self, req):
        path, method = req.raw_path, req.method
        found = MODEL_PATH.match(path)
        if found and method == "POST":
            req.extra["model"] = unquote(found.group(1))
            return found.group(2), self.model_route
        table = {("GET", "/"): ("sts", self.sts), ("POST", "/"): ("sts", self.sts),
                 ("PUT", "/latest/api/token"): ("imds-token", self.imds_token),
                 ("GET", CREDS_PREFIX): ("imds-role", self.imds_role),
                 ("GET", CREDS_PREFIX[:-1]): ("imds-role", self.imds_role),
                 ("GET", "/container-credentials"): ("container", self.container)}
        if (method, path) in table:
            return table[(method, path)]
        if method == "GET" and path.startswith(CREDS_PREFIX):
            return "imds-creds", self.imds_creds
        return "unknown", self.unknown

    def scripted_or(self, route, make_default):
        """The next scripted RESP for route, else make_default()."""
        scripted = self.journal.pop(route)
        return scripted if scripted is not None else make_default()

    # -- model routes

    def model_route(self, route, req):
        refusal = self.verifier.check(req)
        if refusal:
            return refusal.reason, error_resp(403, refusal.error_type, refusal.message)
        if req.json_object() is None:
            return "ok", error_resp(400, "SerializationException",
                                    "The request body is not a JSON object.")
        default = default_converse if route == "converse" else default_stream
        return "ok", self.scripted_or(route, default)

    def unknown(self, route, req):
        return "ok", error_resp(404, "UnknownOperationException",
                                f"No route for {req.method} {req.raw_path}")

    # -- STS

    def sts(self, route, req):
        params = dict(parse_qsl(req.query))
        if req.method == "POST":
            params.update(parse_qsl(req.body.decode("utf-8", errors="replace")))
        problem = self.sts_problem(params)
        if problem:
            return problem[1], sts_error(*problem)
        return "ok", self.scripted_or(route, lambda: text_resp(
            200, sts_success_xml(params, self.store.issue()), "text/xml"))

    def sts_problem(self, params):
        """Return (status, code, message) for a request STS would refuse."""
        action, version = params.get("Action"), params.get("Version")
        if action != "AssumeRoleWithWebIdentity" or version != "2011-06-15":
            return 400, "InvalidAction", (f"Could not find operation {action} "
                                          f"for version {version}")
        for name in ("RoleArn", "RoleSessionName", "WebIdentityToken"):
            if not params.get(name):
                field = name[0].lower() + name[1:]
                return 400, "ValidationError", (
                    f"1 validation error detected: Value null at '{field}' failed "
                    "to satisfy constraint: Member must not be null")
        if params["WebIdentityToken"] != self.args.web_identity_token:
            return 400, "InvalidIdentityToken", "The web identity token is not valid."
        if params["RoleArn"] != self.args.role_arn:
            return 403, "AccessDenied", "Not authorized to perform sts:AssumeRoleWithWebIdentity"
        return None

    # -- IMDSv2

    def imds_token(self, route, req):
        ttl = req.headers.get("x-aws-ec2-metadata-token-ttl-seconds", "")
        if not ttl.isdigit() or not 1 <= int(ttl) <= 21600:
            return "bad or missing token ttl header", text_resp(400, "Bad Request")
        return "ok", self.scripted_or(route, lambda: self.new_imds_token(int(ttl)))

    def new_imds_token(self, ttl):
        token = "AQAEA" + random_text(51)
        with self.imds_lock:
            self.imds_tokens[token] = time.time() + ttl
        headers = {"X-aws-ec2-metadata-token-ttl-seconds": str(ttl)}
        return text_resp(200, token, headers=headers)

    def imds_refusal(self, req):
        token = req.headers.get("x-aws-ec2-metadata-token")
        if token is None:
            return "missing x-aws-ec2-metadata-token (IMDSv1 is off)"
        with self.imds_lock:
            expires = self.imds_tokens.get(token)
        if expires is None or expires <= time.time():
            return "unknown or expired IMDS token"
        return None

    def imds_role(self, route, req):
        refusal = self.imds_refusal(req)
        if refusal:
            return refusal, text_resp(401, "Unauthorized")
        return "ok", self.scripted_or(route, lambda: text_resp(200, IMDS_ROLE))

    def imds_creds(self, route, req):
        refusal = self.imds_refusal(req)
        if refusal:
            return refusal, text_resp(401, "Unauthorized")
        if req.raw_path[len(CREDS_PREFIX):] != IMDS_ROLE:
            return "ok", text_resp(404, "Not Found")
        return "ok", self.scripted_or(route, lambda: credentials_json(
            self.store.issue(), {"Code": "Success", "LastUpdated": iso_z(time.time()),
                                 "Type": "AWS-HMAC"}))

    # -- container credentials

    def container(self, route, req):
        expected = self.args.container_token
        sent = req.headers.get("authorization")
        if expected is None or sent is None or not hmac.compare_digest(sent, expected):
            reason = "missing Authorization" if sent is None else "wrong Authorization"
            return reason, json_resp(401, {"message": "Unauthorized: " + reason})
        return "ok", self.scripted_or(
            route, lambda: credentials_json(self.store.issue(), {}))

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


def credentials_json(cred, extra):
    body = dict(extra)
    body.update({"AccessKeyId": cred["akid"], "SecretAccessKey": cred["secret"],
                 "Token": cred["token"], "Expiration": iso_z(cred["expires"])})
    return json_resp(200, body)


def sts_error(status, code, message):
    request_id = str(uuid.uuid4())
    xml = (f'<ErrorResponse xmlns="{STS_NS}"><Error><Type>Sender</Type>'
           f"<Code>{escape(code)}</Code><Message>{escape(message)}</Message>"
           f"</Error><RequestId>{request_id}</RequestId></ErrorResponse>")
    return text_resp(status, xml, "text/xml", {"x-amzn-RequestId": request_id})


def sts_success_xml(params, cred):
    role_arn, session = params["RoleArn"], params["RoleSessionName"]
    account = role_arn.split(":")[4] if role_arn.count(":") >= 5 else "123456789012"
    role_name = role_arn.rsplit("/", 1)[-1]
    assumed_arn = f"arn:aws:sts::{account}:assumed-role/{role_name}/{session}"
    role_id = "AROA" + random_text(17, string.ascii_uppercase + string.digits)
    return (
        f'<AssumeRoleWithWebIdentityResponse xmlns="{STS_NS}">'
        "<AssumeRoleWithWebIdentityResult><Credentials>"
        f"<AccessKeyId>{cred['akid']}</AccessKeyId>"
        f"<SecretAccessKey>{escape(cred['secret'])}</SecretAccessKey>"
        f"<SessionToken>{escape(cred['token'])}</SessionToken>"
        f"<Expiration>{iso_z(cred['expires'])}</Expiration></Credentials>"
        "<SubjectFromWebIdentityToken>system:serviceaccount:default:fake"
        "</SubjectFromWebIdentityToken>"
        f"<AssumedRoleUser><Arn>{escape(assumed_arn)}</Arn>"
        f"<AssumedRoleId>{role_id}:{escape(session)}</AssumedRoleId></AssumedRoleUser>"
        "</AssumeRoleWithWebIdentityResult><ResponseMetadata>"
        f"<RequestId>{uuid.uuid4()}</RequestId></ResponseMetadata>"
        "</AssumeRoleWithWebIdentityResponse>")


# ------------------------------------------------------------ HTTP plumbing


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--log")
    parser.add_argument("--region", default="us-east-1")
    parser.add_argument("--credentials", action="append", default=[])
    parser.add_argument("--web-identity-token")
    parser.add_argument("--role-arn")
    parser.add_argument("--container-token")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    serve(BedrockApp(args), args.port_file, "bedrock-fake")


if __name__ == "__main__":
    main()
