"""Malformed answers (from a fake peer, not serve) raise ProtocolError in both clients; INTERNAL its own class."""

from __future__ import annotations

import asyncio
import os
import socket
import tempfile
import threading
import unittest

import serve_helper  # noqa: F401 - puts the package under test on sys.path

from skillrunner_client import AsyncClient, Client, InternalError, ProtocolError


class FakePeer:
    """A Unix socket that answers each request line with the next canned line."""

    def __init__(self, answers: list[bytes]) -> None:
        self.dir = tempfile.mkdtemp(prefix="skr-py-fake-")
        self.path = os.path.join(self.dir, "fake.sock")
        self.listener = socket.socket(socket.AF_UNIX)
        self.listener.bind(self.path)
        self.listener.listen(1)
        self.answers = answers
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        conn, _ = self.listener.accept()
        with conn, conn.makefile("rb") as reader:
            for answer in self.answers:
                if not reader.readline():
                    return
                conn.sendall(answer)
            reader.readline()  # hold the connection until the client closes it

    def close(self) -> None:
        self.listener.close()
        self.thread.join(5)
        os.unlink(self.path)
        os.rmdir(self.dir)


CASES = [
    (b'{"jsonrpc":"2.0","id":1}\n', "malformed answer from the server: neither result nor error"),
    (b'{"jsonrpc":"2.0","id":1,"result":{"skill":"x"}}\n', "malformed skills.invoke result: no output"),
]


class MalformedAnswerTests(unittest.TestCase):
    def test_sync(self) -> None:
        for answer, message in CASES:
            peer = FakePeer([answer])
            with self.subTest(answer=answer), Client(socket=peer.path) as client, \
                    self.assertRaises(ProtocolError) as caught:
                client.invoke("x", {})
            self.assertEqual((caught.exception.code, caught.exception.message),
                             ("PROTOCOL_ERROR", message))
            peer.close()

    def test_sync_garbage_line_fails_the_calls_in_flight(self) -> None:
        peer = FakePeer([b"not json\n"])
        self.addCleanup(peer.close)
        with Client(socket=peer.path) as client, self.assertRaises(ProtocolError) as caught:
            client.health()
        self.assertTrue(caught.exception.message.startswith("malformed answer from the server:"))

    def test_async(self) -> None:
        async def run(path: str) -> ProtocolError:
            async with AsyncClient(socket=path) as client:
                try:
                    await client.invoke("x", {})
                except ProtocolError as exc:
                    return exc
            raise AssertionError("no ProtocolError")

        for answer, message in CASES + [(b"[1, 2]\n", "malformed answer from the server: "
                                                      "not a JSON object")]:
            peer = FakePeer([answer])
            err = asyncio.run(run(peer.path))
            self.assertEqual((err.code, err.message), ("PROTOCOL_ERROR", message))
            peer.close()

    def test_internal_raises_internal_error(self) -> None:
        peer = FakePeer([b'{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"m",'
                         b'"data":{"code":"INTERNAL","message":"m"}}}\n'])
        self.addCleanup(peer.close)
        with Client(socket=peer.path) as client, self.assertRaises(InternalError) as caught:
            client.health()
        self.assertEqual((caught.exception.code, caught.exception.message), ("INTERNAL", "m"))


if __name__ == "__main__":
    unittest.main()
