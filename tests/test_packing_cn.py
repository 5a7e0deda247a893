"""Issue 43: the packing decision with the CNs charged (``mapping/search/packing_cn.py``)
— by hand, and against exhaustive search: infeasible only below the optimum, the proof
it drives never above it."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import dsl
from mapping.semantics.problem import bind_problem
from mapping.search import cpsat, exact, packing
from mapping.search.bounds import element_tables
from mapping.search.engine import prepare
from mapping.search.packing_cn import Charges
from test_partition_bound import CYCLE, TWO_CORES, problem_of

pytestmark = pytest.mark.skipif(not cpsat.available(), reason="needs ortools")


def decide(setup, T, cn: bool):
    """``packing.decide`` at ``T`` on ``setup``'s own loads, with the CN rows or not,
    at the unit :func:`~mapping.search.packing.prove` would choose."""
    ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
    own = element_tables(ev)[0]
    usable = allowed & np.isfinite(own)
    charges = Charges(ev, allowed)
    unit = packing.UNIT_FLOOR * T * cpsat.FIRST_TRIAL / (own.shape[0] + charges.terms + 1)
    return packing.decide(packing.integer_sizes(own, usable, unit), usable,
                          packing.classes(own, usable), packing.capacity(T, unit),
                          cn=charges.at(unit, packing.EPSILON) if cn else None)


def test_four_actor_cycle_by_hand():
    """Four actors of work ``w`` = 1e-6 s in a cycle of channels costing ``h`` = 1e-5 s
    on the bus, two alike cores (a class modelled PE by PE, so the bus is charged
    exactly).  The own loads alone pack two and two (2w).  With the bus: under ``T`` <
    4w a core holds at most three actors, so the other holds one or more and the split
    cuts at least two channels, 2h > ``T``: infeasible at 3.9w; at 4w all four share a
    core, feasible (the optimum, 4w)."""
    w = 1e-6
    setup = prepare(bind_problem(dsl.loads_sdf(CYCLE)[0], dsl.loads_moa(TWO_CORES)[0]),
                    "time", "max")
    assert decide(setup, 2.01 * w, cn=False)[0] == "feasible"
    assert decide(setup, 3.9 * w, cn=False)[0] == "feasible"
    assert decide(setup, 3.9 * w, cn=True)[0] == "infeasible"
    status, row = decide(setup, 4 * w * (1 + 1e-9), cn=True)
    assert status == "feasible" and len(set(row.tolist())) == 1
    assert exact.mapping_value(setup.objectives.evaluators[0], row) == pytest.approx(4 * w)


def test_proof_from_a_split_cycle_by_hand():
    """The cycle with channels of ``h`` = 1.45w on the bus: one core holds all four
    (4w); three and one load a core 3w and the bus 2h = 2.9w; two and two, adjacent,
    2w and 2.9w (the optimum, the bus the bottleneck); alternate, 4h.  From ``a b c |
    d`` (3w, a PE the bottleneck, the bus at 97% of it) the proof charges the CNs: the
    decision below 3w finds ``a b | c d`` (2.9w), the one below 2.9w is infeasible
    (every split cuts two channels), so 2.9w is proven within ``FIRST``.  From ``a b |
    c d`` itself the bottleneck is the bus: nothing is decided."""
    w = 1e-6
    cycle = CYCLE.replace("size = 10000", "size = 1450")
    setup = prepare(bind_problem(dsl.loads_sdf(cycle)[0], dsl.loads_moa(TWO_CORES)[0]),
                    "time", "max")
    ev = setup.objectives.evaluators[0]
    assert packing.proof(setup, [np.array([0, 0, 1, 1])], charged=True).decisions == ()
    start = np.array([0, 0, 0, 1])
    assert exact.mapping_value(ev, start) == pytest.approx(3 * w)
    got = packing.proof(setup, [start], charged=True)
    assert [d[1] for d in got.decisions] == ["feasible", "infeasible"]
    assert got.packed == pytest.approx(2.9 * w, rel=1e-9)
    assert exact.mapping_value(ev, got.row) == pytest.approx(2.9 * w, rel=1e-9)
    assert got.value == pytest.approx(2.9 * w * (1 - cpsat.FIRST_TRIAL), rel=1e-9)
    assert got.value <= exact.mapping_value(ev, got.row)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(3, 5), seed=st.integers(0, 60),
       kind=st.sampled_from(["bus", "charged", "bridged"]))
def test_never_infeasible_at_the_optimum(n, P, seed, kind):
    """On random instances (a bus, communication charged to the cores, two buses and
    a bridge): the decision with the CNs is never infeasible at exhaustive's optimum
    (its optimal mapping satisfies every row), and the proof with the CNs from a
    random mapping proves at most the optimum; its packings are mappings, whose values
    are at least the optimum."""
    problem, best = problem_of(kind, n, P, seed)
    setup = prepare(problem, "time", "max")
    ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
    assert decide(setup, best * (1 + 1e-9), cn=True)[0] != "infeasible"
    own = element_tables(ev)[0]
    start = setup.space.random(np.random.default_rng(seed), 1)[0]
    got = packing.prove(own, allowed, start, charges=Charges(ev, allowed))
    assert got.value is None or got.value <= best * (1 + 1e-12)
    if got.row is not None:
        assert exact.mapping_value(ev, got.row) >= best * (1 - 1e-12)
        assert got.packed == pytest.approx(exact.mapping_value(ev, got.row), rel=1e-12)
