"""Issue 43: the packing bound (``mapping/search/packing.py``) — PEs loaded by their
actors' own loads alone, decided class by class — by hand, against enumeration of
every assignment, and against exhaustive search of whole mapping problems."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from mapping.search import cpsat, packing, search
from mapping.search.engine import prepare
from test_cpsat import small

pytestmark = pytest.mark.skipif(not cpsat.available(), reason="needs ortools")


def brute_force(own, allowed) -> float:
    """The least bottleneck of own loads over every assignment."""
    A, P = own.shape
    best = np.inf
    for row in itertools.product(range(P), repeat=A):
        if all(allowed[a, p] for a, p in enumerate(row)):
            best = min(best, np.bincount(row, own[np.arange(A), row], minlength=P).max())
    return float(best)


def decide(own, allowed, T, hint=None):
    """``packing.decide`` at ``T``, each of its cuts checked by enumeration: no set of
    ``most + 1`` of its actors packs into its class's PEs."""
    usable = allowed & np.isfinite(own)
    unit = T * packing.PRECISION
    w = packing.integer_sizes(own, usable, unit)
    groups = packing.classes(own, usable)
    C = packing.capacity(T, unit)
    cuts = []
    got = packing.decide(w, usable, groups, C, cuts=cuts, hint=hint)
    for c, actors, most in cuts:
        m = len(groups[c])
        for chosen in itertools.combinations(actors, most + 1):
            sizes = w[list(chosen), groups[c][0]]
            assert not any(np.bincount(row, sizes, minlength=m).max() <= C
                           for row in itertools.product(range(m), repeat=len(sizes)))
    decide.cuts += len(cuts)
    return got


decide.cuts = 0


def test_by_hand():
    """Four actors of size 6 on three alike PEs: two must share one, so no bottleneck
    is below 12.  At ``T`` = 11.9 each is above half of ``T``, so the rounding row
    ``r_1`` (weight 1 each, at most 1 per PE) allows three on three PEs: the master is
    infeasible at once.  At 12 two pairs pack (``6 + 6 | 6 + 6 |`` or
    ``6 + 6 | 6 | 6``).  A fifth PE, fast (sizes 3)
    and alone in its class, takes two of them: ``3 + 3 = 6 | 6 | 6 | 6``, so 6.
    Sizes 3, 3 and 2 on two alike PEs (a class modelled PE by PE): ``3 + 2 | 3``, 5."""
    own = np.full((4, 3), 6.0)
    allowed = np.ones_like(own, dtype=bool)
    assert packing.classes(own, allowed) == [[0, 1, 2]]
    assert decide(own, allowed, 11.9)[0] == "infeasible"
    status, row = decide(own, allowed, 12.0)
    assert status == "feasible" and np.bincount(row, minlength=3).max() == 2
    got = packing.bound(own, allowed, 13.0, floor=1.0)
    assert got.packed == 12.0 and 12.0 * (1 - packing.RESOLUTION) <= got.value < 12.0
    fast = np.hstack([own, np.full((4, 1), 3.0)])
    allowed = np.ones_like(fast, dtype=bool)
    assert packing.classes(fast, allowed) == [[0, 1, 2], [3]]
    assert decide(fast, allowed, 5.99)[0] == "infeasible"
    assert decide(fast, allowed, 6.0)[0] == "feasible"
    own = np.array([[3.0, 3.0], [3.0, 3.0], [2.0, 2.0]])
    allowed = np.ones_like(own, dtype=bool)
    got = packing.bound(own, allowed, 5.0)
    assert got.value == pytest.approx(5.0 * (1 - cpsat.FIRST_TRIAL), rel=1e-12)
    assert {d[1] for d in got.decisions} == {"infeasible"}
    allowed[0, 0] = allowed[1, 0] = False           # now 3 + 3 | 2 is forced
    assert packing.bound(own, allowed, 6.0).value == pytest.approx(6.0, rel=1e-6)
    assert packing.bound(own, allowed, 6.0, stop=lambda: True).decisions == ()


