"""The split bound (:mod:`mapping.search.partition_bound.split`) against enumeration and
a hand-worked ring across a bridge."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mapping.semantics.problem import bind_problem
from mapping.search import cpsat, search
from mapping.search.engine import prepare
from mapping.search.partition_bound import split
from search_problems import random_app
from test_partition_bound import bridged, ring_on_two_sides

pytestmark = pytest.mark.skipif(not cpsat.available(), reason="needs OR-Tools CP-SAT")


def least_bottleneck(ev) -> float:
    """By enumeration: the least busiest element (after lambda) over every mapping."""
    X = np.array(list(itertools.product(range(ev.n_pes), repeat=ev.n_actors)))
    return float(ev.evaluate(X).min())


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(4, 5), seed=st.integers(0, 300),
       share=st.sampled_from([0.7, 0.9, 0.97, 0.999, 1.0, 1.001, 1.3]))
def test_split_never_proves_above_the_enumerated_optimum(n, P, seed, share):
    """On random applications on a bridged board: the split bound proves ``T`` (the
    optimum exceeds it) only where every mapping has a load above ``T`` (enumerated),
    and its bisection from a random mapping's value stays at or below the optimum."""
    problem = bind_problem(random_app(n, n + 2, seed=seed), bridged(P, seed))
    setup = prepare(problem, "time", "max")
    ev, allowed = setup.objectives.evaluators[0], setup.space.allowed
    best = least_bottleneck(ev)
    sp = split.Split(ev, allowed)
    assert sp.sides is not None
    T = best * share
    if sp.decide(T, None):
        assert T < best
    if share >= 1.0:
        assert not sp.decide(T, None)
    start = setup.space.random(np.random.default_rng(seed), 1)[0]
    value, trials = split.bound(ev, allowed, 0.0, float(ev.evaluate(start[None])[0]), None,
                                  bisect=True)
    assert trials
    assert value is None or value <= best * (1 + 1e-12)
    assert best == pytest.approx(search(problem, "time", "max", strategy="exhaustive").value)


def test_ring_across_a_bridge_by_hand():
    """Six actors of work ``w`` in a ring of channels costing ``h`` = 10w on the bridge
    and ``h/10`` = w on a bus; two alike cores on each bus.  The optimum is 3w: three
    actors on each core of one side (the bus carries the two cut channels, 2w ≤ 3w);
    any actor across the bridge cuts the ring twice there (20w).  Under ``T`` = 2.9w
    no placement on a side exists: a core holds two actors, so the side cannot hold
    all six; holding none leaves six for the other side's two cores (6w > 5.8w of
    capacity); any other set cuts the ring, and its channels to the rest cross the
    bridge at least twice (20w, charged at their least over the far side's PEs).  So
    ``T`` is proven.  Under ``T`` = 3w a side holds all six (``n_S = 6``): not."""
    w = 1e-6
    ev, allowed = ring_on_two_sides()
    assert least_bottleneck(ev) == pytest.approx(3 * w)
    sp = split.Split(ev, allowed)
    assert sp.decide(2.9 * w, None)
    assert not sp.decide(3 * w, None)
    value, _ = split.bound(ev, allowed, 0.0, 3 * w, None, bisect=True)
    assert value == pytest.approx(3 * w, rel=1e-6) and value < 3 * w


def test_early_proves_an_optimal_start_and_exact_agrees():
    """The ring with buses dear enough (1.4w a channel) that at the optimum, 3w, the bus
    carries 2.8w, over 90% of it (:func:`~mapping.search.partition_bound.heavy`):
    ``early`` proves the optimal start within ``FIRST``, and ``exact`` (``both``, the
    split bound beside CP-SAT) returns exhaustive's optimum, its bound at most that."""
    from mapping.search import partition_bound
    from test_partition_bound import RING, two_sides
    import dsl
    w = 1e-6
    problem = bind_problem(dsl.loads_sdf(RING)[0], two_sides(bus_alpha=1.4e-10))
    best = search(problem, "time", "max", strategy="exhaustive")
    assert best.value == pytest.approx(3 * w)
    setup = prepare(problem, "time", "max")
    ev = setup.objectives.evaluators[0]
    setup.info["incumbent"] = np.array([ev.pes.index(best.mapping[a])
                                        for a in sorted(best.mapping, key=lambda a: int(a[1:]))])
    assert float(ev.evaluate(setup.info["incumbent"][None])[0]) == pytest.approx(3 * w)
    assert partition_bound.heavy(setup)
    got = partition_bound.early(setup, None)
    assert 3 * w * (1 - 2 * cpsat.FIRST_TRIAL) <= got < 3 * w
    res = search(problem, "time", "max", strategy="exact", time_limit=20)
    assert res.optimal and res.value == pytest.approx(3 * w, rel=cpsat.TOLERANCE)
    assert res.extra["bound"] <= best.value * (1 + 1e-12)
    # the split bound reported on its own, and named as the source only where it holds
    proved = res.extra["split_bound"]
    assert proved is None or proved <= best.value * (1 + 1e-12)
    if res.extra["bound_source"] == "split bound":
        assert res.extra["bound"] <= proved
