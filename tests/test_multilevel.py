"""Multilevel search (mapping/search/multilevel.py): coarse problems are exact views of
the fine one, matchings join channel ends only, and V-cycle levels keep the mapping."""
from __future__ import annotations

import numpy as np

from mapping.evaluation.batch import BatchEvaluator
from mapping.search import search
from mapping.search import multilevel as ml
from mapping.search.common import build_space
from mapping.search.delta import Delta
from test_exact_max import stored


def setup(stem="a30_p8_s1", aggregate="max"):
    problem = stored(stem)
    ev = BatchEvaluator(problem, "time", aggregate)
    return ev, build_space(problem)


def test_a_coarse_mapping_is_valued_as_its_expansion_by_both_evaluations():
    ev, space = setup()
    rng = np.random.default_rng(0)
    for member in ml.hierarchy(ev, space, rng):
        n = int(member.max()) + 1
        coarse = ml.CoarseEvaluator(ev, member, n)
        X = rng.integers(0, space.allowed.shape[1], (20, n))
        fine = ev.evaluate(X[:, member])
        assert np.allclose(coarse.evaluate(X), fine, rtol=1e-12)
        d = Delta(coarse)
        assert d.supported
        # the summed proc rows and renamed channel ends give the same loads
        assert np.allclose(d.values(*d.loads(X)), fine, rtol=1e-9)


def test_matching_joins_the_two_ends_of_one_channel():
    ev, space = setup()
    t = ev.tables
    node = ml.matching(t.src, t.dst, t.comm.sum(axis=1), space.allowed,
                       np.random.default_rng(1))
    sizes = np.bincount(node)
    assert sizes.max() == 2 and sizes.sum() == len(space.allowed)
    ends = {frozenset((int(a), int(b))) for a, b in zip(t.src, t.dst)}
    for k in np.flatnonzero(sizes == 2):
        assert frozenset(np.flatnonzero(node == k).tolist()) in ends


def test_matching_never_joins_actors_without_a_common_pe_nor_across_pes():
    src, dst = np.array([0, 1, 2]), np.array([1, 2, 3])
    allowed = np.array([[1, 0], [0, 1], [0, 1], [0, 1]], dtype=bool)
    node = ml.matching(src, dst, np.ones(3), allowed, np.random.default_rng(0))
    assert node[0] != node[1]
    same = np.array([0, 1, 0, 1])
    node = ml.matching(src, dst, np.ones(3), np.ones((4, 2), bool),
                       np.random.default_rng(0), same)
    assert len(set(node)) == 4          # every channel crosses PEs: nothing joins


def test_v_cycle_levels_keep_the_mapping():
    ev, space = setup("a50_p8_s3")
    rng = np.random.default_rng(2)
    x = space.random(rng, 1)[0]
    levels = ml.hierarchy(ev, space, rng, x)
    assert levels
    for member in levels:
        n = int(member.max()) + 1
        y = np.full(n, -1)
        y[member] = x
        assert np.array_equal(y[member], x)     # one PE per node
        assert n < len(x)


def test_multilevel_search_keeps_its_budget_and_reports_the_exact_value():
    problem = stored("a30_p8_s1")
    res = search(problem, "time", "max", strategy="multilevel", budget=60_000, seed=3,
                 shards=1)
    assert res.evaluations <= 60_000
    ev = BatchEvaluator(problem, "time", "max")
    assert res.value == ev.evaluate(ev.encode(res.mapping)[None])[0]


def test_a_stalled_chain_of_v_cycles_is_followed_by_a_new_one(monkeypatch):
    """A V-cycle that lowers its chain's value by less than ml.STALL ends the chain: the
    next cycle starts from scratch (no mapping), then V-cycles from its result, each
    with ml.V_CYCLE_SHARE['scratch'] of the first cycle's budget."""
    values = iter([10.0, 9.0, 9.0 * (1 - ml.STALL / 2), 7.0, 6.0, 5.0, 4.0, 3.0])
    starts, budgets = [], []

    def cycle(task, tracker, rng, evaluator, space, x, budget):
        starts.append(None if x is None else int(x[0]))
        budgets.append(budget)
        tracker.evaluate(space.random(rng, 1))
        tracker.count(budget - 1)
        return np.full(len(space.allowed), len(starts)), next(values)

    monkeypatch.setattr(ml, "_cycle", cycle)
    monkeypatch.setattr(ml, "CYCLES", 4)
    monkeypatch.setitem(ml.V_CYCLE_SHARE, "scratch", 0.5)
    search(stored("a30_p8_s1"), "time", "max", strategy="multilevel", budget=50_000,
           seed=0, shards=1)
    assert starts == [None, 1, 2, None, 4, 5, 6, 7]
    assert budgets == [10_000, 5_000, 5_000, 10_000, 5_000, 5_000, 5_000, 5_000]


def _sources(monkeypatch, pool_value, cycle_values):
    """Which start each cycle had ('scratch', 'cut' for a pool start, or the index of
    the cycle whose result it continues) with one cut start of ``pool_value``, and
    each cycle's budget in thousands (a unit is 10,000)."""
    values = iter(cycle_values)
    starts, budgets = [], []

    def pool(tracker, rng, evaluator, space, scratch):
        # built once the first cycle from scratch has its value, which the sweep meets
        assert starts == ["scratch"] and scratch == cycle_values[0]
        return [(np.full(len(space.allowed), -7), pool_value)]

    def cycle(task, tracker, rng, evaluator, space, x, budget):
        starts.append("scratch" if x is None else "cut" if x[0] == -7 else int(x[0]))
        budgets.append(budget // 1000)
        tracker.evaluate(space.random(rng, 1))
        tracker.count(budget - 1)
        return np.full(len(space.allowed), len(starts) - 1), next(values)

    monkeypatch.setattr(ml, "_pool", pool)
    monkeypatch.setattr(ml, "_cycle", cycle)
    monkeypatch.setattr(ml, "CYCLES", 4)
    monkeypatch.setattr(ml, "V_CYCLE_SHARE", {"scratch": 0.5, "cut": 1.0})
    search(stored("a30_p8_s1"), "time", "max", strategy="multilevel", budget=50_000,
           seed=0, shards=1)
    return starts, budgets


def test_cut_starts_better_than_a_cycle_from_scratch_take_the_later_cycles(monkeypatch):
    # scratch reaches 10; the cut start (5) is better, so its chain gets the cycles
    # (whole units), and when that chain stalls the next one starts from the pool again
    assert _sources(monkeypatch, 5.0, [10.0, 4.0, 3.0, 3.0, 2.5]) == \
        (["scratch", "cut", 1, 2, "cut"], [10, 10, 10, 10, 10])


def test_cut_starts_worse_than_a_cycle_from_scratch_are_never_used(monkeypatch):
    # the chain from scratch stalls at its third cycle; the next starts from scratch
    # too; V-cycles from scratch have half a unit
    assert _sources(monkeypatch, 20.0, [10.0, 9.0, 9.0, 8.0, 7.0, 6.0, 5.0, 4.0]) == \
        (["scratch", 0, 1, "scratch", 3, 4, 5, 6], [10, 5, 5, 10, 5, 5, 5, 5])
