"""Wire format, answer decoding and the retry/deadline rules both clients share."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, field
from typing import Any

from ._errors import (
    OverloadedError,
    ProtocolError,
    ReviewFailedError,
    SchemaChangedError,
    SkillrunnerError,
    SkillTimeoutError,
    error_class,
)

JsonObject = dict[str, Any]
"""A JSON object as decoded (an answer, a result, a notification)."""
SkillSummaries = list[dict[str, Any]]
"""The ``skills.list`` result: one summary per skill."""
StreamEvent = JsonObject
"""A ``skills.partial`` or ``skills.reset`` notification: ``{"jsonrpc", "method", "params"}``."""

GRACE_S = 1.0
"""How long past its deadline a call waits for the server's own TIMEOUT answer."""
MAX_OVERLOADED_RETRIES = 5
"""OVERLOADED retries of one call without a deadline."""
DEFAULT_RETRY_AFTER_MS = 200
"""The wait before retrying an OVERLOADED answer that carries no retry_after_ms."""
READ_LIMIT = 1 << 30
"""The longest answer line accepted."""

_ENVELOPE_KEYS = frozenset({"code", "message", "attempts", "metrics", "details"})


@dataclass(frozen=True)
class InvokeResult:
    """A successful invocation (the success shape of design.md §6.1).

    A gated skill's answer comes back even when its review failed it: ``review_passed`` is
    False then, and ``raise_for_review()`` raises ``ReviewFailedError``.
    """

    skill: str
    output: Any
    review: dict[str, Any] | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    metrics: dict[str, Any] = field(default_factory=dict)
    #: The version of the skill that answered (its rollout's candidate's when it sent the call there).
    skill_version: int | None = None
    #: "stable" or "candidate" for a skill with a rollout; None without.
    arm: str | None = None

    @property
    def review_passed(self) -> bool | None:
        """The review gate's verdict: True or False, None when the skill has no review gate."""
        if self.review is None:
            return None
        return self.review.get("pass") is not False

    def raise_for_review(self) -> None:
        """Raise ``ReviewFailedError`` when the review gate failed the answer."""
        if self.review is None or self.review_passed:
            return
        issues = [str(issue) for issue in self.review.get("issues", []) if issue]
        message = f"the review gate of skill {self.skill} failed its answer"
        if issues:
            message += ": " + "; ".join(issues)
        raise ReviewFailedError(
            message, output=self.output, review=self.review, attempts=self.attempts, metrics=self.metrics
        )


class Deadline:
    """An optional point in time (monotonic clock) by which a call must end."""

    def __init__(self, timeout_ms: int | None) -> None:
        """Start the clock: ``timeout_ms`` from now (None: no deadline)."""
        self.timeout_ms = timeout_ms
        self._end = None if timeout_ms is None else time.monotonic() + timeout_ms / 1000
        self._sent = False

    def remaining_ms(self) -> int | None:
        """Milliseconds left (at least 0), or None without a deadline."""
        if self._end is None:
            return None
        return max(0, math.ceil((self._end - time.monotonic()) * 1000))

    def server_timeout_ms(self) -> int | None:
        """The ``options.timeout_ms`` to send: as given on the first try, then what is left."""
        if self.timeout_ms is None:
            return None
        if not self._sent:
            self._sent = True
            return self.timeout_ms
        return max(1, self.remaining_ms() or 0)

    def wait_s(self) -> float | None:
        """How long to wait for an answer: the time left plus the grace, or forever."""
        if self._end is None:
            return None
        return max(0.0, self._end - time.monotonic()) + GRACE_S


class Ids:
    """Request ids, unique per client (not thread-safe by itself)."""

    def __init__(self) -> None:
        """Start with nothing taken."""
        self._next = 0

    def take(self) -> int:
        """Return the next id."""
        self._next += 1
        return self._next


