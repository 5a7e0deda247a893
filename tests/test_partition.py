"""Min-cut partitioning under a capacity (mapping/search/partition.py) and the cut starts
built on it (mapping/search/cut_starts.py)."""
from __future__ import annotations

import numpy as np
import pytest

from mapping.evaluation.batch import BatchEvaluator
from mapping.search import cut_starts as cs
from mapping.search import partition as pt
from mapping.search.common import build_space
from mapping.search.relaxation import relax
from test_exact_max import stored


def two_cliques(size: int):
    """Two cliques of ``size`` vertices joined by one edge: the cut of 1 splits them."""
    edges = [(a, b) for a in range(size) for b in range(a + 1, size)]
    edges += [(a + size, b + size) for a, b in edges]
    edges.append((0, size))
    src, dst = map(np.array, zip(*edges))
    return 2 * size, src, dst, np.ones(len(src))


def test_cut_weighs_each_edge_by_the_cost_between_its_parts():
    adj = pt.adjacency(3, np.array([0, 1, 0, 2]), np.array([1, 2, 1, 2]),
                       np.array([1.0, 2.0, 0.5, 9.0]))
    part = np.array([0, 0, 1])
    assert pt.cut(adj, part) == pytest.approx(2.0)    # parallel 0-1 edges within; self-loop dropped
    cost = np.array([[0.1, 3.0], [3.0, 0.0]])
    assert pt.cut(adj, part, cost) == pytest.approx(1.5 * 0.1 + 2.0 * 3.0)


@pytest.mark.parametrize("seed", range(4))
def test_partition_finds_the_bridge_between_two_cliques(seed):
    n, src, dst, w = two_cliques(60)
    rng = np.random.default_rng(seed)
    part = pt.partition(n, src, dst, w, np.ones((n, 2)), np.ones((n, 2), bool), 60.0,
                        rng, tolerance=0.0)
    assert np.bincount(part, minlength=2).tolist() == [60, 60]
    assert pt.cut(pt.adjacency(n, src, dst, w), part) == pytest.approx(1.0)


def test_partition_keeps_every_part_within_capacity_and_its_allowed_parts():
    rng = np.random.default_rng(7)
    n = 150
    src, dst = rng.integers(0, n, 400), rng.integers(0, n, 400)
    w = rng.random(400)
    load = rng.uniform(1, 2, (n, 3))
    allowed = np.ones((n, 3), bool)
    allowed[:20, 0] = False                     # 20 vertices may not use part 0
    allowed[20:30, 1:] = False                  # 10 only part 0
    capacity = (1 / (1 / load).sum(axis=1)).sum() * 1.2
    part = pt.partition(n, src, dst, w, load, allowed, capacity, rng, tolerance=0.003)
    assert allowed[np.arange(n), part].all()
    loads = np.bincount(part, load[np.arange(n), part], minlength=3)
    # within the capacity, up to half the heaviest vertex (one move's granularity)
    assert loads.max() <= capacity * 1.003 + load.max() / 2


def test_refinement_ends_where_no_single_move_improves():
    rng = np.random.default_rng(1)
    n = 40
    for _ in range(3):
        src, dst, w = rng.integers(0, n, 120), rng.integers(0, n, 120), rng.random(120)
        load = rng.random((n, 3))
        cost = rng.random((3, 3))
        capacity = load.mean(axis=1).sum() / 2.5
        part = pt.refine(n, src, dst, w, load, np.ones((n, 3), bool), capacity,
                         rng.integers(0, 3, n), cost)
        level = pt._Level(pt.adjacency(n, src, dst, w), load, np.ones((n, 3), bool),
                          (cost + cost.T) / 2, capacity, 0.0, pt.PATIENCE)
        best = level.score(part)
        for v in range(n):
            for p in range(3):
                moved = part.copy()
                moved[v] = p
                score = level.score(moved)
                assert not (score[0] < best[0] or score[0] == best[0]
                            and score[1] < best[1] - 1e-9)


def test_a_v_cycle_from_a_partition_never_joins_vertices_across_its_parts():
    n, src, dst, w = two_cliques(60)
    rng = np.random.default_rng(3)
    start = np.arange(n) % 2                     # a bad split: every clique edge half cut
    seen = []
    original = pt.matching

    def spy(*args, **kwargs):
        node = original(*args, **kwargs)
        seen.append((node, args[5] if len(args) > 5 else kwargs.get("same")))
        return node
    pt.matching = spy
    try:
        pt.partition(n, src, dst, w, np.ones((n, 2)), np.ones((n, 2), bool), 60.0, rng,
                     start=start)
    finally:
        pt.matching = original
    assert seen
    for node, same in seen:
        for k in np.unique(node):
            assert len(set(same[node == k])) == 1


def test_balanced_load_shares_each_actor_by_parallel_resources():
    load = np.array([[2.0, 2.0], [1.0, 3.0]])
    assert cs.balanced_load(load, np.ones((2, 2), bool)) == pytest.approx(1.0 + 0.75)
    allowed = np.array([[True, False], [True, True]])
    assert cs.balanced_load(load, allowed) == pytest.approx(2.0 + 0.75)


def test_group_costs_follow_the_routes_weighted_by_communication():
    ev = BatchEvaluator(stored("a30_p8_s1"), "time", "max")
    t = ev.tables
    classes = relax(ev, build_space(stored("a30_p8_s1")).allowed).classes
    cost = cs.group_costs(t, classes)
    share = t.comm.sum(axis=0) / t.comm.sum()
    route = t.route.reshape(8, 8, -1)
    little, big = classes[0], classes[1]
    assert cost[0, 1] == pytest.approx(route[little[0], big[-1]] @ share)
    # within a class: between two distinct members, not a member and itself
    assert cost[0, 0] == pytest.approx(route[little[0], little[1]] @ share)
    assert cost[0, 0] > 0 and cost[0, 0] < cost[0, 1]


def test_cut_starts_are_valued_mappings_of_the_space():
    problem = stored("a50_p8_s3")
    ev = BatchEvaluator(problem, "time", "max")
    space = build_space(problem)
    X, values = cs.cut_starts(ev, space, np.random.default_rng(0), 12)
    assert X.shape == (12, len(space.allowed))
    assert space.allowed[np.arange(X.shape[1]), X].all()
    assert np.allclose(values, ev.evaluate(X))
    # a random mapping is far worse than the best start
    random = ev.evaluate(space.random(np.random.default_rng(1), 200))
    assert values.min() < np.median(random)


def test_the_sweep_stops_after_its_exploring_starts_unless_they_are_worth_it():
    problem = stored("a50_p8_s3")
    ev = BatchEvaluator(problem, "time", "max")
    space = build_space(problem)
    explore = int(cs.EXPLORE * 12)
    seen = []

    def worth(best):
        seen.append(best)
        return best < threshold

    threshold = 0.0
    X, values = cs.cut_starts(ev, space, np.random.default_rng(0), 12, worth=worth)
    assert len(values) == explore and X.shape == (explore, len(space.allowed))
    assert seen == [values.min()]
    threshold = np.inf
    full = cs.cut_starts(ev, space, np.random.default_rng(0), 12, worth=worth)[1]
    assert len(full) == 12 and np.array_equal(full[:explore], values)


def test_cut_starts_do_not_apply_without_alike_pes_or_under_sum():
    problem = stored("a50_p8_s3")
    space = build_space(problem)
    rng = np.random.default_rng(0)
    assert cs.cut_starts(BatchEvaluator(problem, "time", "sum"), space, rng, 4) is None
