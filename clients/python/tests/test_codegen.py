"""`skillrunner codegen python`: the generated module for the shipped skills passes mypy --strict
(with a usage file whose `type: ignore` lines must each be needed: --strict warns on unused ones),
a generated call against a real serve returns the typed output, a compatible schema change on the
server is accepted, and a breaking one (served at a higher version) makes the generated call raise
SchemaChangedError naming both versions, on connections opened before the reload and after it."""

from __future__ import annotations

import importlib.util
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from types import ModuleType

from serve_helper import BINARY, REPO, TICKET, Server, config_text

from skillrunner_client import Client, ConfigInvalidError, ReviewFailedError, SchemaChangedError

PACKAGE = Path(__file__).resolve().parents[1]

USAGE = '''from skillrunner_client import Client
from skillrunner_skills import ExtractContactOutput, TriageTicketOutput, extract_contact, triage_ticket, word_stats


def use(client: Client) -> TriageTicketOutput:
    out = triage_ticket(client, {"subject": "Cannot log in", "body": "Since this morning."}, timeout_ms=5000)
    priority: int = out["priority"]
    needs_human: bool = out["needs_human"]
    wrong: int = out["category"]  # type: ignore[assignment]
    triage_ticket(client, {"subject": "x"})  # type: ignore[typeddict-item]
    triage_ticket(client, {"subject": "x", "body": "y", "customer_tier": "gold"})  # type: ignore[typeddict-item]
    stats = word_stats(client, {"text": "a b a", "top": 1})
    word: str = stats["top_words"][0]["word"]
    print(priority, needs_human, wrong, word)
    contact: ExtractContactOutput = extract_contact(client, {"text": "Ada"}, allow_review_failure=True)
    print(contact)
    return out
'''


def generate(out: Path, *args: str) -> Path:
    """Run codegen into `out` (from the repo's tree unless `args` name another); the module's path."""
    subprocess.run([BINARY, *args, "codegen", "python", "--out", str(out)], cwd=REPO, check=True,
                   capture_output=True)
    return out / "skillrunner_skills.py"


