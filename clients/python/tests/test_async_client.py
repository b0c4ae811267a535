"""AsyncClient against a real `skillrunner serve` (simulated provider)."""

from __future__ import annotations

import asyncio
import logging
import re
import signal
import time
import unittest
from typing import Any, Awaitable, Callable

import serve_helper as sh
from serve_helper import (
    Served,
    FAULTS_A,
    FAULTS_B,
    TICKET,
    WRONG_TOKEN_MESSAGE,
    Server,
    config_text,
    finish_quick_invocations,
    raw_call,
)

from skillrunner_client import (
    AsyncClient,
    ConfigInvalidError,
    ConnectionLostError,
    ContentFilteredError,
    InputInvalidError,
    JudgeError,
    MaxRetriesExceededError,
    OverloadedError,
    ProtocolError,
    ProviderUnavailableError,
    RefusedError,
    SchemaChangedError,
    SkillCancelledError,
    SkillNotFoundError,
    SkillrunnerError,
    SkillTimeoutError,
    TruncatedError,
    UnauthorizedError,
)


logging.getLogger("asyncio").setLevel(logging.ERROR)  # debug-mode "slow callback" noise


async def until(pred: Callable[[], Awaitable[bool]], timeout_s: float = 10,
                what: str = "condition") -> None:
    """Poll the async ``pred`` until true; fail after ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if await pred():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


async def in_flight(client: AsyncClient, n: int) -> bool:
    """True when the server has exactly ``n`` invocations in flight."""
    return (await client.health())["in_flight"] == n


class AsyncFastTests(Served, unittest.IsolatedAsyncioTestCase):
    """No latency; a TCP listener that needs a token."""

    @staticmethod
    def served() -> Server:
        return Server(config_text(), tcp=True, env={"SKILLRUNNER_TOKEN": sh.TOKEN})

    async def asyncSetUp(self) -> None:
        self.client = AsyncClient(socket=self.server.socket)

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def test_invoke_health_list_describe(self) -> None:
        result = await self.client.invoke("word_stats", {"text": "a b a", "top": 1},
                                          timeout_ms=10000)
        self.assertEqual((result.skill, result.output, result.review), ("word_stats", {
            "words": 3, "lines": 1, "characters": 5,
            "top_words": [{"word": "a", "count": 2}]}, None))
        health = await self.client.health()
        self.assertEqual((health["status"], health["connections"]), ("ok", 1))
        self.assertEqual(len(await self.client.list()), 5)
        self.assertEqual((await self.client.describe("word_stats"))["timeout_ms"], 5000)

    async def test_request_errors(self) -> None:
        with self.assertRaises(InputInvalidError) as bad_input:
            await self.client.invoke("triage_ticket", {"subject": ""})
        self.assertEqual([e["path"] for e in bad_input.exception.details["errors"]],
                         ["/subject", "/body"])
        with self.assertRaises(SkillNotFoundError) as missing:
            await self.client.invoke("no_such_skill", {})
        self.assertEqual(missing.exception.message, 'unknown skill "no_such_skill"')
        with self.assertRaises(ProtocolError) as protocol:
            await self.client.invoke("word_stats", {"text": "a"}, timeout_ms=0)
        self.assertEqual(protocol.exception.details["jsonrpc_code"], -32602)

    async def test_tcp_token(self) -> None:
        async with AsyncClient(host="127.0.0.1", port=self.server.port, token=sh.TOKEN) as good:
            self.assertEqual((await good.invoke("word_stats", {"text": "a"})).output["words"], 1)
        async with AsyncClient(host="127.0.0.1", port=self.server.port, token="wrong") as bad:
            with self.assertRaises(UnauthorizedError) as caught:
                await bad.invoke("word_stats", {"text": "a"})
        self.assertEqual((caught.exception.code, caught.exception.message),
                         ("UNAUTHORIZED", WRONG_TOKEN_MESSAGE))

    async def test_schema_hash_missing_skill(self) -> None:
        expected = "sha256:" + "1" * 64
        with self.assertRaises(SchemaChangedError) as caught:
            await self.client.invoke("no_such_skill", {}, schema_hash=expected)
        self.assertEqual(caught.exception.details,
                         {"skill": "no_such_skill", "expected": expected, "actual": None})

    async def test_schema_hash_checked_once_per_connection(self) -> None:
        listed = {s["id"]: s for s in await self.client.list()}
        if "schema_hash" not in listed["word_stats"]:
            self.skipTest("this serve's skills.list has no schema_hash yet (design.md §10.4)")
        described = await self.client.describe("word_stats")
        good = sh.schema_hash(described["input_schema"], described["output_schema"])
        self.assertEqual(listed["word_stats"]["schema_hash"], good)
        before = raw_call(self.server.socket, "metrics")["requests"]["skills.list"]
        async with AsyncClient(socket=self.server.socket) as fresh:
            results = await asyncio.gather(*(
                fresh.invoke("word_stats", {"text": "a"}, schema_hash=good) for _ in range(5)))
            self.assertEqual([r.output["words"] for r in results], [1] * 5)
            stale = "sha256:" + "0" * 64
            with self.assertRaises(SchemaChangedError) as caught:
                await fresh.invoke("word_stats", {"text": "a"}, schema_hash=stale)
        after = raw_call(self.server.socket, "metrics")["requests"]["skills.list"]
        self.assertEqual(after - before, 1, "one skills.list for concurrent first calls")
        self.assertEqual(caught.exception.message, f'skill "word_stats" changed on the server: '
                                                   f"generated against {stale}, server has {good}")


class AsyncFaultTests(unittest.IsolatedAsyncioTestCase):
    """Every code the fault scripts produce, and a refused reload, as typed exceptions."""

    CASES: list[tuple[str, str, dict[str, Any], type[SkillrunnerError], str]] = [
        ("a", "route_incident", {"report": "x"}, MaxRetriesExceededError, "MAX_RETRIES_EXCEEDED"),
        ("a", "extract_contact", {"text": "x"}, TruncatedError, "TRUNCATED"),
        ("a", "review_contact", {"subject": "x"}, JudgeError, "JUDGE_ERROR"),
        ("a", "triage_ticket", TICKET, ProviderUnavailableError, "PROVIDER_UNAVAILABLE"),
        ("b", "route_incident", {"report": "x"}, RefusedError, "REFUSED"),
        ("b", "triage_ticket", TICKET, ContentFilteredError, "CONTENT_FILTERED"),
    ]

    async def test_fault_codes_and_reload(self) -> None:
        server = Server(config_text(0, FAULTS_A)).start()
        self.addCleanup(server.cleanup)
        async with AsyncClient(socket=server.socket) as client:
            for config, faults in (("a", FAULTS_A), ("b", FAULTS_B)):
                server.write_config(config_text(0, faults))
                self.assertTrue((await client.reload())["ok"])
                for case_config, skill, value, cls, code in self.CASES:
                    if case_config != config:
                        continue
                    with self.subTest(skill=skill, code=code), self.assertRaises(cls) as caught:
                        await client.invoke(skill, value, timeout_ms=20000)
                    self.assertEqual(caught.exception.code, code)
                    self.assertGreater(len(caught.exception.attempts), 0)
            server.write_config(config_text()[:-1] + ', "bogus_key": 1}')
            with self.assertRaises(ConfigInvalidError) as refused:
                await client.reload()
            self.assertEqual(refused.exception.details["diagnostics"][0]["pointer"], "/bogus_key")


class AsyncSlowTests(Served, unittest.IsolatedAsyncioTestCase):
    """Each provider answer takes 2.5 s: pipelining, deadlines and cancellation."""

    @staticmethod
    def served() -> Server:
        return Server(config_text(2500))

    async def test_1000_pipelined_calls_on_one_connection(self) -> None:
        first = len(self.server.events())
        async with AsyncClient(socket=self.server.socket) as client:
            started = time.monotonic()
            calls = [asyncio.ensure_future(client.invoke(
                "triage_ticket", {"subject": f"ticket {i}", "body": "b"}, timeout_ms=30000))
                for i in range(1000)]
            await until(lambda: in_flight(client, 1000), 20, "1000 calls in flight")
            health = await client.health()
            self.assertEqual((health["in_flight"], health["connections"]), (1000, 1))
            results = await asyncio.gather(*calls)
            self.assertLess(time.monotonic() - started, 20)
        self.assertEqual({r.skill for r in results}, {"triage_ticket"})
        events = self.server.events()[first:]
        self.assertEqual(len(events), 1000)
        self.assertEqual({(e["conn"], e["outcome"]) for e in events}, {(events[0]["conn"], "ok")})

    async def test_task_cancel_sends_cancel(self) -> None:
        async with AsyncClient(socket=self.server.socket) as client, \
                AsyncClient(socket=self.server.socket) as observer:
            task = asyncio.ensure_future(client.invoke("triage_ticket", TICKET))  # id 1
            await until(lambda: in_flight(observer, 1), 10, "the call in flight")
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            await until(lambda: in_flight(observer, 0), 5, "the call cancelled on the server")
            self.assertEqual((await client.health())["connections"], 2)  # connection lives on
        conn_ids = {e["conn"] for e in self.server.events()
                    if e["id"] == 1 and e["outcome"] == "CANCELLED"}
        self.assertEqual(len(conn_ids), 1)

    async def test_server_timeout(self) -> None:
        async with AsyncClient(socket=self.server.socket) as client:
            with self.assertRaises(SkillTimeoutError) as caught:
                await client.invoke("triage_ticket", TICKET, timeout_ms=300)
        self.assertEqual(caught.exception.message, "invocation timed out after 300 ms")

    async def test_client_deadline_sends_cancel(self) -> None:
        async with AsyncClient(socket=self.server.socket) as client:
            await client.health()  # id 1
            self.server.pause()
            try:
                started = time.monotonic()
                with self.assertRaises(SkillTimeoutError) as caught:
                    await client.invoke("triage_ticket", TICKET, timeout_ms=200)  # id 2
                waited = time.monotonic() - started
            finally:
                self.server.resume()
            self.assertEqual(caught.exception.details, {"timeout_ms": 200, "client_side": True})
            self.assertGreaterEqual(waited, 1.2)
            self.assertEqual((await client.health())["connections"], 1)
        self.server.wait_event(lambda e: e["id"] == 2 and e["outcome"] == "CANCELLED")


class AsyncOverloadTests(Served, unittest.IsolatedAsyncioTestCase):
    """--max-in-flight 1 with one 2-second call holding the slot."""

    @staticmethod
    def served() -> Server:
        return Server(config_text(2000), "--max-in-flight", "1")

    @classmethod
    def ready(cls, server: Server) -> None:
        finish_quick_invocations(server.socket)

    async def asyncSetUp(self) -> None:
        self.client = AsyncClient(socket=self.server.socket)
        await until(lambda: in_flight(self.client, 0), 10, "an idle server")
        self.occupant = asyncio.ensure_future(self.client.invoke("triage_ticket", TICKET))
        await until(lambda: in_flight(self.client, 1), 10, "the slot taken")

    async def asyncTearDown(self) -> None:
        await self.occupant
        await self.client.close()

    async def test_retried_then_succeeds(self) -> None:
        with self.assertLogs("skillrunner_client", logging.INFO) as logs:
            result = await self.client.invoke("word_stats", {"text": "a a"}, timeout_ms=8000)
        self.assertEqual(result.output["words"], 2)
        self.assertGreaterEqual(len(logs.records), 1)
        # The server's wait: the median of its recent (quick) invocations, at least 10 ms.
        waited = re.fullmatch(r"skillrunner: word_stats OVERLOADED; retry 1 in (\d+) ms", logs.records[0].getMessage())
        self.assertIsNotNone(waited, logs.records[0].getMessage())
        assert waited is not None
        self.assertTrue(10 <= int(waited.group(1)) < 1000, waited.group(0))

    async def test_five_retries_without_deadline(self) -> None:
        with self.assertLogs("skillrunner_client", logging.INFO) as logs, \
                self.assertRaises(OverloadedError) as caught:
            await self.client.invoke("word_stats", {"text": "a"})
        self.assertEqual(len(logs.records), 5)
        self.assertEqual(list(caught.exception.details), ["retry_after_ms"])
        retry_after_ms = caught.exception.details["retry_after_ms"]
        self.assertTrue(10 <= retry_after_ms < 1000, retry_after_ms)
        self.assertEqual(logs.records[-1].getMessage(),
                         f"skillrunner: word_stats OVERLOADED; retry 5 in {retry_after_ms} ms")


class AsyncRestartTests(unittest.IsolatedAsyncioTestCase):
    """A server that dies or drains under in-flight calls."""

    async def asyncSetUp(self) -> None:
        self.server = Server(config_text(1500), "--drain-timeout-ms", "300").start()
        self.addCleanup(self.server.cleanup)
        self.client = AsyncClient(socket=self.server.socket)

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def start_call(self) -> asyncio.Future[Any]:
        call = asyncio.ensure_future(self.client.invoke("triage_ticket", TICKET))
        await until(lambda: in_flight(self.client, 1), 10, "the call in flight")
        return call

    async def test_killed_server_then_reconnect(self) -> None:
        call = await self.start_call()
        self.server.kill()
        with self.assertRaises(ConnectionLostError) as caught:
            await call
        self.assertEqual(caught.exception.message, f"the connection to {self.server.socket} "
                                                   "was lost: the server closed it")
        self.server.start()
        self.assertEqual((await self.client.invoke("word_stats", {"text": "a"})).output["words"], 1)
        self.assertEqual((await self.client.health())["connections"], 1)

    async def test_drain_cancels_in_flight_calls(self) -> None:
        call = await self.start_call()
        self.server.signal(signal.SIGTERM)
        with self.assertRaises(SkillCancelledError) as caught:
            await call
        self.assertEqual((caught.exception.code, caught.exception.message),
                         ("CANCELLED", "cancelled: the server's drain timeout (300 ms) ran out"))


if __name__ == "__main__":
    unittest.main()