def encode_request(req_id: int | None, method: str, params: dict[str, Any] | None,
                   token: str | None) -> bytes:
    """One JSON-RPC request (a notification when ``req_id`` is None) as a line."""
    msg: dict[str, Any] = {"jsonrpc": "2.0"}
    if req_id is not None:
        msg["id"] = req_id
    msg["method"] = method
    if params is not None:
        msg["params"] = params
    if token is not None:
        msg["auth"] = token
    return json.dumps(msg, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def encode_cancel(req_id: int, token: str | None) -> bytes:
    """The ``$/cancel`` notification for request ``req_id``."""
    return encode_request(None, "$/cancel", {"id": req_id}, token)


def invoke_params(skill: str, input_value: Any, deadline: Deadline, *,
                  routing_key: str | None = None, version: int | None = None) -> dict[str, Any]:
    """The params of ``skills.invoke``: ``options`` only when there is something to put in it
    (``timeout_ms`` with a deadline, ``routing_key`` and ``version`` when given)."""
    params: dict[str, Any] = {"skill": skill, "input": input_value}
    options: dict[str, Any] = {}
    timeout_ms = deadline.server_timeout_ms()
    if timeout_ms is not None:
        options["timeout_ms"] = timeout_ms
    if routing_key is not None:
        options["routing_key"] = routing_key
    if version is not None:
        options["version"] = version
    if options:
        params["options"] = options
    return params


def stream_params(skill: str, input_value: Any, deadline: Deadline,
                  partial_interval_ms: int | None = None, *,
                  routing_key: str | None = None, version: int | None = None) -> dict[str, Any]:
    """The params of a streamed ``skills.invoke`` (``options.stream`` set, and
    ``options.partial_interval_ms``, ``routing_key`` and ``version`` when given)."""
    params = invoke_params(skill, input_value, deadline, routing_key=routing_key, version=version)
    options = params.setdefault("options", {})
    options["stream"] = True
    if partial_interval_ms is not None:
        options["partial_interval_ms"] = partial_interval_ms
    return params


def check_size(line: bytes, limit: int) -> None:
    """Refuse a request line the server would refuse unread (over --max-line-bytes)."""
    if len(line) > limit:
        raise ProtocolError(
            f"the request is {len(line)} bytes, longer than max_line_bytes ({limit})",
            details={"jsonrpc_code": -32600})


def decode_line(line: bytes) -> tuple[int | None, dict[str, Any]]:
    """Parse one answer line into (id, message); raise ProtocolError when malformed."""
    try:
        msg = json.loads(line)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"malformed answer from the server: {exc}") from exc
    if not isinstance(msg, dict):
        raise ProtocolError("malformed answer from the server: not a JSON object")
    req_id = msg.get("id")
    if req_id is not None and (not isinstance(req_id, int) or isinstance(req_id, bool)):
        raise ProtocolError(f"malformed answer from the server: id {req_id!r}")
    return req_id, msg


def notification_id(msg: dict[str, Any]) -> int | None:
    """The request id a notification (``skills.partial``/``skills.reset``) is about, if any."""
    params = msg.get("params")
    req_id = params.get("id") if isinstance(params, dict) else None
    return req_id if isinstance(req_id, int) and not isinstance(req_id, bool) else None


def result_of(msg: dict[str, Any]) -> Any:
    """The ``result`` of an answer; raise the matching SkillrunnerError for an ``error``."""
    if "error" in msg:
        raise error_from(msg["error"])
    if "result" not in msg:
        raise ProtocolError("malformed answer from the server: neither result nor error")
    return msg["result"]


def error_from(error: Any) -> SkillrunnerError:
    """Map a JSON-RPC error object to its typed exception."""
    if not isinstance(error, dict):
        return ProtocolError(f"malformed error from the server: {error!r}")
    message = str(error.get("message", ""))
    data = error.get("data")
    data = data if isinstance(data, dict) else {}
    code = data.get("code")
    if not isinstance(code, str):
        details = _extra_details(data)
        details["jsonrpc_code"] = error.get("code")
        return ProtocolError(message, details=details)
    attempts = data.get("attempts")
    return error_class(code)(
        str(data.get("message", message)),
        code=code,
        attempts=attempts if isinstance(attempts, list) else [],
        details=_extra_details(data),
    )


def _extra_details(data: dict[str, Any]) -> dict[str, Any]:
    """``data.details`` merged with the other members (errors, retry_after_ms, ...)."""
    inner = data.get("details")
    details: dict[str, Any] = dict(inner) if isinstance(inner, dict) else {}
    for key, value in data.items():
        if key not in _ENVELOPE_KEYS:
            details[key] = value
    return details


