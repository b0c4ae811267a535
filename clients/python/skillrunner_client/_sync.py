"""The thread-safe synchronous client: one connection, calls pipelined from many threads."""

from __future__ import annotations

import logging
import queue
import socket as socketlib
import threading
import time
from collections.abc import Iterator
from types import TracebackType
from typing import Any

from ._errors import (
    ConnectionLostError,
    OverloadedError,
    ProtocolError,
    SkillrunnerError,
)
from ._protocol import (
    Deadline,
    Ids,
    InvokeResult,
    JsonObject,
    SkillSummaries,
    StreamEvent,
    address_params,
    apply_skills_changed,
    check_schema,
    check_size,
    decode_line,
    encode_cancel,
    encode_request,
    invoke_params,
    invoke_result,
    notification_id,
    overloaded_delay_s,
    result_of,
    stream_params,
    timeout_error,
)
from ._tls import TlsSocket, tls_context

_log = logging.getLogger("skillrunner_client")

_Socket = socketlib.socket | TlsSocket
"""A connected socket: plain, or TLS over one (``tls=True``)."""


class _Call:
    """One request waiting for its answer (set by the reader thread).

    A streamed call also has ``events``: its notifications in the order they came,
    then None once the answer (or the connection's failure) is in.
    """

    __slots__ = ("event", "msg", "error", "events", "lists_skills")

    def __init__(self, stream: bool = False, lists_skills: bool = False) -> None:
        """An unanswered call (``lists_skills``: a ``skills.list`` the connection keeps)."""
        self.event = threading.Event()
        self.lists_skills = lists_skills
        self.msg: JsonObject | None = None
        self.error: SkillrunnerError | None = None
        self.events: queue.SimpleQueue[StreamEvent | None] | None = (
            queue.SimpleQueue() if stream else None)

    def finish(self) -> None:
        """Wake whoever waits for the answer (after ``msg`` or ``error`` was set)."""
        self.event.set()
        if self.events is not None:
            self.events.put(None)


