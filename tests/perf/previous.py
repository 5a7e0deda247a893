"""The code of an earlier commit beside this tree's, for benchmarks that compare the two
in one run: :func:`extract` it, and time a command run with either (:func:`child_cpu`)."""
from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: main before issue 39's work (the layout by topic and the one array core)
BASE = "9fa9fb0"


def cli_module(code: Path) -> str:
    """The module that runs ``mapeval`` in the tree ``code``: ``mapping.cli.main`` since
    the layout by topic, ``mapping.cli`` before it."""
    return "mapping.cli.main" if (Path(code) / "mapping" / "cli" / "main.py").exists() \
        else "mapping.cli"


def extract(rev: str, into: Path) -> Path:
    """The tree of commit ``rev`` (``git archive``) in ``into``/base."""
    base = Path(into) / "base"
    base.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
    return base


def child_cpu(argv: list[str], code: Path) -> tuple[subprocess.CompletedProcess, float]:
    """Run ``argv`` with ``code`` first on the import path; its CPU seconds (user and
    system, of the child alone)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = subprocess.run(argv, env=dict(os.environ, PYTHONPATH=str(code)),
                          capture_output=True, text=True, cwd=str(code))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} ... failed ({code}):\n{proc.stderr[-3000:]}")
    return proc, cpu
