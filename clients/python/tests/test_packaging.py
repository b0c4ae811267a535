"""The package's metadata: its version is written once (``__version__``), and its license."""

from __future__ import annotations

import email.parser
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import tomllib
import unittest
from pathlib import Path

import serve_helper  # noqa: F401 - puts the package under test first on sys.path

import skillrunner_client

PROJECT = Path(__file__).resolve().parents[1]


def can_build_metadata() -> bool:
    """setuptools with its bdist_wheel (from the wheel package before setuptools 70.1)."""
    spec = importlib.util.find_spec("setuptools")
    if spec is None or spec.origin is None:
        return False
    own = Path(spec.origin).parent / "command" / "bdist_wheel.py"
    return own.exists() or importlib.util.find_spec("wheel") is not None

BUILD_METADATA = """
import sys
from setuptools import build_meta
print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))
"""


class PackagingTests(unittest.TestCase):
    """pyproject.toml against the package, through setuptools as pip would build it."""

    def test_pyproject_reads_the_version_from_the_package(self) -> None:
        with open(PROJECT / "pyproject.toml", "rb") as f:
            project = tomllib.load(f)
        self.assertNotIn("version", project["project"])
        self.assertIn("version", project["project"]["dynamic"])
        self.assertEqual(project["tool"]["setuptools"]["dynamic"]["version"],
                         {"attr": "skillrunner_client.__version__"})

    @unittest.skipUnless(can_build_metadata(), "no setuptools with bdist_wheel (python3-wheel)")
    def test_built_metadata_has_the_packages_version_and_license(self) -> None:
        with tempfile.TemporaryDirectory(prefix="skr-py-meta-") as tmp:
            source = Path(tmp) / "src"  # a copy: the build writes its egg-info next to pyproject
            shutil.copytree(PROJECT, source, ignore=shutil.ignore_patterns("tests", "__pycache__"))
            out = Path(tmp) / "out"
            out.mkdir()
            done = subprocess.run([sys.executable, "-c", BUILD_METADATA, str(out)], cwd=source,
                                  capture_output=True, text=True, timeout=120)
            self.assertEqual(done.returncode, 0, done.stderr[-3000:])
            dist_info = done.stdout.strip().splitlines()[-1]
            metadata = email.parser.Parser().parsestr(
                (out / dist_info / "METADATA").read_text(encoding="utf-8"))
        self.assertEqual(metadata["Name"], "skillrunner-client")
        self.assertEqual(metadata["Version"], skillrunner_client.__version__)
        self.assertEqual(metadata["License"], "Apache-2.0")


if __name__ == "__main__":
    unittest.main()
