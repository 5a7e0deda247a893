"""The ``python`` blocks of README.md, of the documentation (docs/) and of
examples/*/README.md run (issue 14).

Each block runs in a fresh namespace, in a temporary directory holding a copy of
``examples/`` (the blocks read the examples by relative path, and whatever they write
lands in the copy, never in the source tree)."""
from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
READMES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("**/*.md")),
           *sorted((ROOT / "examples").glob("*/README.md"))]
BLOCK = re.compile(r"^```python[ \t]*\n(.*?)^```[ \t]*$", re.DOTALL | re.MULTILINE)


def python_blocks(text: str) -> list[tuple[int, str]]:
    """``(line, code)`` of each fenced ``python`` block of a Markdown text."""
    return [(text.count("\n", 0, m.start()) + 2, m.group(1)) for m in BLOCK.finditer(text)]


BLOCKS = [(path, line, code) for path in READMES
          for line, code in python_blocks(path.read_text(encoding="utf-8"))]


def test_the_readme_has_python_blocks():
    assert any(path == ROOT / "docs" / "api.md" for path, _, _ in BLOCKS)
    assert python_blocks("a\n```python\nx = 1\n```\n```sh\nls\n```\n") == [(3, "x = 1\n")]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    work = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "examples", work / "examples")
    return work


@pytest.mark.parametrize("path, line, code", BLOCKS,
                         ids=[f"{p.relative_to(ROOT)}:{n}" for p, n, _ in BLOCKS])
def test_python_block_runs(path, line, code, workdir, monkeypatch):
    monkeypatch.chdir(workdir)
    compiled = compile("\n" * (line - 1) + code, str(path), "exec")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compiled, {"__name__": "__readme__"})
    assert os.getcwd() == str(workdir)
