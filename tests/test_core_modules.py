"""The valuation core's modules (``mapping/semantics``, ``mapping/evaluation``) stay
small and import no private name of another module (issue 39)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = sorted(p for d in ("semantics", "evaluation") for p in (ROOT / "mapping" / d).glob("*.py"))
MAX_LINES = 700


@pytest.mark.parametrize("path", CORE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_a_core_module_stays_under_700_lines(path):
    assert len(path.read_text().splitlines()) <= MAX_LINES


@pytest.mark.parametrize("path", CORE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_private_name_crosses_a_module(path):
    private = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            private += [f"{node.module}.{a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
    assert not private, f"{path.name} imports private names: {private}"

