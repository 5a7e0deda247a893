"""Issue 43, item 2: DeSyDe's graphs (forsyde/DeSyDe, shared as
``../shared/data/graphs/desyde_*.xml``) mapped under ``max`` and proven optimal by both
exact engines, with the optimum of exhaustive enumeration as the independent check.

The DeSyDe experiments map these graphs onto a TDMA network-on-chip that the shared data
does not describe; the platform here is the Odroid-XU3-like board of the examples
(four Cortex-A7 and four Cortex-A15 cores, two L2s joined by a coherent interconnect),
the graphs imported with their single processor type ignored (each actor's default
execution time becomes its quanta), so every actor may go on any core."""
from __future__ import annotations

from pathlib import Path

import pytest

import dsl
from dsl.importers.sdf3 import read_sdf3
from mapping.search import cpsat, search
from mapping.semantics.problem import bind_problem

ROOT = Path(__file__).resolve().parents[1]
GRAPHS = ROOT / ".." / "shared" / "data" / "graphs"
DESYDE = sorted(GRAPHS.glob("desyde_*.xml")) if GRAPHS.is_dir() else []
ODROID = ROOT / "examples" / "odroid" / "odroid.moa"
ENGINES = ["milp"] + (["cpsat", "auto"] if cpsat.available() else [])


def desyde_problem(path):
    """The graph at ``path`` on the Odroid board, its processor types ignored."""
    app = read_sdf3(path, "ignore")
    return bind_problem(app, dsl.load_moa(ODROID)[0], {})


@pytest.mark.skipif(not DESYDE, reason="the shared DeSyDe graphs are absent")
@pytest.mark.parametrize("path", DESYDE, ids=lambda p: p.name)
def test_desyde_graph_proven_optimal_as_exhaustive(path):
    problem = desyde_problem(path)
    best = search(problem, "time", "max", strategy="exhaustive")
    assert best.optimal
    for engine in ENGINES:
        res = search(problem, "time", "max", strategy="exact", engine=engine, time_limit=60)
        assert res.optimal, (engine, res.extra.get("stopped"))
        assert res.value == pytest.approx(best.value, rel=cpsat.TOLERANCE), engine
        assert res.extra["bound"] <= best.value * (1 + 1e-12)