class _Connection:
    """One socket, a reader thread matching answers to calls by id."""

    def __init__(self, sock: _Socket, address: str) -> None:
        """Take over a connected socket and start its reader thread."""
        self.sock = sock
        self.address = address
        self.alive = True
        self.lost_reason = f"the connection to {address} was lost"  # fail()'s first reason
        self.schema_lock = threading.Lock()
        self.skills: SkillSummaries | None = None
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._pending: dict[int, _Call] = {}
        # What the server said in an answer without id before it closed (plain text on a TLS port).
        self._last_words = ""
        self._reader = threading.Thread(
            target=self._read_loop, name="skillrunner-client-reader", daemon=True)
        self._reader.start()

    def register(self, req_id: int, stream: bool = False, lists_skills: bool = False) -> _Call:
        """Track a call before its request is sent (with ``stream``, its notifications too)."""
        call = _Call(stream, lists_skills)
        with self._lock:
            if not self.alive:
                raise ConnectionLostError(self.lost_reason)
            self._pending[req_id] = call
        return call

    def forget(self, req_id: int) -> None:
        """Stop tracking a call (answered, timed out or failed)."""
        with self._lock:
            self._pending.pop(req_id, None)

    def send(self, line: bytes) -> None:
        """Write one whole line; a failure loses the connection."""
        try:
            with self._write_lock:
                self.sock.sendall(line)
        except OSError as exc:
            self.fail(f"the connection to {self.address} was lost: {exc}")
            raise ConnectionLostError(
                f"the connection to {self.address} was lost: {exc}") from exc

    def send_quietly(self, line: bytes) -> None:
        """Write a line if the connection still works (for ``$/cancel``)."""
        try:
            with self._write_lock:
                self.sock.sendall(line)
        except OSError:
            pass

    def _read_loop(self) -> None:
        """Read answer lines until EOF or an error, then fail what is left in flight."""
        reason = f"the connection to {self.address} was lost: the server closed it"
        protocol_error: ProtocolError | None = None
        try:
            with self.sock.makefile("rb") as reader:
                for line in reader:
                    self._dispatch(line)
        except ProtocolError as exc:
            protocol_error = exc
        except (OSError, ValueError) as exc:
            reason = f"the connection to {self.address} was lost: {exc}"
        if self._last_words:
            reason = f"the connection to {self.address} was closed by the server: {self._last_words}"
        self.fail(reason, protocol_error)

    def _dispatch(self, line: bytes) -> None:
        """Hand one answer line to the call waiting for its id."""
        if not line.strip():
            return
        req_id, msg = decode_line(line)
        if req_id is None and "method" in msg:
            self._notify(msg)
            return
        if req_id is None:
            _log.warning("skillrunner: an answer without id: %s", msg.get("error"))
            error = msg.get("error")
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                # A server that answers before it closes (plain text on a TLS port) says why.
                self._last_words = error["message"]
            return
        with self._lock:
            call = self._pending.pop(req_id, None)
            if call is not None and call.lists_skills and isinstance(msg.get("result"), list):
                # Kept here, in the order of the lines, so that a skills.changed after it applies.
                self.skills = msg["result"]
        if call is not None:
            call.msg = msg
            call.finish()

    def _notify(self, msg: JsonObject) -> None:
        """Queue a ``skills.partial``/``skills.reset`` for its streamed call (else drop it).

        A ``skills.changed`` updates the ``skills.list`` the schema checks use.
        """
        if msg.get("method") == "skills.changed":
            with self._lock:
                self.skills = apply_skills_changed(self.skills, msg.get("params"))
            return
        stream_id = notification_id(msg)
        with self._lock:
            call = self._pending.get(stream_id) if stream_id is not None else None
        if call is not None and call.events is not None:
            call.events.put(msg)

    def fail(self, reason: str, protocol_error: ProtocolError | None = None) -> None:
        """Mark the connection dead and fail every call in flight on it."""
        with self._lock:
            if self.alive:
                self.lost_reason = reason
            self.alive = False
            pending, self._pending = self._pending, {}
        for call in pending.values():
            if protocol_error is not None:
                call.error = ProtocolError(protocol_error.message, details=protocol_error.details)
            else:
                call.error = ConnectionLostError(reason)
            call.finish()
        try:
            self.sock.shutdown(socketlib.SHUT_RDWR)
        except OSError:
            pass

    def close(self) -> None:
        """Close the socket and wait for the reader thread."""
        self.fail(f"the client closed the connection to {self.address}")
        if threading.current_thread() is not self._reader:
            self._reader.join(timeout=5)
        self.sock.close()


