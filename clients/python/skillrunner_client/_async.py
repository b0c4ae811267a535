"""The asyncio client: one connection, one reader task, a future per request id."""

from __future__ import annotations

import asyncio
import logging
from types import TracebackType
from collections.abc import AsyncIterator
from typing import Any

from ._errors import (
    ConnectionLostError,
    OverloadedError,
    ProtocolError,
)
from ._protocol import (
    READ_LIMIT,
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
from ._tls import tls_context

_log = logging.getLogger("skillrunner_client")


class _AsyncConnection:
    """One stream pair and the task that reads its answers."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 address: str) -> None:
        """Take over a connected stream pair and start its reader task."""
        self.address = address
        self.alive = True
        self.lost_reason = f"the connection to {address} was lost"  # fail()'s first reason
        self.schema_lock = asyncio.Lock()
        self.skills: SkillSummaries | None = None
        self._reader = reader
        self._writer = writer
        self._pending: dict[int, asyncio.Future[JsonObject]] = {}
        # What the server said in an answer without id before it closed (plain text on a TLS port).
        self._last_words = ""
        self._streams: dict[int, asyncio.Queue[JsonObject]] = {}
        self._lists: set[int] = set()
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    def register(self, req_id: int, lists_skills: bool = False) -> asyncio.Future[JsonObject]:
        """Track a call before its request is sent (``lists_skills``: a ``skills.list`` kept)."""
        if not self.alive:
            raise ConnectionLostError(self.lost_reason)
        fut: asyncio.Future[JsonObject] = asyncio.get_running_loop().create_future()
        self._pending[req_id] = fut
        if lists_skills:
            self._lists.add(req_id)
        return fut

    def forget(self, req_id: int) -> None:
        """Stop tracking a call."""
        self._pending.pop(req_id, None)
        self._streams.pop(req_id, None)
        self._lists.discard(req_id)

    def listen(self, req_id: int) -> asyncio.Queue[JsonObject]:
        """Collect the ``skills.partial``/``skills.reset`` notifications of a call."""
        queue: asyncio.Queue[JsonObject] = asyncio.Queue()
        self._streams[req_id] = queue
        return queue

    async def send(self, line: bytes) -> None:
        """Write one whole line and wait for the buffer to drain."""
        try:
            self._writer.write(line)
            await self._writer.drain()
        except (OSError, RuntimeError) as exc:
            self.fail(f"the connection to {self.address} was lost: {exc}")
            raise ConnectionLostError(
                f"the connection to {self.address} was lost: {exc}") from exc

    def send_nowait(self, line: bytes) -> None:
        """Queue a line without waiting (for ``$/cancel``, also from a cancelled task)."""
        if self.alive and not self._writer.is_closing():
            self._writer.write(line)

    async def _read_loop(self) -> None:
        """Read answer lines until EOF or an error, then fail what is left in flight."""
        reason = f"the connection to {self.address} was lost: the server closed it"
        protocol_error: ProtocolError | None = None
        try:
            while line := await self._reader.readline():
                self._dispatch(line)
        except ProtocolError as exc:
            protocol_error = exc
        except (OSError, ValueError, asyncio.IncompleteReadError) as exc:
            reason = f"the connection to {self.address} was lost: {exc}"
        if self._last_words:
            reason = f"the connection to {self.address} was closed by the server: {self._last_words}"
        self.fail(reason, protocol_error)

    def _dispatch(self, line: bytes) -> None:
        """Hand one answer line to the call waiting for its id."""
        if not line.strip():
            return
        req_id, msg = decode_line(line)
        if req_id is None and msg.get("method") == "skills.changed":
            self.skills = apply_skills_changed(self.skills, msg.get("params"))
            return
        if req_id is None and "method" in msg:
            stream_id = notification_id(msg)
            queue = self._streams.get(stream_id) if stream_id is not None else None
            if queue is not None:
                queue.put_nowait(msg)
            return
        if req_id is None:
            _log.warning("skillrunner: an answer without id: %s", msg.get("error"))
            error = msg.get("error")
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                # A server that answers before it closes (plain text on a TLS port) says why.
                self._last_words = error["message"]
            return
        fut = self._pending.pop(req_id, None)
        if req_id in self._lists and isinstance(msg.get("result"), list):
            # Kept here, in the order of the lines, so that a skills.changed after it applies.
            self.skills = msg["result"]
        if fut is not None and not fut.done():
            fut.set_result(msg)

    def fail(self, reason: str, protocol_error: ProtocolError | None = None) -> None:
        """Mark the connection dead and fail every call in flight on it."""
        if self.alive:
            self.lost_reason = reason
        self.alive = False
        pending, self._pending = self._pending, {}
        for fut in pending.values():
            if fut.done():
                continue
            if protocol_error is not None:
                fut.set_exception(ProtocolError(protocol_error.message,
                                                details=protocol_error.details))
            else:
                fut.set_exception(ConnectionLostError(reason))
        self._writer.close()

    async def close(self) -> None:
        """Close the stream and wait for the reader task."""
        self.fail(f"the client closed the connection to {self.address}")
        try:
            await asyncio.wait_for(self._writer.wait_closed(), 5)
        except (OSError, asyncio.TimeoutError):
            pass
        if not self._task.done():
            self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


class AsyncClient:
    """An asyncio skillrunner client.

    ``AsyncClient(socket=PATH)`` or ``AsyncClient(host=H, port=P, token=T)``, with
    ``tls=True`` (and ``ca_file``, ``cert_file``, ``key_file``) as for ``Client``. It
    connects on the first call (and again after a lost connection); concurrent calls
    share the connection. Cancelling the task of an ``invoke`` sends ``$/cancel``.
    """

    def __init__(self, socket: str | None = None, *, host: str | None = None,
                 port: int | None = None, token: str | None = None,
                 tls: bool = False, ca_file: str | None = None, cert_file: str | None = None,
                 key_file: str | None = None,
                 connect_timeout_s: float = 10.0, max_line_bytes: int = 1 << 20) -> None:
        """Keep the address; nothing connects until the first call (see Client, also for TLS)."""
        self._address = address_params(socket, host, port)
        self._tls = tls_context(tls, socket, ca_file, cert_file, key_file)
        self._socket_path = socket
        self._host = host
        self._port = port
        self._token = token
        self._connect_timeout_s = connect_timeout_s
        self._max_line_bytes = max_line_bytes
        self._ids = Ids()
        self._lock: asyncio.Lock | None = None
        self._conn: _AsyncConnection | None = None
        self._closed = False

    async def __aenter__(self) -> AsyncClient:
        """Return the client itself."""
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        """Close the client."""
        await self.close()

    async def close(self) -> None:
        """Close the connection; calls in flight fail with ConnectionLostError."""
        self._closed = True
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()

    async def invoke(self, skill: str, input: Any, *, timeout_ms: int | None = None,
                     schema_hash: str | None = None, skill_version: int | None = None,
                     routing_key: str | None = None, version: int | None = None) -> InvokeResult:
        """Invoke ``skill`` with ``input`` and return its result.

        The same rules as ``Client.invoke``; in addition, cancelling the awaiting
        task sends ``$/cancel`` for the request and re-raises CancelledError.

        ``routing_key`` (``options.routing_key``) is what a skill's rollout assigns the call
        by: the same key gets the same version. ``version`` (``options.version``) runs that
        version of the skill, its stable one or its rollout's candidate (SkillNotFoundError
        for any other). Unlike ``skill_version``, which only qualifies the ``schema_hash``
        check, ``version`` changes what runs. Each is sent only when given.
        """
        deadline = Deadline(timeout_ms)
        retries = 0
        while True:
            try:
                return await self._invoke_once(skill, input, deadline, schema_hash, skill_version,
                                               routing_key, version)
            except OverloadedError as exc:
                delay_s = overloaded_delay_s(exc, retries, deadline)
                retries += 1
                _log.info("skillrunner: %s OVERLOADED; retry %d in %d ms",
                          skill, retries, round(delay_s * 1000))
                await asyncio.sleep(delay_s)

    async def stream(self, skill: str, input: Any, *,
                     timeout_ms: int | None = None,
                     partial_interval_ms: int | None = None,
                     routing_key: str | None = None,
                     version: int | None = None) -> AsyncIterator[StreamEvent | InvokeResult]:
        """Invoke ``skill`` with ``"stream": true``: yield each event, then the result.

        Events are ``{"method": "skills.partial", "params": {id, attempt, value,
        complete}}`` while the answer grows and ``{"method": "skills.reset", "params":
        {id, attempt, reason, errors}}`` when an attempt is abandoned (drop what was
        shown for it); the last item is the InvokeResult, as ``invoke`` returns it.
        Errors raise as from ``invoke`` (no OVERLOADED retry: events may have been
        shown). Closing the iterator early sends ``$/cancel``. ``partial_interval_ms``
        (0 to 10000; the server's default 25) is the least time between two partials.
        ``routing_key`` and ``version`` (pin a version of a skill with a rollout) are those of
        ``invoke``.
        """
        deadline = Deadline(timeout_ms)
        conn = await self._connection()
        params = stream_params(skill, input, deadline, partial_interval_ms,
                               routing_key=routing_key, version=version)
        req_id = self._ids.take()
        line = encode_request(req_id, "skills.invoke", params, self._token)
        check_size(line, self._max_line_bytes)
        fut = conn.register(req_id)
        events = conn.listen(req_id)
        done = False
        try:
            await conn.send(line)
            while True:
                item = await _next_event(events, fut, deadline)
                if item is None:
                    break
                yield item
            done = True
            while not events.empty():
                yield events.get_nowait()
            yield invoke_result(result_of(fut.result()))
        except TimeoutError:
            raise timeout_error(params, deadline) from None
        finally:
            if not done:
                conn.send_nowait(encode_cancel(req_id, self._token))
            conn.forget(req_id)

    async def health(self) -> JsonObject:
        """The server's ``health`` (status, in_flight, connections, limits, ...)."""
        result: JsonObject = await self._call("health", None)
        return result

    async def describe(self, skill: str) -> JsonObject:
        """``skills.describe``: the skill's summary, schemas and descriptor."""
        result: JsonObject = await self._call("skills.describe", {"skill": skill})
        return result

    async def reload(self) -> JsonObject:
        """``skills.reload``: swap in a freshly loaded tree (ConfigInvalidError if refused)."""
        result: JsonObject = await self._call("skills.reload", None)
        return result

    async def list(self) -> SkillSummaries:
        """``skills.list``: a summary of every loaded skill (with its schema_hash)."""
        result: SkillSummaries = await self._call("skills.list", None)
        return result

    async def _invoke_once(self, skill: str, input_value: Any, deadline: Deadline,
                           schema_hash: str | None, skill_version: int | None = None,
                           routing_key: str | None = None,
                           version: int | None = None) -> InvokeResult:
        """One ``skills.invoke`` round trip (after the schema check, when asked)."""
        conn = await self._connection()
        if schema_hash is not None:
            await self._check_schema(conn, skill, schema_hash, skill_version)
        params = invoke_params(skill, input_value, deadline, routing_key=routing_key, version=version)
        return invoke_result(await self._request(conn, "skills.invoke", params, deadline))

    async def _check_schema(self, conn: _AsyncConnection, skill: str, expected: str,
                            version: int | None) -> None:
        """Fetch ``skills.list`` once per connection and compare the skill's hash."""
        async with conn.schema_lock:
            if conn.skills is None:
                skills = await self._request(conn, "skills.list", None, None)
                if not isinstance(skills, list):
                    raise ProtocolError("malformed skills.list result: not an array")
        check_schema(conn.skills, skill, expected, version)

    async def _call(self, method: str, params: JsonObject | None) -> Any:
        """A request without deadline on the current connection."""
        return await self._request(await self._connection(), method, params, None)

    async def _request(self, conn: _AsyncConnection, method: str, params: JsonObject | None,
                       deadline: Deadline | None) -> Any:
        """Send one request on ``conn`` and wait for its answer (``$/cancel`` past the deadline)."""
        req_id = self._ids.take()
        line = encode_request(req_id, method, params, self._token)
        check_size(line, self._max_line_bytes)
        fut = conn.register(req_id, lists_skills=method == "skills.list")
        try:
            await conn.send(line)
            msg = await _wait(fut, deadline)
        except TimeoutError:
            conn.send_nowait(encode_cancel(req_id, self._token))
            raise timeout_error(params, deadline) from None
        except asyncio.CancelledError:
            if method == "skills.invoke":
                conn.send_nowait(encode_cancel(req_id, self._token))
            raise
        finally:
            conn.forget(req_id)
        return result_of(msg)

    async def _connection(self) -> _AsyncConnection:
        """The live connection, made now when there is none."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._closed:
                raise ConnectionLostError("the client is closed")
            if self._conn is None or not self._conn.alive:
                reader, writer = await self._open()
                self._conn = _AsyncConnection(reader, writer, self._address)
            return self._conn

    async def _open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """Connect the socket (ConnectionLostError when that fails)."""
        try:
            async with asyncio.timeout(self._connect_timeout_s):
                if self._socket_path is not None:
                    return await asyncio.open_unix_connection(self._socket_path, limit=READ_LIMIT)
                if self._tls is not None:
                    return await asyncio.open_connection(
                        self._host, self._port, limit=READ_LIMIT, ssl=self._tls,
                        server_hostname=self._host)
                return await asyncio.open_connection(self._host, self._port, limit=READ_LIMIT)
        except OSError as exc:
            raise ConnectionLostError(f"cannot connect to {self._address}: {exc}",
                                      details={"address": self._address}) from exc


async def _next_event(events: asyncio.Queue[JsonObject], fut: asyncio.Future[JsonObject],
                      deadline: Deadline) -> JsonObject | None:
    """The next queued notification, or None once the answer came (events first)."""
    if not events.empty():
        return events.get_nowait()
    if fut.done():
        return None
    getter = asyncio.ensure_future(events.get())
    try:
        async with asyncio.timeout(deadline.wait_s()):
            await asyncio.wait({getter, fut}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        if not getter.done():
            getter.cancel()
    if getter.done() and not getter.cancelled():
        return getter.result()
    return None if events.empty() else events.get_nowait()


async def _wait(fut: asyncio.Future[JsonObject], deadline: Deadline | None) -> JsonObject:
    """Await an answer, raising TimeoutError once the deadline and its grace have passed."""
    wait_s = deadline.wait_s() if deadline is not None else None
    async with asyncio.timeout(wait_s):
        return await fut
