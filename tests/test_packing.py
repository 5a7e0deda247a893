"""Issue 43: the packing bound (``mapping/search/packing.py``) — PEs loaded by their
actors' own loads alone, decided by CP-SAT — against exhaustive enumeration on random
instances (communication charged to the cores or not) and by hand."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mapping.search import cpsat, packing, search
from mapping.search.engine import prepare
from test_cpsat import small

pytestmark = pytest.mark.skipif(not cpsat.available(), reason="needs ortools")


def test_by_hand():
    """Sizes 3, 3 and 2 on two alike PEs: the best packing is 3 + 2 | 3, so no
    mapping's bottleneck is below 5.  From a mapping of 5 the first decision (just
    below 5) is infeasible; from one of 6 the bisection closes on 5 from both sides."""
    own = np.array([[3.0, 3.0], [3.0, 3.0], [2.0, 2.0]])
    allowed = np.ones_like(own, dtype=bool)
    assert packing.interchangeable(own, allowed) == [[0, 1]]
    got = packing.bound(own, allowed, 5.0)
    assert got.value == pytest.approx(5.0 * (1 - packing.FIRST), rel=1e-12)
    assert [d[1] for d in got.decisions] == ["infeasible"]
    got = packing.bound(own, allowed, 6.0, floor=1.0)
    assert got.packed == 5.0 and 5.0 * (1 - 2 * packing.RESOLUTION) <= got.value <= 5.0
    assert got.decisions[0][1] == "feasible"
    # a third actor only the second PE may run: 3 + 3 | 2 is forced, 6 proven
    allowed[0, 0] = allowed[1, 0] = False
    assert packing.interchangeable(own, allowed) == []
    assert packing.bound(own, allowed, 6.0).value == pytest.approx(6.0, rel=1e-6)
    assert packing.bound(own, allowed, 6.0, stop=lambda: True).decisions == ()


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(3, 5), seed=st.integers(0, 40),
       charged=st.booleans())
def test_never_exceeds_the_exhaustive_optimum(n, P, seed, charged):
    """From a random mapping and from the optimum itself: the packing bound ≤
    exhaustive's optimum, and the least packing found ≥ the bound."""
    problem, best = small(n, P, seed, charged)
    setup = prepare(problem, "time", "max")
    setup.info["incumbent"] = setup.space.random(np.random.default_rng(seed), 1)[0]
    got = packing.floor(setup)
    assert got.value is None or got.value <= best * (1 + 1e-12)
    assert got.packed is None or got.value is None or got.value <= got.packed
    ev = setup.objectives.evaluators[0]
    row = ev.encode(search(problem, "time", "max", strategy="exhaustive").mapping)
    assert ev.evaluate(row[None, :])[0] == pytest.approx(best, rel=1e-12)
    got = packing.floor(setup, best=lambda: (row, best))
    assert got.value is None or got.value <= best * (1 + 1e-12)