class Client:
    """A synchronous, thread-safe skillrunner client.

    ``Client(socket=PATH)`` for the Unix socket, ``Client(host=H, port=P, token=T)``
    for TCP, and ``tls=True`` (with ``ca_file``, ``cert_file``, ``key_file``) for a TCP
    listener with TLS (``serve --tls-cert``). It connects on the first call (and again
    after a lost connection), and every thread's calls share that one connection,
    pipelined and matched by id.
    """

    def __init__(self, socket: str | None = None, *, host: str | None = None,
                 port: int | None = None, token: str | None = None,
                 tls: bool = False, ca_file: str | None = None, cert_file: str | None = None,
                 key_file: str | None = None,
                 connect_timeout_s: float = 10.0, max_line_bytes: int = 1 << 20) -> None:
        """Keep the address; nothing connects until the first call.

        ``max_line_bytes`` mirrors the server's --max-line-bytes: a longer request
        is refused here (ProtocolError) instead of being sent.

        ``tls=True`` speaks TLS (1.2 or newer) to ``host``: the server's certificate must
        chain to ``ca_file`` (PEM; else the system's CAs) and name ``host``. ``cert_file``
        and ``key_file`` (PEM) are the client certificate a server with
        ``--tls-client-ca`` asks for. The files are read here; a failed handshake raises
        ConnectionLostError ("cannot connect to ...") with OpenSSL's reason.
        """
        self._address = address_params(socket, host, port)
        self._tls = tls_context(tls, socket, ca_file, cert_file, key_file)
        self._socket_path = socket
        self._host = host
        self._port = port
        self._token = token
        self._connect_timeout_s = connect_timeout_s
        self._max_line_bytes = max_line_bytes
        self._ids = Ids()
        self._lock = threading.Lock()
        self._conn: _Connection | None = None
        self._closed = False

    def __enter__(self) -> Client:
        """Return the client itself."""
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        """Close the client."""
        self.close()

    def close(self) -> None:
        """Close the connection; calls in flight fail with ConnectionLostError."""
        with self._lock:
            self._closed = True
            conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()

    def invoke(self, skill: str, input: Any, *, timeout_ms: int | None = None,
               schema_hash: str | None = None, skill_version: int | None = None,
               routing_key: str | None = None, version: int | None = None) -> InvokeResult:
        """Invoke ``skill`` with ``input`` and return its result.

        With ``timeout_ms`` the server gets that deadline, and the client waits at
        most that long plus a grace, then sends ``$/cancel`` and raises
        SkillTimeoutError. OVERLOADED answers are retried after ``retry_after_ms``
        while that fits the deadline (at most 5 times without one). With
        ``schema_hash`` the skill's hash in ``skills.list`` is checked first, once
        per connection and again after each ``skills.changed``; a difference raises
        SchemaChangedError, unless ``skill_version`` is given and the server's skill is
        still at that version (a compatible change: the generated stubs pass it).

        For a skill with a rollout (docs/rollouts.md): ``routing_key`` (sent as
        ``options.routing_key``) is what the rollout assigns the call by, so calls with the
        same key get the same version; ``version`` (sent as ``options.version``) runs that
        version of the skill, its stable one or its rollout's candidate, and the server
        answers SkillNotFoundError for any other (a pinned call is not counted by the
        rollout). ``version`` changes what runs; ``skill_version`` does not: it only
        qualifies the ``schema_hash`` check. Each is sent only when given, and the server
        checks them (ProtocolError -32602 for a bad value). ``InvokeResult.skill_version``
        and ``.arm`` say which version answered.
        """
        deadline = Deadline(timeout_ms)
        retries = 0
        while True:
            try:
                return self._invoke_once(skill, input, deadline, schema_hash, skill_version,
                                         routing_key, version)
            except OverloadedError as exc:
                delay_s = overloaded_delay_s(exc, retries, deadline)
                retries += 1
                _log.info("skillrunner: %s OVERLOADED; retry %d in %d ms",
                          skill, retries, round(delay_s * 1000))
                time.sleep(delay_s)

    def stream(self, skill: str, input: Any, *,
               timeout_ms: int | None = None,
               partial_interval_ms: int | None = None,
               routing_key: str | None = None,
               version: int | None = None) -> Iterator[StreamEvent | InvokeResult]:
        """Invoke ``skill`` with ``"stream": true``: yield each event, then the result.

        A generator with the items of ``AsyncClient.stream``: ``{"method":
        "skills.partial", "params": {id, attempt, value, complete}}`` while the answer
        grows, ``{"method": "skills.reset", "params": {id, attempt, reason, errors}}``
        when an attempt is abandoned (drop what was shown for it), and last the
        InvokeResult, as ``invoke`` returns it. Nothing is sent before the first
        item is asked for. Errors raise as from ``invoke`` (no OVERLOADED retry:
        events may have been shown); past ``timeout_ms`` plus the grace, ``$/cancel``
        is sent and SkillTimeoutError raised. ``partial_interval_ms`` (0 to 10000; the
        server's default 25) is the least time between two partials. Leaving the loop before the result
        (``break``, an exception, or ``close()`` on the generator) sends ``$/cancel``.
        ``routing_key`` and ``version`` (pin a version of a skill with a rollout) are those of
        ``invoke``.
        """
        deadline = Deadline(timeout_ms)
        conn = self._connection()
        params = stream_params(skill, input, deadline, partial_interval_ms,
                               routing_key=routing_key, version=version)
        with self._lock:
            req_id = self._ids.take()
        line = encode_request(req_id, "skills.invoke", params, self._token)
        check_size(line, self._max_line_bytes)
        call = conn.register(req_id, stream=True)
        assert call.events is not None
        done = False
        try:
            conn.send(line)
            while True:
                try:
                    item = call.events.get(timeout=deadline.wait_s())
                except queue.Empty:
                    raise timeout_error(params, deadline) from None
                if item is None:
                    break
                yield item
            done = True
        finally:
            if not done:
                conn.send_quietly(encode_cancel(req_id, self._token))
            conn.forget(req_id)
        if call.error is not None:
            raise call.error
        assert call.msg is not None
        yield invoke_result(result_of(call.msg))

    def health(self) -> JsonObject:
        """The server's ``health`` (status, in_flight, connections, limits, ...)."""
        result: JsonObject = self._call("health", None)
        return result

    def describe(self, skill: str) -> JsonObject:
        """``skills.describe``: the skill's summary, schemas and descriptor."""
        result: JsonObject = self._call("skills.describe", {"skill": skill})
        return result

    def reload(self) -> JsonObject:
        """``skills.reload``: swap in a freshly loaded tree (ConfigInvalidError if refused)."""
        result: JsonObject = self._call("skills.reload", None)
        return result

    def list(self) -> SkillSummaries:
        """``skills.list``: a summary of every loaded skill (with its schema_hash)."""
        result: SkillSummaries = self._call("skills.list", None)
        return result

    def _invoke_once(self, skill: str, input_value: Any, deadline: Deadline,
                     schema_hash: str | None, skill_version: int | None = None,
                     routing_key: str | None = None, version: int | None = None) -> InvokeResult:
        """One ``skills.invoke`` round trip (after the schema check, when asked)."""
        conn = self._connection()
        if schema_hash is not None:
            self._check_schema(conn, skill, schema_hash, skill_version)
        params = invoke_params(skill, input_value, deadline, routing_key=routing_key, version=version)
        return invoke_result(self._request(conn, "skills.invoke", params, deadline))

    def _check_schema(self, conn: _Connection, skill: str, expected: str,
                      version: int | None) -> None:
        """Fetch ``skills.list`` once per connection and compare the skill's hash."""
        with conn.schema_lock:
            if conn.skills is None:
                skills = self._request(conn, "skills.list", None, None)
                if not isinstance(skills, list):
                    raise ProtocolError("malformed skills.list result: not an array")
        check_schema(conn.skills, skill, expected, version)

    def _call(self, method: str, params: JsonObject | None) -> Any:
        """A request without deadline on the current connection."""
        return self._request(self._connection(), method, params, None)

    def _request(self, conn: _Connection, method: str, params: JsonObject | None,
                 deadline: Deadline | None) -> Any:
        """Send one request on ``conn`` and wait for its answer (``$/cancel`` past the deadline)."""
        with self._lock:
            req_id = self._ids.take()
        line = encode_request(req_id, method, params, self._token)
        check_size(line, self._max_line_bytes)
        call = conn.register(req_id, lists_skills=method == "skills.list")
        try:
            conn.send(line)
            wait_s = deadline.wait_s() if deadline is not None else None
            if not call.event.wait(wait_s):
                conn.send_quietly(encode_cancel(req_id, self._token))
                raise timeout_error(params, deadline)
        finally:
            conn.forget(req_id)
        if call.error is not None:
            raise call.error
        assert call.msg is not None
        return result_of(call.msg)

    def _connection(self) -> _Connection:
        """The live connection, made now when there is none."""
        with self._lock:
            if self._closed:
                raise ConnectionLostError("the client is closed")
            if self._conn is None or not self._conn.alive:
                if self._conn is not None:
                    self._conn.close()  # the dead one: join its reader, close its socket
                self._conn = _Connection(self._open(), self._address)
            return self._conn

    def _open(self) -> _Socket:
        """Connect the socket, and with ``tls`` do the handshake (ConnectionLostError when
        that fails); both under the connect timeout."""
        try:
            if self._socket_path is None:
                assert self._host is not None and self._port is not None
                sock = socketlib.create_connection(
                    (self._host, self._port), timeout=self._connect_timeout_s)
            else:
                sock = socketlib.socket(socketlib.AF_UNIX, socketlib.SOCK_STREAM)
                try:
                    sock.settimeout(self._connect_timeout_s)
                    sock.connect(self._socket_path)
                except OSError:
                    sock.close()
                    raise
            conn: _Socket = sock
            if self._tls is not None:
                assert self._host is not None
                try:
                    conn = TlsSocket(sock, self._tls, self._host)
                except BaseException:
                    sock.close()
                    raise
        except OSError as exc:
            raise ConnectionLostError(f"cannot connect to {self._address}: {exc}",
                                      details={"address": self._address}) from exc
        conn.settimeout(None)
        return conn
