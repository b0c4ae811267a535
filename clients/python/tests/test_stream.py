"""Client.stream and AsyncClient.stream against a real `skillrunner serve` (simulated provider)."""

from __future__ import annotations

import threading
import time
import unittest
from contextlib import aclosing
from typing import Any

from serve_helper import TICKET, Served, Server, config_text, wait_until

from skillrunner_client import (
    AsyncClient,
    Client,
    InputInvalidError,
    InvokeResult,
    ProtocolError,
    SkillTimeoutError,
)

# Attempt 1 of triage_ticket answers a string priority: its partial comes after
# RETRY_LATENCY_MS, and the invocation stays in flight for attempt 2 (as long again).
RETRY_LATENCY_MS = 800
WRONG_FIRST = [{"skill": "triage_ticket", "attempt": 1, "fault": "wrong_type", "path": "/priority"}]


def wait_cancelled(server: Server, since: int, req_id: int) -> None:
    """Wait until the server logs request ``req_id`` CANCELLED after its first ``since`` events."""
    wait_until(lambda: any(e["id"] == req_id and e["outcome"] == "CANCELLED"
                           for e in server.events()[since:]), 10, f"request {req_id} cancelled")


class StreamChecks(unittest.TestCase):
    """Shared checks on what a stream yielded."""

    def check_partials_then_result(self, items: list[Any]) -> None:
        result = items[-1]
        self.assertIsInstance(result, InvokeResult)
        events = items[:-1]
        self.assertGreaterEqual(len(events), 1)
        for event in events:
            self.assertEqual(event["method"], "skills.partial")
            self.assertNotIn("id", event)
            self.assertEqual(sorted(event["params"]), ["attempt", "complete", "id", "value"])
        last = events[-1]["params"]
        self.assertEqual(last["value"], result.output)
        self.assertEqual(last["complete"][-1], "")
        self.assertEqual(last["attempt"], result.attempts[-1]["n"])


class StreamTests(Served, unittest.IsolatedAsyncioTestCase, StreamChecks):
    """AsyncClient.stream: `"stream": true` invocations, events first, then the result."""

    @staticmethod
    def served() -> Server:
        return Server(config_text())

    async def collect(self, skill: str, value: Any) -> list[Any]:
        async with AsyncClient(socket=self.server.socket) as client:
            return [item async for item in client.stream(skill, value, timeout_ms=10000)]

    async def test_partials_then_the_result(self) -> None:
        self.check_partials_then_result(await self.collect("triage_ticket", TICKET))

    async def test_handler_skills_send_no_partials(self) -> None:
        items = await self.collect("word_stats", {"text": "a b a", "top": 1})
        self.assertEqual(len(items), 1)
        self.assertEqual(items[0].output["words"], 3)

    async def test_errors_raise_as_from_invoke(self) -> None:
        with self.assertRaises(InputInvalidError):
            await self.collect("triage_ticket", {"subject": ""})

    async def test_partial_interval_ms_reaches_the_server(self) -> None:
        async with AsyncClient(socket=self.server.socket) as client:
            items = [item async for item in client.stream("triage_ticket", TICKET, partial_interval_ms=0)]
            self.check_partials_then_result(items)
            with self.assertRaises(ProtocolError) as caught:
                _ = [item async for item in client.stream("triage_ticket", TICKET, partial_interval_ms=10001)]
        self.assertEqual(caught.exception.details["jsonrpc_code"], -32602)
        self.assertEqual(caught.exception.details["errors"][0]["path"], "/options/partial_interval_ms")


