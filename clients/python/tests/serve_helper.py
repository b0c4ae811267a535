"""Start a real `skillrunner serve` for the client tests, and read its log."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
sys.path.insert(0, str(HERE.parent))  # the package under test, not an installed copy

BINARY = os.environ.get("SKILLRUNNER_BINARY") or str(REPO / "build" / "skillrunner")
TOKEN = "client-test-token"  # a throwaway token for the TCP listener under test

TICKET = {"subject": "Cannot log in", "body": "Since this morning."}
UNAUTHORIZED_MESSAGE = (
    'unauthorized: this listener needs a token: send {"method":"auth","params":{"token":\u2026}}'
    ' first, or "auth" in each request')
WRONG_TOKEN_MESSAGE = "unauthorized: the token is wrong"
# Fault scripts that make every attempt of a skill fail one way (docs/simulated.md).
FAULTS_A = [
    {"skill": "route_incident", "attempt": [1, 2, 3], "fault": "wrong_type", "path": "/severity"},
    {"skill": "extract_contact", "attempt": [1, 2, 3], "fault": "truncate"},
    {"skill": "review_contact", "attempt": [1, 2, 3], "fault": "refusal"},
    {"skill": "triage_ticket", "attempt": [1, 2, 3, 4, 5], "fault": "unavailable",
     "status": 503, "retry_after_ms": 10},
]
FAULTS_B = [
    {"skill": "route_incident", "attempt": [1, 2, 3], "fault": "refusal"},
    {"skill": "triage_ticket", "attempt": [1, 2, 3], "fault": "content_filter"},
]

_SCRUBBED = ("OPENAI_", "ANTHROPIC_", "GEMINI_", "SKILLRUNNER_", "OTEL_")


def config_text(latency_ms: int = 0, faults: list[dict[str, Any]] | None = None) -> str:
    """A skillrunner.yaml for the repo's skills: every model on the simulated provider."""
    provider: dict[str, Any] = {"kind": "simulated", "latency_ms": latency_ms}
    if faults:
        provider["faults"] = faults
    config = {
        "providers": {"simulated": provider},
        "models": {
            "gpt-4o-mini": {"provider": "simulated", "structured_output": "native"},
            "llama3.1:8b": {"provider": "simulated", "structured_output": "none"},
        },
    }
    return json.dumps(config, indent=1)  # JSON is YAML