def test_a_cut_is_needed():
    """Sizes 5, 5, 5, 4, 4 on three alike PEs under 8.99: no two 5s share a PE (10),
    nor a 5 and a 4 (9), so the 5s take the three PEs and the 4s have nowhere to go;
    under 9, ``5 + 4 | 5 + 4 | 5``.  The summed rows do not see it (the sizes sum to 23
    ≤ 3 · 8.99; ``r_1`` counts the three 5s against three PEs), so the master puts all
    five on the class, the packing check finds ``{4, 5, 5, 5}`` unpackable (without
    either 4 or a 5 the rest packs), and its cut — at most three of them there — leaves
    the master infeasible."""
    own = np.tile(np.array([[5.0], [5.0], [5.0], [4.0], [4.0]]), (1, 3))
    allowed = np.ones_like(own, dtype=bool)
    assert brute_force(own, allowed) == 9.0
    unit = 8.99 * packing.PRECISION
    w = packing.integer_sizes(own, allowed, unit)[:, 0]
    C = packing.capacity(8.99, unit)
    assert all(f.sum() <= 3 * top for f, top in packing.dual_feasible_rows(w, C))
    assert w.sum() <= 3 * C
    assert packing.pack_bins(w[[0, 1, 2, 3]], 3, C)[0] == "infeasible"
    assert packing.pack_bins(w[[0, 1, 3, 4]], 3, C)[0] == "feasible"
    # that cut, handed to the decision again (as packing.prove hands its cuts to the
    # next decision, on the same sizes), leaves its master infeasible at once: no cut
    # of its own
    whole = packing.integer_sizes(own, allowed, unit)
    groups = packing.classes(own, allowed)
    cuts, again = [], []
    assert packing.decide(whole, allowed, groups, C, cuts=cuts)[0] == "infeasible"
    assert len(cuts) == 1 and sorted(cuts[0][1]) in ([0, 1, 2, 3], [0, 1, 2, 4])
    assert packing.decide(whole, allowed, groups, C, cuts=again,
                          known=cuts)[0] == "infeasible" and again == []
    made = decide.cuts
    assert decide(own, allowed, 8.99)[0] == "infeasible"
    assert decide.cuts == made + 1
    assert decide(own, allowed, 9.0)[0] == "feasible"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(A=st.integers(2, 7), kinds=st.lists(st.integers(1, 3), min_size=1, max_size=3),
       seed=st.integers(0, 10_000), share=st.floats(0.5, 1.0), split=st.sampled_from(
           [packing.SPLIT, 0]))
def test_against_every_assignment(A, kinds, seed, share, split):
    """Random sizes (not whole multiples of the unit: the rounding matters) on classes
    of 1-3 alike PEs, some actor-PE pairs forbidden: at the enumerated optimum the
    decision is never "infeasible" (it would be with sizes rounded up), a little below
    it never "feasible", a packing found fits, and the bound lies within the search's
    resolution below the optimum.  With ``SPLIT`` 0 every class is checked after the
    master, so the cuts do more of the work; every cut is checked by enumeration.  A
    hint (a random mapping) changes no decision, and the descent from that mapping
    lands between the enumerated optimum and its own bottleneck, on allowed PEs, and
    the local search (``reoptimize``) between the optimum and the descent's."""
    before, packing.SPLIT = packing.SPLIT, split
    try:
        check_against_every_assignment(A, kinds, seed, share)
    finally:
        packing.SPLIT = before


def check_against_every_assignment(A, kinds, seed, share):
    P = sum(kinds)
    if P ** A > 20_000:
        return
    rng = np.random.default_rng(seed)
    cols = [np.repeat(rng.uniform(1.0, 10.0, (A, 1)), k, axis=1) for k in kinds]
    own = np.hstack(cols)
    allowed = np.ones((A, P), dtype=bool)
    forbid = rng.random((A, len(kinds))) > share
    start = 0
    for c, k in enumerate(kinds):
        allowed[:, start:start + k] = ~forbid[:, c, None]
        start += k
    allowed[~allowed.any(axis=1), 0] = True
    best = brute_force(own, allowed)
    status, row = decide(own, allowed, best)
    assert status == "feasible"
    loads = np.bincount(row, own[np.arange(A), row], minlength=P)
    assert loads.max() <= best * (1 + 1e-12) and allowed[np.arange(A), row].all()
    assert decide(own, allowed, best * (1 - 1e-4))[0] == "infeasible"
    got = packing.bound(own, allowed, best * 1.3, floor=best * 0.5)
    assert got.value is not None and best * (1 - 2 * packing.RESOLUTION) <= got.value < best
    assert got.packed is None or got.packed >= best
    hint = np.array([rng.choice(np.flatnonzero(allowed[a])) for a in range(A)])
    assert decide(own, allowed, best, hint)[0] == "feasible"
    assert decide(own, allowed, best * (1 - 1e-4), hint)[0] == "infeasible"
    down = packing.descend(own, allowed, hint)
    assert allowed[np.arange(A), down].all()
    assert best <= packing.own_bottleneck(own, down) <= packing.own_bottleneck(own, hint)
    again = packing.reoptimize(own, allowed, hint, width=len(kinds) + 1)
    assert allowed[np.arange(A), again].all()
    assert best <= packing.own_bottleneck(own, again) <= packing.own_bottleneck(own, down)
    # the cuts of decisions at higher capacities, on one unit, kept from the start
    # (as packing.prove does): still feasible at the optimum, infeasible below it
    unit = best * 2 * packing.PRECISION
    w = packing.integer_sizes(own, allowed, unit)
    groups = packing.classes(own, allowed)
    cuts = []
    for above in (0.3, 0.1, 0.01, 0.0):
        packing.decide(w, allowed, groups, packing.capacity(best * (1 + above), unit),
                       cuts=cuts, known=list(cuts))
    assert packing.decide(w, allowed, groups, packing.capacity(best, unit),
                          known=cuts)[0] == "feasible"
    assert packing.decide(w, allowed, groups, packing.capacity(best * (1 - 1e-4), unit),
                          known=cuts)[0] == "infeasible"


