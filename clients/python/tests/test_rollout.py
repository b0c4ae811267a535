"""The rollout options of invoke and stream (``routing_key``, ``version``) against a real
`skillrunner serve` whose skill ``greet`` has a candidate (version 2, 10% of the traffic)."""

from __future__ import annotations

import unittest
from typing import Any

from serve_helper import ROLLOUT_SKILL, Served, Server, rollout_server

from skillrunner_client import (
    AsyncClient,
    InvokeResult,
    ProtocolError,
    SkillNotFoundError,
)
from skillrunner_client._protocol import Deadline, invoke_params, stream_params

NAME = {"name": "Ada"}
NO_VERSION_3 = f'skill "{ROLLOUT_SKILL}" has no version 3 (versions: 1, 2)'
BAD_VERSION = "Invalid params: /options/version: expected a version number (an integer from 1)"
BAD_KEY = "Invalid params: /options/routing_key: expected a string of 1 to 1024 characters"


def answered_by(result: InvokeResult) -> tuple[int | None, str | None]:
    """Which version answered, and on which arm."""
    return result.skill_version, result.arm


class ParamsTests(unittest.TestCase):
    """What goes on the wire: each option only when given."""

    def test_options_only_when_given(self) -> None:
        self.assertEqual(invoke_params("s", {}, Deadline(None)), {"skill": "s", "input": {}})
        self.assertEqual(invoke_params("s", {}, Deadline(None), routing_key="k", version=2),
                         {"skill": "s", "input": {}, "options": {"routing_key": "k", "version": 2}})
        self.assertEqual(invoke_params("s", {}, Deadline(500), version=1)["options"],
                         {"timeout_ms": 500, "version": 1})
        self.assertEqual(stream_params("s", {}, Deadline(None), routing_key="k")["options"],
                         {"routing_key": "k", "stream": True})


class RolloutTests(Served, unittest.TestCase):
    """Client: a pinned version and a routing key reach the server; the result says who answered."""

    @staticmethod
    def served() -> Server:
        return rollout_server()

    def test_a_pinned_version_answers(self) -> None:
        client = self.client()
        for _ in range(3):
            self.assertEqual(answered_by(client.invoke(ROLLOUT_SKILL, NAME, version=2)), (2, "candidate"))
            self.assertEqual(answered_by(client.invoke(ROLLOUT_SKILL, NAME, version=1, timeout_ms=10000)),
                             (1, "stable"))
        # A pin wins over the routing key.
        self.assertEqual(answered_by(client.invoke(ROLLOUT_SKILL, NAME, version=2, routing_key="k")),
                         (2, "candidate"))

    def test_a_pinned_stream_answers(self) -> None:
        items = list(self.client().stream(ROLLOUT_SKILL, NAME, version=2, timeout_ms=10000))
        result = items[-1]
        self.assertIsInstance(result, InvokeResult)
        self.assertEqual(answered_by(result), (2, "candidate"))
        self.assertTrue(all(item["method"] == "skills.partial" for item in items[:-1]))

    def test_a_version_the_skill_does_not_have(self) -> None:
        client = self.client()
        with self.assertRaises(SkillNotFoundError) as caught:
            client.invoke(ROLLOUT_SKILL, NAME, version=3)
        self.assertEqual((caught.exception.code, caught.exception.message),
                         ("SKILL_NOT_FOUND", NO_VERSION_3))
        with self.assertRaises(SkillNotFoundError) as streamed:
            list(client.stream(ROLLOUT_SKILL, NAME, version=3))
        self.assertEqual(streamed.exception.message, NO_VERSION_3)

    def test_bad_values_are_the_servers_invalid_params(self) -> None:
        client = self.client()
        with self.assertRaises(ProtocolError) as version:
            client.invoke(ROLLOUT_SKILL, NAME, version=0)
        with self.assertRaises(ProtocolError) as key:
            client.invoke(ROLLOUT_SKILL, NAME, routing_key="")
        self.assertEqual((version.exception.message, version.exception.details["jsonrpc_code"]),
                         (BAD_VERSION, -32602))
        self.assertEqual((key.exception.message, key.exception.details["jsonrpc_code"]),
                         (BAD_KEY, -32602))

    def test_a_routing_key_keeps_its_arm(self) -> None:
        client = self.client()
        # The first key the rollout sends to each arm (about 1 in 10 goes to the candidate).
        keys: dict[str, tuple[str, int | None]] = {}
        for n in range(200):
            result = client.invoke(ROLLOUT_SKILL, NAME, routing_key=f"user-{n}")
            assert result.arm is not None
            keys.setdefault(result.arm, (f"user-{n}", result.skill_version))
            if len(keys) == 2:
                break
        self.assertEqual({arm: version for arm, (_, version) in keys.items()},
                         {"stable": 1, "candidate": 2})
        for arm, (key, version) in keys.items():
            # Were the key not sent, 5 calls in a row on the candidate would be a 1 in 100,000 chance.
            for _ in range(5):
                self.assertEqual(answered_by(client.invoke(ROLLOUT_SKILL, NAME, routing_key=key)),
                                 (version, arm))
            streamed = list(client.stream(ROLLOUT_SKILL, NAME, routing_key=key))[-1]
            self.assertEqual(answered_by(streamed), (version, arm))


class AsyncRolloutTests(Served, unittest.IsolatedAsyncioTestCase):
    """AsyncClient: the same options."""

    @staticmethod
    def served() -> Server:
        return rollout_server()

    async def asyncSetUp(self) -> None:
        self.aclient = AsyncClient(socket=self.server.socket)

    async def asyncTearDown(self) -> None:
        await self.aclient.close()

    async def test_a_pinned_version_answers(self) -> None:
        self.assertEqual(answered_by(await self.aclient.invoke(ROLLOUT_SKILL, NAME, version=2)),
                         (2, "candidate"))
        self.assertEqual(answered_by(await self.aclient.invoke(ROLLOUT_SKILL, NAME, version=1)),
                         (1, "stable"))
        items: list[Any] = [item async for item in self.aclient.stream(ROLLOUT_SKILL, NAME, version=2)]
        self.assertEqual(answered_by(items[-1]), (2, "candidate"))
        with self.assertRaises(SkillNotFoundError) as caught:
            await self.aclient.invoke(ROLLOUT_SKILL, NAME, version=3)
        self.assertEqual((caught.exception.code, caught.exception.message),
                         ("SKILL_NOT_FOUND", NO_VERSION_3))

    async def test_a_routing_key_keeps_its_arm(self) -> None:
        first = None
        for n in range(200):
            first = await self.aclient.invoke(ROLLOUT_SKILL, NAME, routing_key=f"user-{n}")
            if first.arm == "candidate":
                break
        assert first is not None
        self.assertEqual(answered_by(first), (2, "candidate"))
        for _ in range(5):
            again = await self.aclient.invoke(ROLLOUT_SKILL, NAME, routing_key=f"user-{n}")
            self.assertEqual(answered_by(again), (2, "candidate"))
        items: list[Any] = [item async for item in
                            self.aclient.stream(ROLLOUT_SKILL, NAME, routing_key=f"user-{n}")]
        self.assertEqual(answered_by(items[-1]), (2, "candidate"))


if __name__ == "__main__":
    unittest.main()
