"""AsyncClient.stream against a real `skillrunner serve` (simulated provider)."""

from __future__ import annotations

import unittest
from typing import Any

from serve_helper import TICKET, Server, config_text

from skillrunner_client import AsyncClient, InputInvalidError, InvokeResult


class StreamTests(unittest.IsolatedAsyncioTestCase):
    """`"stream": true` invocations: events first, then the result."""

    server: Server

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = Server(config_text()).start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.cleanup()

    async def collect(self, skill: str, value: Any) -> list[Any]:
        async with AsyncClient(socket=self.server.socket) as client:
            return [item async for item in client.stream(skill, value, timeout_ms=10000)]

    async def test_partials_then_the_result(self) -> None:
        items = await self.collect("triage_ticket", TICKET)
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

    async def test_handler_skills_send_no_partials(self) -> None:
        items = await self.collect("word_stats", {"text": "a b a", "top": 1})
        self.assertEqual(len(items), 1)
        self.assertEqual(items[0].output["words"], 3)

    async def test_errors_raise_as_from_invoke(self) -> None:
        with self.assertRaises(InputInvalidError):
            await self.collect("triage_ticket", {"subject": ""})


if __name__ == "__main__":
    unittest.main()
