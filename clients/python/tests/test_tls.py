"""Client and AsyncClient with tls=True against a real `skillrunner serve --tls-cert`.

The certificates are made here with the openssl command line: a test CA, a server
certificate it signs for IP:127.0.0.1 and DNS:localhost, a client certificate
"/O=Example/CN=billing", and a second CA that signed nothing of the server's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from serve_helper import Server, config_text, wait_until

from skillrunner_client import AsyncClient, Client, ConnectionLostError

WORDS = {"text": "a b a", "top": 1}
WORD_STATS = {"words": 3, "lines": 1, "characters": 5, "top_words": [{"word": "a", "count": 2}]}


def openssl(cwd: str, *args: str) -> None:
    """Run one openssl command in ``cwd`` (its output only shown when it fails)."""
    done = subprocess.run(["openssl", *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"openssl {' '.join(args)} failed:\n{done.stderr}")


def make_certs(folder: str) -> dict[str, str]:
    """Write the test PKI into ``folder``; return the paths by name."""
    openssl(folder, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
            "-out", "ca.pem", "-subj", "/CN=test CA", "-days", "2")
    openssl(folder, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "other-ca.key",
            "-out", "other-ca.pem", "-subj", "/CN=another CA", "-days", "2")
    with open(os.path.join(folder, "server.ext"), "w") as ext:
        ext.write("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    openssl(folder, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key",
            "-out", "server.csr", "-subj", "/CN=localhost")
    openssl(folder, "x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "server.pem", "-days", "2", "-extfile", "server.ext")
    openssl(folder, "req", "-newkey", "rsa:2048", "-nodes", "-keyout", "client.key",
            "-out", "client.csr", "-subj", "/O=Example/CN=billing")
    openssl(folder, "x509", "-req", "-in", "client.csr", "-CA", "ca.pem", "-CAkey", "ca.key",
            "-CAcreateserial", "-out", "client.pem", "-days", "2")
    names = ["ca.pem", "other-ca.pem", "server.pem", "server.key", "client.pem", "client.key"]
    return {name: os.path.join(folder, name) for name in names}


class TlsCase(unittest.TestCase):
    """A class's own PKI and `skillrunner serve --listen 127.0.0.1:0 --tls-cert ...`."""

    certs: dict[str, str]
    server: Server
    _pki: str
    mutual = False

    @classmethod
    def setUpClass(cls) -> None:
        cls._pki = tempfile.mkdtemp(prefix="skr-py-tls-")
        try:
            cls.certs = make_certs(cls._pki)
            config = json.loads(config_text())
            args = ["--tls-cert", cls.certs["server.pem"], "--tls-key", cls.certs["server.key"]]
            if cls.mutual:
                config["tenants"] = {"billing": {"tls_subject": "CN=billing,O=Example"}}
                args += ["--tls-client-ca", cls.certs["ca.pem"]]
            cls.server = Server(json.dumps(config, indent=1), *args, tcp=True).start()
        except BaseException:
            shutil.rmtree(cls._pki, ignore_errors=True)
            raise

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.cleanup()
        shutil.rmtree(cls._pki, ignore_errors=True)

    def tls_client(self, host: str = "127.0.0.1", **kwargs: Any) -> Client:
        """A Client of the server with tls=True, closed after the test."""
        client = Client(host=host, port=self.server.port, tls=True, **kwargs)
        self.addCleanup(client.close)
        return client


class TlsTests(TlsCase):
    """TLS without client certificates: the server is verified, calls go through."""

    def test_tls_health_and_invoke(self) -> None:
        client = self.tls_client(ca_file=self.certs["ca.pem"])
        health = client.health()
        self.assertEqual(health["status"], "ok")
        self.assertIsNotNone(health["listeners"]["tls"])
        result = client.invoke("word_stats", WORDS, timeout_ms=10000)
        self.assertEqual(result.output, WORD_STATS)
        self.assertEqual(result.metrics["mode"], "handler")

    def test_tls_new_connections_answer_their_first_call(self) -> None:
        # The first request goes out while the reader takes in the server's TLS 1.3 session
        # tickets: it must not be lost (a 5 s deadline shows one that was).
        for _ in range(40):
            with Client(host="127.0.0.1", port=self.server.port, tls=True,
                        ca_file=self.certs["ca.pem"]) as client:
                self.assertEqual(client.invoke("word_stats", {"text": "a"}, timeout_ms=5000)
                                 .output["words"], 1)

    def test_tls_pipelined_calls_from_threads_and_a_large_input(self) -> None:
        client = self.tls_client(ca_file=self.certs["ca.pem"])
        text = "word " * 100_000  # 500 KB: many TLS records each way
        with ThreadPoolExecutor(8) as pool:
            big = pool.submit(client.invoke, "word_stats", {"text": text}, timeout_ms=20000)
            healths = [pool.submit(client.health) for _ in range(64)]
            self.assertTrue(all(h.result()["status"] == "ok" for h in healths))
            self.assertEqual(big.result().output["words"], 100_000)

    def test_tls_checks_the_host_name_localhost(self) -> None:
        client = self.tls_client(host="localhost", ca_file=self.certs["ca.pem"])
        self.assertEqual(client.invoke("word_stats", WORDS).output, WORD_STATS)

    def test_tls_wrong_ca_is_a_connection_error(self) -> None:
        client = self.tls_client(ca_file=self.certs["other-ca.pem"])
        with self.assertRaises(ConnectionLostError) as caught:
            client.health()
        self.assertRegex(caught.exception.message,
                         rf"^cannot connect to 127\.0\.0\.1:{self.server.port}: .*"
                         r"certificate verify failed")
        self.assertEqual(caught.exception.details, {"address": f"127.0.0.1:{self.server.port}"})

    def test_tls_system_cas_do_not_trust_the_test_ca(self) -> None:
        with self.assertRaisesRegex(ConnectionLostError, "certificate verify failed"):
            self.tls_client().health()

    def test_tls_plain_client_is_refused(self) -> None:
        client = Client(host="127.0.0.1", port=self.server.port, connect_timeout_s=5)
        self.addCleanup(client.close)
        with self.assertRaises(ConnectionLostError) as caught:
            client.health()
        # The server says why before it closes (design.md §12.1), and the error carries its words.
        self.assertEqual(caught.exception.message,
                         f"the connection to 127.0.0.1:{self.server.port} was closed by the server: "
                         "this listener requires TLS: connect with --tls / tls=True")

    def test_tls_arguments_are_checked(self) -> None:
        with self.assertRaisesRegex(ValueError, "Unix socket"):
            Client(socket=self.server.socket, tls=True)
        with self.assertRaisesRegex(ValueError, "need tls=True"):
            Client(host="127.0.0.1", port=self.server.port, ca_file=self.certs["ca.pem"])
        with self.assertRaisesRegex(ValueError, "key_file needs cert_file"):
            AsyncClient(host="127.0.0.1", port=1, tls=True, key_file=self.certs["client.key"])
        with self.assertRaises(FileNotFoundError):
            Client(host="127.0.0.1", port=1, tls=True, ca_file=os.path.join(self._pki, "nope.pem"))


