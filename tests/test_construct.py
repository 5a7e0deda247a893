"""Greedy randomized construction (mapping/search/construct.py) and the partial-mapping
loads it values placements with (Delta.placements)."""
from __future__ import annotations

import numpy as np
import pytest

from mapping.evaluation.batch import BatchEvaluator
from mapping.semantics.problem import bind_problem
from mapping.search.common import Objectives, Scalarizer, Tracker, build_space
from mapping.search.construct import construct, cost, walk_orders
from mapping.search.neighbourhood import Neighbourhood

from moa import Architecture
from search_problems import bench_arch, lsla, random_app, split_arch


class Task:
    def __init__(self, space):
        self.space, self.params = space, {}


def neighbourhood(problem, aggregate="max", budget=None):
    tracker = Tracker(Objectives([BatchEvaluator(problem, "time", aggregate)]),
                      Scalarizer(np.ones(1), np.ones(1)), budget)
    return Neighbourhood(Task(build_space(problem)), tracker), tracker


def charged_arch() -> Architecture:
    """Three PEs on two linked CNs; the second charges its traffic to both ends' PEs."""
    a = Architecture("charged", lambda_=0.5)
    a.add_cn("n0", costs={"time": lsla(2e-9, 1e-7)})
    a.add_cn("n1", costs={"time": lsla(5e-9, 3e-7)}, attrs={"charge": "both"})
    a.add_link("n1", "n0")
    for p, cn in (("p0", "n0"), ("p1", "n0"), ("p2", "n1")):
        a.add_pe(p, costs={"time": lsla(1e-9 * (1 + int(p[1])), 1e-6)})
        a.add_link(p, cn)
    return a


def masked_loads(d, X, placed):
    """The loads of partial mappings from the module's formulas, written directly: the
    placed actors' rows of ``proc`` and the channels whose ends are both placed."""
    K, A = X.shape
    pe = np.zeros((d.n_pes, K))
    cn = np.zeros((d.n_cns, K))
    for k in range(K):
        for a in np.flatnonzero(placed[k]):
            pe[X[k, a], k] += d.proc[a, X[k, a]]
        for c, (s, t) in enumerate(zip(d.src, d.dst)):
            if placed[k, s] and placed[k, t]:
                pair = X[k, s] * d.n_pes + X[k, t]
                cn[:, k] += d.comm[c] * d.route[pair]
                if d.paid is not None:
                    pe[X[k, s], k] += d.paid[c, pair]
                    pe[X[k, t], k] += d.paid[c, pair]
    return pe, cn


@pytest.mark.parametrize("arch", [bench_arch(), charged_arch(), split_arch(q_alpha=2e-9)])
def test_placements_are_the_loads_of_the_placed_actors(arch):
    problem = bind_problem(random_app(12, 18, seed=2), arch)
    nb, _ = neighbourhood(problem)
    d = nb.delta
    assert d is not None
    rng = np.random.default_rng(1)
    K, A, P = 3, d.n_actors, d.n_pes
    X = np.zeros((K, A), dtype=np.intp)
    placed = np.zeros((K, A), dtype=bool)
    pe, cn, bad = np.zeros((P, K)), np.zeros((d.n_cns, K)), np.zeros(K, dtype=np.int64)
    order = np.array([rng.permutation(A) for _ in range(K)])
    for t in range(A):
        a = order[:, t]
        pe_all, cn_all, _ = d.placements(pe, cn, bad, X, placed, a)
        Y, now = np.repeat(X, P, axis=0), np.repeat(placed, P, axis=0)
        cols = np.arange(K * P)
        Y[cols, np.repeat(a, P)] = np.tile(np.arange(P), K)
        now[cols, np.repeat(a, P)] = True
        want_pe, want_cn = masked_loads(d, Y, now)
        np.testing.assert_allclose(pe_all, want_pe, rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(cn_all, want_cn, rtol=1e-9, atol=1e-15)
        p = rng.integers(0, P, K)
        X[np.arange(K), a] = p
        placed[np.arange(K), a] = True
        col = np.arange(K) * P + p
        pe, cn, bad = pe_all[:, col], cn_all[:, col], _[col]
    full_pe, full_cn, full_bad = d.loads(X)
    np.testing.assert_allclose(pe, full_pe, rtol=1e-9)
    np.testing.assert_allclose(cn, full_cn, rtol=1e-9, atol=1e-15)
    assert (bad == full_bad).all()


def test_walk_orders_visit_every_actor_once_neighbours_early():
    problem = bind_problem(random_app(30, 45, seed=0), bench_arch())
    nb, _ = neighbourhood(problem)
    adjacency = nb.adjacency()
    orders = walk_orders(adjacency, 30, np.random.default_rng(0), 5)
    src, dst = adjacency[0], adjacency[1]
    for order in orders:
        assert sorted(order) == list(range(30))
        # the graph is connected: every actor after the first has a neighbour before it
        seen = {order[0]}
        for a in order[1:]:
            assert any((s == a and t in seen) or (t == a and s in seen)
                       for s, t in zip(src, dst))
            seen.add(a)


def test_construct_counts_its_placements_and_respects_allowed_pes():
    problem = bind_problem(random_app(20, 30, seed=3), bench_arch())
    nb, tracker = neighbourhood(problem, budget=10**6)
    sp = nb.space
    sp.allowed[0] = False
    sp.allowed[0, 1] = True                          # actor 0 pinned to PE 1
    sp.__post_init__()
    X = construct(nb, np.random.default_rng(0), 6)
    assert tracker.evaluations == cost(sp, 6) == 6 * int(sp.n_choices.sum())
    assert sp.allowed[np.arange(20), X].all() and (X[:, 0] == 1).all()
    # within the budget or not at all
    nb2, tracker2 = neighbourhood(problem, budget=cost(sp, 6) - 1)
    assert construct(nb2, np.random.default_rng(0), 6) is None
    assert tracker2.evaluations == 0


def test_greedy_construction_beats_random_mappings():
    """With ALPHA 0 every actor goes to its best PE given the placed ones: better than
    any of 256 random mappings under max."""
    from search_instances import instance
    problem = bind_problem(*instance(50, 12, 4))
    nb, tracker = neighbourhood(problem)
    rng = np.random.default_rng(0)
    built = tracker.evaluate(construct(nb, rng, 8, alpha=0.0))
    drawn = tracker.evaluate(nb.space.random(rng, 256))
    assert built.max() < drawn.min()
