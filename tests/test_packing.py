"""Issue 43: the packing rows (:mod:`mapping.search.packing`) — by hand, never cutting a
packing that fits (exhaustively on small instances), and stronger than averaging
alike PEs' loads (the cluster relaxation) where items are few and large."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import dsl
from mapping.search import exact, search
from mapping.search.bounds import element_tables
from mapping.search.engine import prepare
from mapping.search.packing import packing_rows, rounding_weights
from mapping.semantics.problem import bind_problem

SDF = """sdf three {
    actor a0 [quanta = 1000.0]
    actor a1 [quanta = 1000.0]
    actor a2 [quanta = 1000.0]
}
"""
MOA = """moa two {
    aggregate = max
    type core [time = lsla(alpha = 1e-09, beta = 0.0)]
    cn bus [time = lsla(alpha = 0.0, beta = 0.0)]
    pe core[0..1] : core
    core[*] -- bus
}
"""


def test_rounding_weights_by_hand():
    # capacity 12, k = 2: ⌈3w/12⌉ − 1 counts 0 up to a third (4), 1 up to two thirds
    # (8), 2 up to the capacity, 3 above it
    assert rounding_weights([0, 1, 4, 5, 8, 9, 12, 13], 12, 2).tolist() == \
        [0, 0, 0, 1, 1, 2, 2, 3]
    # k = 1: only actors above half the capacity count
    assert rounding_weights([6, 7, 12], 12, 1).tolist() == [0, 1, 1]
    with pytest.raises(ValueError, match="capacity"):
        rounding_weights([1], 0, 1)


def test_rows_by_hand():
    """Three actors of 7 on two PEs of capacity 12: the average load is 10.5 ≤ 12 (the
    cluster relaxation of the two alike PEs finds them a place), but two actors above
    half the capacity never share a PE: the k = 1 row on each PE, x_0 + x_1 + x_2 ≤ 1,
    summed over the two PEs, says at most two of the three actors are placed."""
    sizes = np.full((3, 2), 7)
    usable = np.ones((3, 2), dtype=bool)
    rows = packing_rows(sizes, usable, 12, k_max=2)
    k1 = [(p, a.tolist(), w.tolist()) for p, k, a, w in rows if k == 1]
    assert k1 == [(0, [0, 1, 2], [1, 1, 1]), (1, [0, 1, 2], [1, 1, 1])]
    assert most_placed(sizes, usable, rows) == 2     # so no mapping fits under 12
    # at capacity 14 two actors fit on one PE, and the rows allow it
    assert most_placed(sizes, usable, packing_rows(sizes, usable, 14)) == 3


def most_placed(sizes, usable, rows):
    """The most actors the rows alone let be placed (each on one usable PE), by
    enumeration of every partial assignment (-1: not placed)."""
    A, P = sizes.shape
    best = 0
    for row in itertools.product(range(-1, P), repeat=A):
        if any(p >= 0 and not usable[a, p] for a, p in enumerate(row)):
            continue
        if all(sum(w for a, w in zip(acts, wts) if row[a] == p) <= k
               for p, k, acts, wts in rows):
            best = max(best, sum(p >= 0 for p in row))
    return best


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), A=st.integers(2, 6), P=st.integers(1, 3),
       capacity=st.integers(5, 40))
def test_rows_never_cut_a_packing_that_fits(seed, A, P, capacity):
    """Every assignment whose PEs' loads are all within the capacity satisfies every
    row (exhaustively), and where no assignment fits, the rows may say so but never
    the reverse."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(0, capacity + 5, size=(A, P))
    usable = rng.random((A, P)) < 0.85
    rows = packing_rows(sizes, usable, capacity)
    for row in itertools.product(range(P), repeat=A):
        if any(not usable[a, p] for a, p in enumerate(row)):
            continue
        loads = np.bincount(row, sizes[np.arange(A), row], minlength=P)
        if (loads <= capacity).all():
            for p, k, acts, wts in rows:
                assert sum(w for a, w in zip(acts, wts) if row[a] == p) <= k


def test_stronger_than_the_cluster_relaxation(tmp_path):
    """The hand-worked instance above as a mapping problem: three actors of 1 µs on two
    alike cores.  The optimum (exhaustive) is 2 µs, two actors on one core; the cluster
    relaxation averages the two cores' loads and proves 1.5 µs; the rows at a capacity
    just below the optimum (in the integer units of CP-SAT's model) let only two of the
    three actors be placed, so no mapping is under it: the rows prove what the cluster
    relaxation does not."""
    (tmp_path / "three.sdf").write_text(SDF)
    (tmp_path / "two.moa").write_text(MOA)
    problem = bind_problem(dsl.load_sdf(tmp_path / "three.sdf")[0],
                           dsl.load_moa(tmp_path / "two.moa")[0], {})
    optimum = search(problem, "time", "max", strategy="exhaustive").value
    assert optimum == pytest.approx(2e-6)
    setup = prepare(problem, "time", "max")
    assert exact.cluster_floor(setup) == pytest.approx(1.5e-6, rel=1e-6)
    own = element_tables(setup.objectives.evaluators[0])[0]
    unit = optimum * 1e-9
    sizes = np.floor(own / unit).astype(np.int64)
    usable = setup.space.allowed
    below = int(np.floor(optimum * (1 - 1e-3) / unit))
    assert most_placed(sizes, usable, packing_rows(sizes, usable, below)) == 2
    at = int(np.floor(optimum / unit))
    assert most_placed(sizes, usable, packing_rows(sizes, usable, at)) == 3
