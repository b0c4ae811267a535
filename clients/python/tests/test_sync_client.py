"""The synchronous Client against a real `skillrunner serve` (simulated provider)."""

from __future__ import annotations

import logging
import os
import re
import signal
import threading
import time
import unittest
from typing import Any

import serve_helper as sh
from serve_helper import (
    Served,
    FAULTS_A,
    FAULTS_B,
    TICKET,
    UNAUTHORIZED_MESSAGE,
    WRONG_TOKEN_MESSAGE,
    Server,
    config_text,
    finish_quick_invocations,
    raw_call,
    wait_until,
)

from skillrunner_client import (
    Client,
    ConfigInvalidError,
    ConnectionLostError,
    ContentFilteredError,
    InputInvalidError,
    InvokeResult,
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

def in_thread(fn: Any) -> tuple[threading.Thread, dict[str, Any]]:
    """Run ``fn`` in a thread; its result or exception lands in the dict."""
    out: dict[str, Any] = {}

    def run() -> None:
        try:
            out["result"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    return thread, out


class FastServerTests(Served, unittest.TestCase):
    """No latency; a TCP listener that needs a token."""

    @staticmethod
    def served() -> Server:
        return Server(config_text(), tcp=True, env={"SKILLRUNNER_TOKEN": sh.TOKEN})

    def test_invoke_returns_the_result(self) -> None:
        result = self.client().invoke("word_stats", {"text": "a b a", "top": 1}, timeout_ms=10000)
        self.assertIsInstance(result, InvokeResult)
        self.assertEqual(result.skill, "word_stats")
        self.assertEqual(result.output, {"words": 3, "lines": 1, "characters": 5,
                                         "top_words": [{"word": "a", "count": 2}]})
        self.assertIsNone(result.review)
        self.assertEqual([a["kind"] for a in result.attempts], ["ok"])
        self.assertEqual(result.metrics["mode"], "handler")

    def test_health_list_describe(self) -> None:
        client = self.client()
        health = client.health()
        self.assertEqual((health["status"], health["skills"], health["connections"]), ("ok", 5, 1))
        ids = [s["id"] for s in client.list()]
        self.assertEqual(ids, ["extract_contact", "review_contact", "route_incident",
                               "triage_ticket", "word_stats"])
        described = client.describe("word_stats")
        self.assertEqual(described["input_schema"]["required"], ["text"])
        self.assertEqual(described["timeout_ms"], 5000)

    def test_input_invalid_names_each_pointer(self) -> None:
        with self.assertRaises(InputInvalidError) as caught:
            self.client().invoke("triage_ticket", {"subject": ""})
        err = caught.exception
        self.assertEqual(err.code, "INPUT_INVALID")
        self.assertEqual(err.message,
                         'input does not match the input_schema of skill "triage_ticket" (2 errors)')
        self.assertEqual(err.details["errors"], [
            {"path": "/subject", "message": "expected at least 1 character, found 0"},
            {"path": "/body", "message": "required property is missing"}])
        self.assertEqual(err.attempts, [])

    def test_skill_not_found(self) -> None:
        client = self.client()
        with self.assertRaises(SkillNotFoundError) as caught:
            client.invoke("no_such_skill", {})
        self.assertEqual((caught.exception.code, caught.exception.message),
                         ("SKILL_NOT_FOUND", 'unknown skill "no_such_skill"'))
        with self.assertRaises(SkillNotFoundError):
            client.describe("no_such_skill")

    def test_protocol_error_carries_the_jsonrpc_code(self) -> None:
        with self.assertRaises(ProtocolError) as caught:
            self.client().invoke("word_stats", {"text": "a"}, timeout_ms=0)
        err = caught.exception
        self.assertEqual(err.code, "PROTOCOL_ERROR")
        self.assertEqual(err.message, "Invalid params: /options/timeout_ms: "
                                      "expected an integer from 1 to 86400000")
        self.assertEqual(err.details, {"jsonrpc_code": -32602, "errors": [
            {"path": "/options/timeout_ms", "message": "expected an integer from 1 to 86400000"}]})

    def test_oversized_request_is_refused_before_sending(self) -> None:
        with self.assertRaises(ProtocolError) as caught:
            self.client().invoke("word_stats", {"text": "x" * (1 << 20)})
        self.assertEqual(caught.exception.details, {"jsonrpc_code": -32600})

    def test_tcp_token(self) -> None:
        with Client(host="127.0.0.1", port=self.server.port, token=sh.TOKEN) as good:
            self.assertEqual(good.invoke("word_stats", {"text": "a"}).output["words"], 1)
        for token, message in (("wrong-token", WRONG_TOKEN_MESSAGE), (None, UNAUTHORIZED_MESSAGE)):
            with Client(host="127.0.0.1", port=self.server.port, token=token) as bad:
                with self.assertRaises(UnauthorizedError) as caught:
                    bad.invoke("word_stats", {"text": "a"})
                self.assertEqual((caught.exception.code, caught.exception.message), ("UNAUTHORIZED", message))
        self.assertNotIn(sh.TOKEN, self.server.log_text())

    def test_cannot_connect_and_closed_client(self) -> None:
        with self.assertRaises(ConnectionLostError) as caught:
            Client(socket=os.path.join(self.server.dir, "absent.sock")).health()
        self.assertTrue(caught.exception.message.startswith("cannot connect to "))
        client = self.client()
        client.health()
        client.close()
        with self.assertRaises(ConnectionLostError) as caught:
            client.health()
        self.assertEqual(caught.exception.message, "the client is closed")

    def test_schema_hash_missing_skill(self) -> None:
        expected = "sha256:" + "0" * 64
        with self.assertRaises(SchemaChangedError) as caught:
            self.client().invoke("no_such_skill", {}, schema_hash=expected)
        err = caught.exception
        self.assertEqual(err.code, "SCHEMA_CHANGED")
        self.assertEqual(err.message, f'skill "no_such_skill" changed on the server: generated '
                                      f'against {expected}, server has no skill "no_such_skill"')
        self.assertEqual(err.details, {"skill": "no_such_skill", "expected": expected,
                                       "actual": None})

    def test_schema_hash(self) -> None:
        client = self.client()
        listed = {s["id"]: s for s in client.list()}
        if "schema_hash" not in listed["word_stats"]:
            self.skipTest("this serve's skills.list has no schema_hash yet (design.md §10.4)")
        for skill, entry in listed.items():
            self.assertRegex(entry["schema_hash"], r"^sha256:[0-9a-f]{64}$")
            described = client.describe(skill)
            if "input_schema" in described and "output_schema" in described:
                self.assertEqual(entry["schema_hash"], sh.schema_hash(
                    described["input_schema"], described["output_schema"]), skill)
        good = listed["word_stats"]["schema_hash"]
        before = raw_call(self.server.socket, "metrics")["requests"]["skills.list"]
        fresh = self.client()
        for _ in range(3):
            fresh.invoke("word_stats", {"text": "a"}, schema_hash=good)
        after = raw_call(self.server.socket, "metrics")["requests"]["skills.list"]
        self.assertEqual(after - before, 1, "skills.list fetched once per connection")
        stale = "sha256:" + "0" * 64
        with self.assertRaises(SchemaChangedError) as caught:
            fresh.invoke("word_stats", {"text": "a"}, schema_hash=stale)
        self.assertEqual(caught.exception.message, f'skill "word_stats" changed on the server: '
                                                   f"generated against {stale}, server has {good}")
        self.assertEqual(caught.exception.details,
                         {"skill": "word_stats", "expected": stale, "actual": good})


class FaultTests(unittest.TestCase):
    """Error codes the simulated provider's fault scripts produce."""

    server_a: Server
    server_b: Server

    @classmethod
    def setUpClass(cls) -> None:
        cls.server_a = Server(config_text(0, FAULTS_A)).start()
        cls.server_b = Server(config_text(0, FAULTS_B)).start()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server_a.cleanup()
        cls.server_b.cleanup()

    def failure(self, server: Server, skill: str, value: Any,
                cls: type[SkillrunnerError]) -> SkillrunnerError:
        with Client(socket=server.socket) as client, self.assertRaises(cls) as caught:
            client.invoke(skill, value, timeout_ms=20000)
        return caught.exception

    def test_max_retries_exceeded(self) -> None:
        err = self.failure(self.server_a, "route_incident", {"report": "x"},
                           MaxRetriesExceededError)
        self.assertEqual((err.code, err.message), ("MAX_RETRIES_EXCEEDED", "the answer still does "
                         "not match the output schema after 1 retry (1 error)"))
        self.assertEqual(err.details["errors"], [{"path": "/severity", "message":
                         'expected one of ["sev1","sev2","sev3","sev4"], found 42'}])
        self.assertEqual([a["kind"] for a in err.attempts], ["validation", "validation"])

    def test_truncated(self) -> None:
        err = self.failure(self.server_a, "extract_contact", {"text": "x"}, TruncatedError)
        self.assertEqual((err.code, err.message),
                         ("TRUNCATED", "the answer was cut off (max_output_tokens 512)"))
        self.assertEqual([a["kind"] for a in err.attempts], ["truncated"])

    def test_judge_error(self) -> None:
        err = self.failure(self.server_a, "review_contact", {"subject": "x"}, JudgeError)
        self.assertEqual(err.code, "JUDGE_ERROR")
        self.assertEqual(err.message, 'the judge of rubric "contact_quality" (model "gpt-4o-mini") '
                         "gave no usable verdict, so the review neither passed nor failed: "
                         "REFUSED: the model refused to answer: I can't help with that.")
        # The members of the error's data beside code, message, attempts and metrics: the version
        # that answered, too.
        self.assertEqual(err.details, {"cause": "REFUSED", "skill_version": 1})

    def test_provider_unavailable(self) -> None:
        err = self.failure(self.server_a, "triage_ticket", TICKET, ProviderUnavailableError)
        self.assertEqual((err.code, err.message), ("PROVIDER_UNAVAILABLE", "the provider is still "
                         "failing after 3 retries: HTTP 503: Service unavailable (simulated "
                         "fault, HTTP 503)."))
        self.assertEqual((err.details["http_status"], err.details["provider_type"],
                          err.details["retry_after_ms"]), (503, "server_error", 10))
        self.assertEqual([a["kind"] for a in err.attempts], ["transient"] * 4)

    def test_refused(self) -> None:
        err = self.failure(self.server_b, "route_incident", {"report": "x"}, RefusedError)
        self.assertEqual((err.code, err.message),
                         ("REFUSED", "the model refused to answer: I can't help with that."))

    def test_content_filtered(self) -> None:
        err = self.failure(self.server_b, "triage_ticket", TICKET, ContentFilteredError)
        self.assertEqual((err.code, err.message), ("CONTENT_FILTERED",
                         "the provider's content filter withheld the answer"))


class ReloadTests(unittest.TestCase):
    """reload() swaps the tree; a broken config raises ConfigInvalidError."""

    def test_reload(self) -> None:
        server = Server(config_text(0, FAULTS_B)).start()
        self.addCleanup(server.cleanup)
        with Client(socket=server.socket) as client:
            with self.assertRaises(RefusedError):
                client.invoke("route_incident", {"report": "x"})
            server.write_config(config_text(0, FAULTS_A))
            self.assertEqual(client.reload(), {"ok": True, "skills": 5, "rubrics": 2,
                                               "diagnostics": [], "failed": []})
            with self.assertRaises(MaxRetriesExceededError):
                client.invoke("route_incident", {"report": "x"})
            server.write_config(config_text()[:-1] + ', "bogus_key": 1}')
            with self.assertRaises(ConfigInvalidError) as caught:
                client.reload()
            err = caught.exception
            self.assertEqual((err.code, err.message), ("CONFIG_INVALID",
                             "reload failed; the previous skills stay in service"))
            self.assertEqual(err.details["diagnostics"][0]["pointer"], "/bogus_key")


class SlowServerTests(Served, unittest.TestCase):
    """Each provider answer takes 2.5 s: pipelining, deadlines and cancellation."""

    @staticmethod
    def served() -> Server:
        return Server(config_text(2500))

    def test_1000_pipelined_calls_on_one_connection(self) -> None:
        client = Client(socket=self.server.socket)
        self.addCleanup(client.close)
        first_id = len(self.server.events())
        started = time.monotonic()
        barrier = threading.Barrier(1000)

        def call(i: int) -> InvokeResult:
            barrier.wait(20)  # every thread ready: the 1000 requests go out together
            return client.invoke("triage_ticket", {"subject": f"ticket {i}", "body": "b"},
                                 timeout_ms=30000)

        jobs = [in_thread(lambda i=i: call(i)) for i in range(1000)]
        wait_until(lambda: client.health()["in_flight"] == 1000, 20, "1000 calls in flight")
        health = client.health()
        self.assertEqual((health["in_flight"], health["connections"]), (1000, 1))
        for thread, _ in jobs:
            thread.join(30)
        self.assertLess(time.monotonic() - started, 20)
        results = [out["result"] for _, out in jobs]
        self.assertTrue(all(r.skill == "triage_ticket" and r.output["priority"] in (1, 2, 3, 4)
                            for r in results))
        events = self.server.events()[first_id:]
        self.assertEqual(len(events), 1000)
        self.assertEqual({(e["conn"], e["outcome"]) for e in events}, {(events[0]["conn"], "ok")})
        self.assertEqual(len({e["id"] for e in events}), 1000)

    def test_server_timeout(self) -> None:
        with Client(socket=self.server.socket) as client, \
                self.assertRaises(SkillTimeoutError) as caught:
            client.invoke("triage_ticket", TICKET, timeout_ms=300)
        err = caught.exception
        self.assertEqual((err.code, err.message), ("TIMEOUT", "invocation timed out after 300 ms"))
        self.assertEqual([a["kind"] for a in err.attempts], ["timeout"])  # cut by the invocation deadline

    def test_client_deadline_sends_cancel(self) -> None:
        with Client(socket=self.server.socket) as client:
            client.health()  # id 1: connected before the server is stopped
            self.gives_up_client_side(lambda: client.invoke("triage_ticket", TICKET, timeout_ms=200))  # id 2
            conn = client.health()  # the connection lives on
            self.assertEqual(conn["connections"], 1)
        self.server.wait_event(lambda e: e["id"] == 2 and e["outcome"] == "CANCELLED")


class OverloadTests(Served, unittest.TestCase):
    """--max-in-flight 1 with one 2-second call holding the slot."""

    @staticmethod
    def served() -> Server:
        return Server(config_text(2000), "--max-in-flight", "1")

    @classmethod
    def ready(cls, server: Server) -> None:
        finish_quick_invocations(server.socket)

    def setUp(self) -> None:
        self.client = Client(socket=self.server.socket)
        self.addCleanup(self.client.close)
        wait_until(lambda: self.client.health()["in_flight"] == 0, 10, "an idle server")
        self.occupant = in_thread(lambda: self.client.invoke("triage_ticket", TICKET))
        self.addCleanup(self.occupant[0].join, 10)
        wait_until(lambda: self.client.health()["in_flight"] == 1, 10, "the slot taken")

    def rejected(self) -> int:
        return sum(raw_call(self.server.socket, "metrics")["rejected"].values())

    def test_retried_after_retry_after_ms_then_succeeds(self) -> None:
        before = self.rejected()
        with self.assertLogs("skillrunner_client", logging.INFO) as logs:
            result = self.client.invoke("word_stats", {"text": "a a"}, timeout_ms=8000)
        self.assertEqual(result.output["words"], 2)
        retries = [r.getMessage() for r in logs.records]
        self.assertGreaterEqual(len(retries), 1)
        # The server's wait: the median of its recent (quick) invocations, at least 10 ms.
        waited = re.fullmatch(r"skillrunner: word_stats OVERLOADED; retry 1 in (\d+) ms", retries[0])
        self.assertIsNotNone(waited, retries[0])
        assert waited is not None
        self.assertTrue(10 <= int(waited.group(1)) < 1000, retries[0])
        self.assertEqual(self.rejected() - before, len(retries))

    def test_five_retries_without_deadline(self) -> None:
        before = self.rejected()
        with self.assertLogs("skillrunner_client", logging.INFO) as logs, \
                self.assertRaises(OverloadedError) as caught:
            self.client.invoke("word_stats", {"text": "a"})
        self.assertEqual(len(logs.records), 5)
        self.assertEqual(self.rejected() - before, 6)
        err = caught.exception
        self.assertEqual((err.code, err.message), ("OVERLOADED", "overloaded: the server has 1 "
                         "invocations in flight (max_in_flight_total)"))
        self.assertEqual(list(err.details), ["retry_after_ms"])
        self.assertTrue(10 <= err.details["retry_after_ms"] < 1000, err.details)
        self.assertEqual(logs.records[-1].getMessage(),
                         f"skillrunner: word_stats OVERLOADED; retry 5 in {err.details['retry_after_ms']} ms")

    def test_no_retry_past_the_deadline(self) -> None:
        before = self.rejected()
        records: list[logging.LogRecord] = []
        handler = logging.Handler(logging.INFO)
        handler.emit = records.append  # type: ignore[method-assign]
        logger = logging.getLogger("skillrunner_client")
        logger.addHandler(handler)
        self.addCleanup(logger.removeHandler, handler)
        self.addCleanup(logger.setLevel, logger.level)
        logger.setLevel(logging.INFO)
        with self.assertRaises(OverloadedError):
            self.client.invoke("word_stats", {"text": "a"}, timeout_ms=150)
        waits = [re.fullmatch(r"skillrunner: word_stats OVERLOADED; retry \d+ in (\d+) ms", r.getMessage())
                 for r in records]
        self.assertTrue(all(waits), [r.getMessage() for r in records])
        # Each retry's wait fitted in what was left of the 150 ms; the slot (2 s away) was never waited for.
        self.assertLess(sum(int(w.group(1)) for w in waits if w), 150)
        self.assertEqual(self.rejected() - before, len(waits) + 1)


class RestartTests(unittest.TestCase):
    """A server that dies or drains under in-flight calls."""

    def setUp(self) -> None:
        self.server = Server(config_text(1500), "--drain-timeout-ms", "300").start()
        self.addCleanup(self.server.cleanup)
        self.client = Client(socket=self.server.socket)
        self.addCleanup(self.client.close)

    def start_call(self) -> tuple[threading.Thread, dict[str, Any]]:
        job = in_thread(lambda: self.client.invoke("triage_ticket", TICKET))
        wait_until(lambda: self.client.health()["in_flight"] == 1, 10, "the call in flight")
        return job

    def test_killed_server_loses_in_flight_calls_and_new_calls_reconnect(self) -> None:
        thread, out = self.start_call()
        self.server.kill()
        thread.join(10)
        err = out["error"]
        self.assertIsInstance(err, ConnectionLostError)
        self.assertEqual(err.code, "CONNECTION_LOST")
        self.assertEqual(err.message, f"the connection to {self.server.socket} was lost: "
                                      "the server closed it")
        self.server.start()
        result = self.client.invoke("word_stats", {"text": "back"})
        self.assertEqual(result.output["words"], 1)
        self.assertEqual(self.client.health()["connections"], 1)

    def test_drain_cancels_in_flight_calls(self) -> None:
        thread, out = self.start_call()
        self.server.signal(signal.SIGTERM)
        thread.join(10)
        err = out["error"]
        self.assertIsInstance(err, SkillCancelledError)
        self.assertEqual((err.code, err.message),
                         ("CANCELLED", "cancelled: the server's drain timeout (300 ms) ran out"))
        self.assertEqual(self.server.proc.wait(10) if self.server.proc else None, 0)
        self.server.start()
        self.assertEqual(self.client.invoke("word_stats", {"text": "a"}).output["words"], 1)


if __name__ == "__main__":
    unittest.main()