def schema_hash(input_schema: Any, output_schema: Any) -> str:
    """sha256 over the canonical JSON of {"input", "output"} (design.md §10.4)."""
    text = json.dumps({"input": input_schema, "output": output_schema},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


class Server:
    """One `skillrunner serve --provider simulated` on a temp Unix socket (and TCP)."""

    def __init__(self, config: str, *args: str, tcp: bool = False,
                 env: dict[str, str] | None = None) -> None:
        self.dir = tempfile.mkdtemp(prefix="skr-py-")
        self.socket = os.path.join(self.dir, "s.sock")
        self.config_path = os.path.join(self.dir, "skillrunner.yaml")
        self.log_path = os.path.join(self.dir, "serve.log")
        self.write_config(config)
        self.args = list(args)
        self.tcp = tcp
        self.env = env or {}
        self.port = 0
        self._listened = 0
        self.proc: subprocess.Popen[bytes] | None = None

    def write_config(self, text: str) -> None:
        """Replace the config file (a reload picks it up)."""
        Path(self.config_path).write_text(text)

    def start(self) -> Server:
        """Start serve and wait until it listens (on failure: stop it, remove the folder)."""
        try:
            return self._start()
        except BaseException:
            self.cleanup()
            raise

    def _start(self) -> Server:
        if not os.path.exists(BINARY):
            raise RuntimeError(f"no skillrunner binary at {BINARY} (set SKILLRUNNER_BINARY)")
        cmd = [BINARY, "--provider", "simulated", "--config", self.config_path,
               "--log-level", "info", "--log-format", "json",
               "serve", "--socket", self.socket, *self.args]
        if self.tcp:
            cmd += ["--listen", "127.0.0.1:0"]
        env = {k: v for k, v in os.environ.items() if not k.startswith(_SCRUBBED)}
        env.update(self.env)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(cmd, cwd=REPO, stdin=subprocess.DEVNULL, stdout=log,
                                         stderr=subprocess.STDOUT, env=env)
        self._wait_listening()
        return self

    def _wait_listening(self) -> None:
        assert self.proc is not None
        marker = "skillrunner: listening on"
        end = time.monotonic() + 15
        while self.log_text().count(marker) <= self._listened:
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve exited {self.proc.returncode}:\n{self.log_text()}")
            if time.monotonic() > end:
                raise RuntimeError("serve did not start listening within 15 s")
            time.sleep(0.02)
        self._listened += 1
        ports = re.findall(r"\(port (\d+)\)", self.log_text())
        if self.tcp and ports:
            self.port = int(ports[-1])

    def log_text(self) -> str:
        """Everything serve wrote so far."""
        try:
            return Path(self.log_path).read_text(errors="replace")
        except FileNotFoundError:
            return ""

    def events(self, event: str = "invoke") -> list[dict[str, Any]]:
        """The JSON log events of that kind, in order."""
        found = []
        for line in self.log_text().splitlines():
            if line.startswith("{"):
                obj = json.loads(line)
                if obj.get("event") == event:
                    found.append(obj)
        return found

    def wait_event(self, pred: Callable[[dict[str, Any]], bool],
                   timeout_s: float = 10) -> dict[str, Any]:
        """Wait for an invoke event matching ``pred``; fail after ``timeout_s``."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            for ev in self.events():
                if pred(ev):
                    return ev
            time.sleep(0.05)
        raise AssertionError(f"no matching invoke event in the log:\n{self.log_text()[-3000:]}")

    def signal(self, sig: int) -> None:
        """Send ``sig`` to serve."""
        assert self.proc is not None
        self.proc.send_signal(sig)

    def pause(self) -> None:
        """SIGSTOP, and wait until every thread of serve is stopped."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGSTOP)
        task_dir = f"/proc/{self.proc.pid}/task"

        def stopped() -> bool:
            for tid in os.listdir(task_dir):
                try:
                    stat = Path(f"{task_dir}/{tid}/stat").read_text()
                except FileNotFoundError:
                    continue  # a thread that just ended
                if stat.rsplit(")", 1)[1].split()[0] not in ("T", "t"):
                    return False
            return True

        wait_until(stopped, 5, "serve stopped")

    def resume(self) -> None:
        """SIGCONT after pause()."""
        self.signal(signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL: the server dies without answering anything."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM and wait (SIGKILL after 10 s)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)

    def cleanup(self) -> None:
        """Stop serve and remove its folder."""
        self.stop()
        shutil.rmtree(self.dir, ignore_errors=True)


class Served:
    """A test class's own `skillrunner serve`: ``served()`` makes it; it starts
    before the class's first test (then ``ready`` runs) and stops after its last."""

    server: Server

    @staticmethod
    def served() -> Server:
        raise NotImplementedError

    @classmethod
    def ready(cls, server: Server) -> None:
        """Runs once the server has started."""

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = cls.served().start()
        cls.ready(cls.server)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.cleanup()

    def gives_up_client_side(self, call: Callable[[], Any]) -> None:
        """Runs ``call`` (a call with ``timeout_ms=200``) while the server is stopped: it
        raises SkillTimeoutError on the client's side, after the deadline and its grace."""
        from skillrunner_client import SkillTimeoutError

        test: Any = self
        self.server.pause()
        try:
            started = time.monotonic()
            with test.assertRaises(SkillTimeoutError) as caught:
                call()
            waited = time.monotonic() - started
        finally:
            self.server.resume()
        test.assertEqual(caught.exception.details, {"timeout_ms": 200, "client_side": True})
        test.assertGreaterEqual(waited, 1.2)
        test.assertLess(waited, 3)

    def client(self) -> Any:
        """A Client of the class's server on its socket, closed after the test."""
        from skillrunner_client import Client  # the package under test, imported late

        client = Client(socket=self.server.socket)
        self.addCleanup(client.close)  # type: ignore[attr-defined]
        return client


# A skill with a canary rollout (docs/rollouts.md): version 1 stable, version 2 its candidate on 10%.
ROLLOUT_SKILL = "greet"
_GREET = """id: greet
version: {version}
description: Greet someone{how}.
template_type: LLM_JSON_GENERATION
model: gpt-4o-mini
input_schema: {{ type: object, required: [name], properties: {{ name: {{ type: string }} }} }}
output_schema:
  type: object
  required: [greeting]
  additionalProperties: false
  properties: {{ greeting: {{ type: string }} }}
prompt: {{ system: Greet the person{how}., user: "{{{{input.name}}}}" }}
"""


def rollout_server() -> Server:
    """A serve (not started) on a tree of one skill, ``greet``, with a rollout: skill.yaml at
    version 1 and candidate.yaml at version 2 with traffic 0.1; rollout state in its own folder."""
    server = Server(config_text())
    skill_dir = Path(server.dir) / "skills" / ROLLOUT_SKILL
    skill_dir.mkdir(parents=True)
    (skill_dir / "skill.yaml").write_text(
        _GREET.format(version=1, how="") + "rollout: { candidate: candidate.yaml, traffic: 0.1 }\n")
    (skill_dir / "candidate.yaml").write_text(_GREET.format(version=2, how=" warmly"))
    server.args += ["--skills", str(skill_dir.parent), "--state-dir", os.path.join(server.dir, "state")]
    return server


def raw_call(path: str, method: str, params: Any = None) -> Any:
    """One request on its own connection, without the client under test."""
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        msg["params"] = params
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(path)
        sock.sendall(json.dumps(msg).encode() + b"\n")
        with sock.makefile("rb") as reader:
            return json.loads(reader.readline())["result"]


def finish_quick_invocations(path: str, count: int = 15) -> None:
    """Run ``count`` quick word_stats invocations to their end: OVERLOADED's
    retry_after_ms at an in-flight limit is the median of recent durations, so a
    class whose slot is then held by a slow call gets short waits."""
    for _ in range(count):
        raw_call(path, "skills.invoke", {"skill": "word_stats", "input": {"text": "a"}})


def wait_until(pred: Callable[[], bool], timeout_s: float = 10, what: str = "condition") -> None:
    """Poll ``pred`` until true; fail after ``timeout_s``."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")