@settings(max_examples=40, deadline=None)
@given(w=st.lists(st.integers(0, 100), min_size=1, max_size=8), C=st.integers(1, 100))
def test_dual_feasible_rows(w, C):
    """Every row holds on every subset of sizes that fits one bin."""
    w = np.array(w)
    rows = packing.dual_feasible_rows(w, C)
    for mask in itertools.product((0, 1), repeat=len(w)):
        mask = np.array(mask, dtype=bool)
        if w[mask].sum() <= C:
            for f, top in rows:
                assert f[mask].sum() <= top


@settings(max_examples=30, deadline=None)
@given(w=st.lists(st.integers(1, 60), min_size=1, max_size=7), m=st.integers(1, 3),
       C=st.integers(40, 100))
def test_pack_bins(w, m, C):
    """Identical bins: against every assignment."""
    w = np.array(w)
    fits = any(np.bincount(row, w, minlength=m).max() <= C
               for row in itertools.product(range(m), repeat=len(w)))
    status, bins = packing.pack_bins(w, m, C)
    assert status == ("feasible" if fits else "infeasible")
    if fits:
        assert np.bincount(bins, w, minlength=m).max() <= C


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(3, 5), seed=st.integers(0, 40),
       charged=st.booleans())
def test_never_exceeds_the_exhaustive_optimum(n, P, seed, charged):
    """From a random mapping and from the optimum itself: the packing bound ≤
    exhaustive's optimum (communication charged to the cores or not)."""
    problem, best = small(n, P, seed, charged)
    setup = prepare(problem, "time", "max")
    setup.info["incumbent"] = setup.space.random(np.random.default_rng(seed), 1)[0]
    got = packing.floor(setup)
    assert got.value is None or got.value <= best * (1 + 1e-12)
    ev = setup.objectives.evaluators[0]
    row = ev.encode(search(problem, "time", "max", strategy="exhaustive").mapping)
    got = packing.floor(setup, best=row)
    assert got.value is None or got.value <= best * (1 + 1e-12)