def load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"generated_{abs(hash(path))}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class GeneratedPythonTest(unittest.TestCase):
    def setUp(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="skr-codegen-"))
        self.addCleanup(shutil.rmtree, self.dir, True)

    def test_shipped_skills_pass_mypy_strict_and_a_generated_call_returns_the_output(self) -> None:
        module_path = generate(self.dir)
        (self.dir / "usage.py").write_text(USAGE)
        mypy = subprocess.run(
            ["/usr/bin/python3", "-m", "mypy", "--strict", "--cache-dir", str(self.dir / ".mypy"),
             "skillrunner_skills.py", "usage.py"],
            cwd=self.dir, env={"MYPYPATH": str(PACKAGE), "PATH": "/usr/bin:/bin"}, capture_output=True, text=True)
        self.assertEqual(mypy.returncode, 0, mypy.stdout + mypy.stderr)
        server = Server(config_text()).start()
        self.addCleanup(server.cleanup)
        module = load(module_path)
        with Client(socket=server.socket) as client:
            out = module.triage_ticket(client, TICKET, timeout_ms=5000)
        self.assertIn(out["priority"], (1, 2, 3, 4))
        self.assertIn(out["category"], ("billing", "bug", "account", "feature_request", "other"))
        self.assertIsInstance(out["needs_human"], bool)

    def test_an_answer_its_review_gate_failed_raises_review_failed_unless_allowed(self) -> None:
        module = load(generate(self.dir))
        # extract_contact's gate: the generation (1), its judge (2), the regeneration (3), the judge (4).
        faults = [{"skill": "extract_contact.review", "attempt": [2, 4], "fault": "verdict", "verdict": "fail"}]
        server = Server(config_text(faults=faults)).start()
        self.addCleanup(server.cleanup)
        text = {"text": "Ada Lovelace, ada@example.com, +44 20 7946 0000"}
        with Client(socket=server.socket) as client:
            with self.assertRaises(ReviewFailedError) as caught:
                module.extract_contact(client, text, timeout_ms=10000)
            allowed = module.extract_contact(client, text, timeout_ms=10000, allow_review_failure=True)
            result = client.invoke("extract_contact", text, timeout_ms=10000)
        error = caught.exception
        self.assertEqual(error.code, "REVIEW_FAILED")
        self.assertIs(error.review["pass"], False)
        self.assertEqual(error.message, "the review gate of skill extract_contact failed its answer: "
                         + "; ".join(error.review["issues"]))
        self.assertEqual(len(error.attempts), 4)
        self.assertIsInstance(error.output, dict)
        self.assertIn("name", allowed)
        self.assertIs(result.review_passed, False)
        with self.assertRaises(ReviewFailedError):
            result.raise_for_review()
        with Client(socket=server.socket) as client:
            self.assertIsNone(client.invoke("triage_ticket", TICKET).review_passed)

    def test_a_compatible_change_is_accepted_and_a_breaking_one_raises_on_old_and_new_connections(self) -> None:
        skills = self.dir / "skills"
        shutil.copytree(REPO / "skills", skills)
        module = load(generate(self.dir / "gen", "--skills", str(skills)))
        generated = module.SCHEMA_HASHES["triage_ticket"]
        self.assertEqual(module.SKILL_VERSIONS["triage_ticket"], 1)
        skill_file = skills / "triage_ticket" / "skill.yaml"
        text = skill_file.read_text()
        server = Server(config_text(), "--skills", str(skills)).start()
        self.addCleanup(server.cleanup)
        with Client(socket=server.socket) as early:
            module.triage_ticket(early, TICKET)
            # An optional input member: compatible, the version stays 1.
            text = text.replace("    customer_tier: { enum: [free, pro, enterprise] }\n",
                                "    customer_tier: { enum: [free, pro, enterprise] }\n"
                                "    locale: { type: string }\n")
            skill_file.write_text(text)
            self.assertTrue(early.reload()["ok"])
            # skills.changed reaches `early` before the answer to a request it sends after the reload
            # (early.list() would refresh the copy itself; another connection's does not).
            early.health()
            with Client(socket=server.socket) as other:
                compatible = next(s["schema_hash"] for s in other.list() if s["id"] == "triage_ticket")
            self.assertNotEqual(compatible, generated)
            self.assertIn(module.triage_ticket(early, TICKET)["category"],
                          ("billing", "bug", "account", "feature_request", "other"))
            with Client(socket=server.socket) as fresh:
                module.triage_ticket(fresh, TICKET)
            # A required output member removed: refused while the version stays 1 ...
            broken = text.replace("required: [priority, category, summary, needs_human]",
                                  "required: [priority, category, summary]")
            broken = broken.replace("    needs_human: { type: boolean }\n", "")
            skill_file.write_text(broken)
            with self.assertRaises(ConfigInvalidError) as refused:
                early.reload()
            diagnostic = refused.exception.details["diagnostics"][0]
            self.assertEqual((diagnostic["code"], diagnostic["line"], diagnostic["col"], diagnostic["pointer"]),
                             ("breaking-change", 4, 10, "/version"))
            self.assertEqual(diagnostic["message"],
                             "the schemas changed in a way that breaks callers, and version is "
                             "still 1 (raise it): output /needs_human: the member \"needs_human\" was removed")
            module.triage_ticket(early, TICKET)
            # ... and served at version 2: the stubs of version 1 raise, on the old connection too.
            skill_file.write_text(broken.replace("version: 1\n", "version: 2\n"))
            self.assertTrue(early.reload()["ok"])
            early.health()
            with Client(socket=server.socket) as other:
                now = next(s["schema_hash"] for s in other.list() if s["id"] == "triage_ticket")
            with self.assertRaises(SchemaChangedError) as on_early:
                module.triage_ticket(early, TICKET)
            with Client(socket=server.socket) as fresh, self.assertRaises(SchemaChangedError) as on_fresh:
                module.triage_ticket(fresh, TICKET)
        for caught in (on_early, on_fresh):
            self.assertEqual(caught.exception.code, "SCHEMA_CHANGED")
            self.assertEqual(caught.exception.message,
                             'skill "triage_ticket" changed on the server in a way that breaks this caller: '
                             f"generated against version 1 ({generated}), server has version 2 ({now}); "
                             "regenerate the stubs")
            self.assertEqual(caught.exception.details["actual_version"], 2)

    def test_a_hand_written_schema_hash_without_a_version_must_match(self) -> None:
        server = Server(config_text()).start()
        self.addCleanup(server.cleanup)
        with Client(socket=server.socket) as client:
            now = next(s["schema_hash"] for s in client.list() if s["id"] == "triage_ticket")
            with self.assertRaises(SchemaChangedError) as caught:
                client.invoke("triage_ticket", TICKET, schema_hash="sha256:00")
        self.assertEqual(caught.exception.message,
                         f'skill "triage_ticket" changed on the server: generated against sha256:00, '
                         f"server has {now}")

if __name__ == "__main__":
    sys.exit(unittest.main())
