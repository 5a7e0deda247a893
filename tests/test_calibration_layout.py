"""The calibration package (issue 39): modules of one concern, none over about 700 lines,
no private name imported from another module (of the package or into it), no circle."""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "mapping" / "calibration"
SOURCES = [p for p in (ROOT / "mapping").rglob("*.py")] + list((ROOT / "tests").glob("*.py"))


def private_imports(path: Path) -> list[str]:
    """``module.name`` of every ``from mapping.calibration.X import _name`` in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "mapping.calibration"):
            found += [f"{node.module}.{a.name}" for a in node.names
                      if a.name.startswith("_")]
    return found


def test_no_private_name_of_calibration_is_imported_elsewhere():
    bad = {str(p.relative_to(ROOT)): got for p in SOURCES if (got := private_imports(p))}
    assert not bad


def test_no_private_name_crosses_a_module_of_the_package():
    bad = []
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and \
                    node.module.startswith("mapping."):
                bad += [f"{path.name}: {node.module}.{a.name}" for a in node.names
                        if a.name.startswith("_")]
    assert not bad


def test_every_module_stays_small():
    sizes = {p.name: len(p.read_text().splitlines()) for p in PACKAGE.glob("*.py")}
    assert max(sizes.values()) <= 700, sizes


def test_the_package_has_no_import_circle():
    graph = nx.DiGraph()
    for path in PACKAGE.glob("*.py"):
        graph.add_node(path.stem)
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                    "mapping.calibration."):
                graph.add_edge(path.stem, node.module.rsplit(".", 1)[1])
    assert nx.is_directed_acyclic_graph(graph), list(nx.simple_cycles(graph))
    assert {"free", "row_model", "solvers", "study"} <= set(graph)