def test_prove_by_hand(monkeypatch):
    """Sizes 4, 3, 3, 2 on two alike PEs, from ``4 + 3 | 3 + 2`` (7), the packings
    taken as the decisions return them (no local search): the decision below 7 finds
    ``4 + 2 | 3 + 3`` (6; sums of 12 split 7 | 5 or 6 | 6), the one below 6 is
    infeasible, so 6 is proven within ``FIRST``.  A stop asked at once decides
    nothing; a start already optimal is proven by one decision, and so is one that is
    not where ``better`` offers the optimal mapping before the first decision (the
    proof goes on from it: one decision, infeasible, and its packing returned).  The
    descent from ``4 + 3 | 3 + 2`` exchanges a 3 and the 2 (or the 4 and a 3): 6 | 6,
    the optimum; with the local search (``reoptimize``) the proof reaches it before
    its first decision, which is then the infeasible one."""
    own = np.tile(np.array([[4.0], [3.0], [3.0], [2.0]]), (1, 2))
    allowed = np.ones_like(own, dtype=bool)
    assert brute_force(own, allowed) == 6.0
    searched = packing.prove(own, allowed, [0, 0, 1, 1])
    assert [d[1] for d in searched.decisions] == ["infeasible"]
    assert searched.packed == 6.0 and searched.value == pytest.approx(
        6.0 * (1 - cpsat.FIRST_TRIAL), rel=1e-12)
    assert packing.own_bottleneck(own, packing.reoptimize(own, allowed, [0, 0, 1, 1])) == 6.0
    monkeypatch.setattr(packing, "reoptimize", lambda own, usable, row, **k: np.asarray(row))
    monkeypatch.setattr(packing, "descend", lambda own, usable, row: np.asarray(row))
    got = packing.prove(own, allowed, [0, 0, 1, 1])
    assert [d[1] for d in got.decisions] == ["feasible", "infeasible"]
    assert got.value == pytest.approx(6.0 * (1 - cpsat.FIRST_TRIAL), rel=1e-12)
    assert got.packed == 6.0
    assert np.bincount(got.row, own[np.arange(4), got.row], minlength=2).max() == 6.0
    stopped = packing.prove(own, allowed, [0, 0, 1, 1], stop=lambda: True)
    assert stopped.decisions == () and stopped.value is None and stopped.row is None
    once = packing.prove(own, allowed, [0, 1, 1, 0])
    assert [d[1] for d in once.decisions] == ["infeasible"] and once.row is None
    offered = packing.prove(own, allowed, [0, 0, 1, 1], better=lambda: [0, 1, 1, 0])
    assert [d[1] for d in offered.decisions] == ["infeasible"]
    assert offered.value == pytest.approx(6.0 * (1 - cpsat.FIRST_TRIAL), rel=1e-12)
    assert offered.packed == 6.0 and list(offered.row) == [0, 1, 1, 0]
    worse = packing.prove(own, allowed, [0, 0, 1, 1], better=lambda: [0, 0, 0, 1])
    assert [d[1] for d in worse.decisions] == ["feasible", "infeasible"]
    monkeypatch.undo()
    assert packing.own_bottleneck(own, packing.descend(own, allowed, [0, 0, 1, 1])) == 6.0


def test_reoptimize_by_hand():
    """Sizes 7, 7 | 3, 3, 2, 2 on two alike PEs (14 | 10): moving a 7 gives 17, the
    exchanges of a 7 with a 3 or a 2 give 10 | 14 and 9 | 15, so the descent stops at
    14; the exact placement of both PEs' actors finds ``7 + 3 + 2 | 7 + 3 + 2``, 12, the
    optimum (half of 24).  A stop asked at once leaves the descent's result."""
    own = np.tile(np.array([[3.0], [7.0], [3.0], [2.0], [2.0], [7.0]]), (1, 2))
    allowed = np.ones_like(own, dtype=bool)
    start = [0, 1, 0, 0, 0, 1]
    assert brute_force(own, allowed) == 12.0
    assert packing.own_bottleneck(own, packing.descend(own, allowed, start)) == 14.0
    assert packing.own_bottleneck(own, packing.reoptimize(own, allowed, start)) == 12.0
    assert packing.own_bottleneck(own, packing.reoptimize(own, allowed, start, width=1)) == 14.0
    assert packing.own_bottleneck(own, packing.reoptimize(
        own, allowed, start, stop=lambda: True)) == 14.0


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.integers(5, 7), P=st.integers(3, 5), seed=st.integers(0, 40),
       charged=st.booleans())
def test_proof_never_exceeds_the_exhaustive_optimum(n, P, seed, charged):
    """From a random mapping: the proof's bound ≤ exhaustive's optimum ≤ the value of
    the packing it found (a whole mapping: its communication counted).  On 7 x 4 (seed
    9) the packing's optimum is exhaustive's, and the proof reaches it within
    ``FIRST``; the packing it found has that bottleneck of own loads, though not that
    value (a CN above it), so the mapping is left to the searches."""
    from mapping.search.bounds import element_tables
    from mapping.search.exact import mapping_value
    problem, best = small(n, P, seed, charged)
    setup = prepare(problem, "time", "max")
    start = setup.space.random(np.random.default_rng(seed), 1)[0]
    got = packing.proof(setup, [start])
    assert got.value is None or got.value <= best * (1 + 1e-12)
    if got.row is not None:
        assert mapping_value(setup.objectives.evaluators[0], got.row) >= best * (1 - 1e-12)
    problem, best = small(7, 4, 9, False)
    setup = prepare(problem, "time", "max")
    got = packing.proof(setup, [setup.space.random(np.random.default_rng(9), 1)[0]])
    assert got.value == pytest.approx(best * (1 - cpsat.FIRST_TRIAL), rel=1e-9)
    own = element_tables(setup.objectives.evaluators[0])[0]
    assert got.packed == pytest.approx(best, rel=1e-12) == np.bincount(
        got.row, own[np.arange(7), got.row], minlength=4).max()