class SyncStreamTests(Served, StreamChecks):
    """Client.stream: the same items as AsyncClient.stream, from a generator."""

    @staticmethod
    def served() -> Server:
        return Server(config_text())

    def test_partials_then_the_result(self) -> None:
        self.check_partials_then_result(
            list(self.client().stream("triage_ticket", TICKET, timeout_ms=10000)))

    def test_handler_skills_send_no_partials(self) -> None:
        items = list(self.client().stream("word_stats", {"text": "a b a", "top": 1}))
        self.assertEqual(len(items), 1)
        self.assertEqual(items[0].output["words"], 3)

    def test_errors_raise_as_from_invoke(self) -> None:
        client = self.client()
        with self.assertRaises(InputInvalidError) as caught:
            list(client.stream("triage_ticket", {"subject": ""}, timeout_ms=10000))
        self.assertEqual(caught.exception.code, "INPUT_INVALID")
        self.assertEqual(client.invoke("word_stats", {"text": "a"}).output["words"], 1)

    def test_partial_interval_ms_reaches_the_server(self) -> None:
        client = self.client()
        self.check_partials_then_result(list(client.stream("triage_ticket", TICKET, partial_interval_ms=0)))
        with self.assertRaises(ProtocolError) as caught:
            list(client.stream("triage_ticket", TICKET, partial_interval_ms=-1))
        self.assertEqual(caught.exception.details["errors"][0],
                         {"path": "/options/partial_interval_ms",
                          "message": "expected an integer from 0 to 10000 (milliseconds between partials; 0: every one)"})

    def test_nothing_is_sent_before_the_first_item_is_asked_for(self) -> None:
        client = self.client()
        before = len(self.server.events())
        stream = client.stream("word_stats", {"text": "a"})
        client.health()  # id 1: the stream has taken no id yet
        self.assertEqual([item.output["words"] for item in stream], [1])
        wait_until(lambda: len(self.server.events()) > before, 5, "the invoke logged")
        self.assertEqual([e["id"] for e in self.server.events()[before:]], [2])

    def test_streams_from_threads_share_the_connection(self) -> None:
        client = self.client()
        out: dict[int, list[Any]] = {}

        def run(i: int) -> None:
            out[i] = list(client.stream("triage_ticket", {"subject": f"ticket {i}", "body": "b"},
                                        timeout_ms=10000))

        threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(20)
        self.assertEqual(sorted(out), list(range(8)))
        ids = set()
        for items in out.values():
            self.check_partials_then_result(items)
            stream_ids = {event["params"]["id"] for event in items[:-1]}
            self.assertEqual(len(stream_ids), 1)  # only its own call's events
            ids |= stream_ids
        self.assertEqual(len(ids), 8)
        self.assertEqual(client.health()["connections"], 1)


class SlowSyncStreamTests(Served, unittest.TestCase):
    """Client.stream: a caller who leaves while the invocation is in flight, or runs out of time."""

    @staticmethod
    def served() -> Server:
        return Server(config_text(RETRY_LATENCY_MS, WRONG_FIRST))

    def test_leaving_the_loop_sends_cancel(self) -> None:
        since = len(self.server.events())
        with Client(socket=self.server.socket) as client:
            for item in client.stream("triage_ticket", TICKET, timeout_ms=10000):
                req_id = item["params"]["id"]
                break  # after attempt 1's partial: attempt 2 is in flight
            wait_cancelled(self.server, since, req_id)
            self.assertEqual(client.health()["connections"], 1)  # the connection lives on
            self.assertEqual(client.invoke("word_stats", {"text": "a"}).output["words"], 1)

    def test_a_retry_resets_then_shows_its_own_partials(self) -> None:
        with Client(socket=self.server.socket) as client:
            items = list(client.stream("triage_ticket", TICKET, timeout_ms=10000))
        self.assertEqual([(item["method"], item["params"]["attempt"]) for item in items[:-1]],
                         [("skills.partial", 1), ("skills.reset", 1), ("skills.partial", 2)])
        self.assertEqual(items[-2]["params"]["value"], items[-1].output)
        self.assertEqual(items[-1].attempts[0]["kind"], "validation")

    def test_closing_the_generator_sends_cancel(self) -> None:
        since = len(self.server.events())
        with Client(socket=self.server.socket) as client:
            stream = client.stream("triage_ticket", TICKET)
            req_id = next(stream)["params"]["id"]
            stream.close()
            wait_cancelled(self.server, since, req_id)

    def test_client_deadline_sends_cancel(self) -> None:
        client = Client(socket=self.server.socket)
        self.addCleanup(client.close)
        client.health()  # id 1: connected before the server is stopped
        since = len(self.server.events())
        self.gives_up_client_side(lambda: list(client.stream("triage_ticket", TICKET, timeout_ms=200)))  # id 2
        self.assertEqual(client.health()["connections"], 1)  # the connection lives on
        wait_cancelled(self.server, since, 2)


class SlowAsyncStreamTests(Served, unittest.IsolatedAsyncioTestCase):
    """AsyncClient.stream: a caller who closes the iterator while the invocation is in flight."""

    @staticmethod
    def served() -> Server:
        return Server(config_text(RETRY_LATENCY_MS, WRONG_FIRST))

    async def test_closing_the_iterator_sends_cancel(self) -> None:
        since = len(self.server.events())
        async with AsyncClient(socket=self.server.socket) as client:
            async with aclosing(client.stream("triage_ticket", TICKET)) as stream:
                async for item in stream:
                    req_id = item["params"]["id"]
                    break  # after attempt 1's partial: attempt 2 is in flight
            wait_cancelled(self.server, since, req_id)
            self.assertEqual((await client.health())["connections"], 1)


if __name__ == "__main__":
    unittest.main()