def invoke_result(result: Any) -> InvokeResult:
    """Build an InvokeResult from the ``skills.invoke`` result."""
    if not isinstance(result, dict) or "output" not in result:
        raise ProtocolError("malformed skills.invoke result: no output")
    review = result.get("review")
    attempts = result.get("attempts")
    metrics = result.get("metrics")
    return InvokeResult(
        skill=str(result.get("skill", "")),
        output=result["output"],
        review=review if isinstance(review, dict) else None,
        attempts=attempts if isinstance(attempts, list) else [],
        metrics=metrics if isinstance(metrics, dict) else {},
        skill_version=result["skill_version"] if isinstance(result.get("skill_version"), int) else None,
        arm=result["arm"] if isinstance(result.get("arm"), str) else None,
    )


def timeout_error(params: dict[str, Any] | None, deadline: Deadline | None) -> SkillTimeoutError:
    """The client-side TIMEOUT, raised after ``$/cancel`` was sent."""
    timeout_ms = deadline.timeout_ms if deadline is not None else None
    skill = params.get("skill") if params is not None else None
    return SkillTimeoutError(
        f"skill {skill!r}: no answer within timeout_ms {timeout_ms} "
        f"(+{int(GRACE_S * 1000)} ms grace); sent $/cancel",
        details={"timeout_ms": timeout_ms, "client_side": True})


def overloaded_delay_s(exc: OverloadedError, retries_done: int, deadline: Deadline) -> float:
    """The wait before retrying an OVERLOADED call; re-raise ``exc`` when none is left.

    With a deadline a retry happens while retry_after_ms still fits in it; without
    one, at most MAX_OVERLOADED_RETRIES times.
    """
    after = exc.details.get("retry_after_ms")
    wait_ms = after if isinstance(after, int) and after >= 0 else DEFAULT_RETRY_AFTER_MS
    left = deadline.remaining_ms()
    if left is None and retries_done >= MAX_OVERLOADED_RETRIES:
        raise exc
    if left is not None and wait_ms >= left:
        raise exc
    return wait_ms / 1000


def check_schema(skills: Any, skill: str, expected: str, version: int | None = None) -> None:
    """Check a skill in a ``skills.list`` result against the schemas a caller was generated for.

    ``expected`` is the ``schema_hash`` it was generated against. Without ``version`` the hash
    must be the same. With it (the generated stubs), another hash at the same ``version`` is a
    compatible change (the server refuses a breaking change unless the version rises) and is
    accepted; another hash at another version raises SchemaChangedError.
    """
    entry = None
    if isinstance(skills, list):
        entry = next((s for s in skills if isinstance(s, dict) and s.get("id") == skill), None)
    actual = entry.get("schema_hash") if entry is not None else None
    if entry is not None and actual == expected:
        return
    server_version = entry.get("version") if entry is not None else None
    if actual is not None and version is not None and server_version == version:
        return
    if entry is None:
        has = f'no skill "{skill}"'
    elif actual is None:
        has = "no schema_hash for it"
    else:
        has = str(actual)
    if version is not None and entry is not None and actual is not None:
        message = (f'skill "{skill}" changed on the server in a way that breaks this caller: '
                   f"generated against version {version} ({expected}), "
                   f"server has version {server_version if server_version is not None else 'none'} "
                   f"({actual}); regenerate the stubs")
    else:
        message = f'skill "{skill}" changed on the server: generated against {expected}, server has {has}'
    details: dict[str, Any] = {"skill": skill, "expected": expected, "actual": actual}
    if version is not None:
        details.update(expected_version=version, actual_version=server_version)
    raise SchemaChangedError(message, details=details)


def apply_skills_changed(skills: SkillSummaries | None, params: Any) -> SkillSummaries | None:
    """The ``skills.list`` a connection cached, with one ``skills.changed`` applied."""
    if skills is None or not isinstance(params, dict) or not isinstance(params.get("skill"), str):
        return skills
    changed = {k: params[k] for k in ("version", "schema_hash") if k in params}
    return [dict(entry, **changed) if isinstance(entry, dict) and entry.get("id") == params["skill"]
            else entry for entry in skills]


def address_params(socket: str | None, host: str | None, port: int | None) -> str:
    """Check the connection arguments; return a printable address."""
    if socket is not None and (host is not None or port is not None):
        raise ValueError("give either socket=PATH or host=H, port=P, not both")
    if socket is not None:
        return socket
    if host is None or port is None:
        raise ValueError("give socket=PATH, or host=H and port=P")
    return f"{host}:{port}"