class AsyncTlsTests(TlsCase, unittest.IsolatedAsyncioTestCase):
    """AsyncClient over TLS."""

    async def test_async_tls_health_and_invoke(self) -> None:
        async with AsyncClient(host="127.0.0.1", port=self.server.port, tls=True,
                               ca_file=self.certs["ca.pem"]) as client:
            self.assertEqual((await client.health())["status"], "ok")
            result = await client.invoke("word_stats", WORDS, timeout_ms=10000)
            self.assertEqual(result.output, WORD_STATS)

    async def test_async_tls_wrong_ca_is_a_connection_error(self) -> None:
        async with AsyncClient(host="127.0.0.1", port=self.server.port, tls=True,
                               ca_file=self.certs["other-ca.pem"]) as client:
            with self.assertRaises(ConnectionLostError) as caught:
                await client.health()
        self.assertRegex(caught.exception.message,
                         rf"^cannot connect to 127\.0\.0\.1:{self.server.port}: .*"
                         r"certificate verify failed")


class MutualTlsTests(TlsCase, unittest.IsolatedAsyncioTestCase):
    """serve --tls-client-ca, with the tenant billing named by its certificate's subject."""

    mutual = True

    def test_mtls_without_a_certificate_fails(self) -> None:
        client = self.tls_client(ca_file=self.certs["ca.pem"])
        with self.assertRaises(ConnectionLostError) as caught:
            client.health()
        # TLS 1.3: the handshake ends on the client's side before the server checks the
        # client's certificate, so the refusal comes as the connection lost, with its alert.
        self.assertRegex(caught.exception.message,
                         rf"^the connection to 127\.0\.0\.1:{self.server.port} was lost: "
                         r".*certificate required")
        wait_until(lambda: "peer did not return a certificate" in self.server.log_text(), 10,
                   "the server's handshake failure in its log")

    async def test_mtls_async_without_a_certificate_fails(self) -> None:
        async with AsyncClient(host="127.0.0.1", port=self.server.port, tls=True,
                               ca_file=self.certs["ca.pem"]) as client:
            with self.assertRaisesRegex(ConnectionLostError, "certificate required"):
                await client.health()

    def served_as_billing(self, before: int) -> None:
        """The invocations logged after the first ``before`` are all the billing tenant's."""
        wait_until(lambda: len(self.server.events()) > before, 10, "the invoke event")
        events = self.server.events()[before:]
        self.assertEqual([(e["skill"], e["tenant"], e["outcome"]) for e in events],
                         [("word_stats", "billing", "ok")])

    def test_mtls_billing_certificate_is_the_billing_tenant(self) -> None:
        client = self.tls_client(ca_file=self.certs["ca.pem"], cert_file=self.certs["client.pem"],
                                 key_file=self.certs["client.key"])
        before = len(self.server.events())
        result = client.invoke("word_stats", WORDS, timeout_ms=10000)
        self.assertEqual(result.output, WORD_STATS)
        self.served_as_billing(before)

    async def test_mtls_async_billing_certificate_is_served(self) -> None:
        before = len(self.server.events())
        async with AsyncClient(host="localhost", port=self.server.port, tls=True,
                               ca_file=self.certs["ca.pem"], cert_file=self.certs["client.pem"],
                               key_file=self.certs["client.key"]) as client:
            self.assertEqual((await client.health())["status"], "ok")
            result = await client.invoke("word_stats", WORDS, timeout_ms=10000)
        self.assertEqual(result.output, WORD_STATS)
        self.served_as_billing(before)

if __name__ == "__main__":
    unittest.main()
