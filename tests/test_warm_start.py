"""Howard's iteration started from a smaller K's policy (moc.warm_start, issue 42): the
same ratio as from the heaviest edges, and the same printed answer (period, critical
circuit, channels, K) as the K-periodic iteration solved from scratch, on random
cyclo-static and SDF graphs, wherever the start is used (the printed circuit is
moc.critical_cycle's); the tight edges hold every critical cycle."""
from __future__ import annotations

from fractions import Fraction

import networkx as nx
import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from dataflow_graphs import cyclo_static_ring
from moc import csdf_kperiodic, howard_exact, kperiodic, warm_start
from moc.csdf_kperiodic import phased_kperiodic_throughput
from moc.cycle_ratio import max_cycle_ratio_arrays
from moc.errors import UnboundedCycleError

from test_csdf_kperiodic import answer, phased_graphs, sdf_rings

#: the warm starts tried
USED = {"tried": 0}


def _solved(graph, order, warm, grown):
    """The cyclo-static K-periodic answer (or the deadlock) with every constraint graph
    on arrays, warm starts from any size (``warm``) or none, ``K`` grown step by step
    (``grown``) or the whole iteration at once where small."""
    saved = (howard_exact.SMALL_LISTS, howard_exact.LOADED_LISTS, csdf_kperiodic.WARM_SIZE,
             kperiodic.SMALL_WHOLE, kperiodic.STEPS_BEFORE_WHOLE,
             csdf_kperiodic.preferred)
    howard_exact.SMALL_LISTS = howard_exact.LOADED_LISTS = -1
    csdf_kperiodic.WARM_SIZE = 0 if warm else 10 ** 18
    if grown:
        kperiodic.SMALL_WHOLE, kperiodic.STEPS_BEFORE_WHOLE = 0, 10 ** 9

    def counted(*args):
        USED["tried"] += 1
        return warm_start.preferred(*args)
    csdf_kperiodic.preferred = counted
    try:
        return answer(phased_kperiodic_throughput, graph, order)
    finally:
        (howard_exact.SMALL_LISTS, howard_exact.LOADED_LISTS, csdf_kperiodic.WARM_SIZE,
         kperiodic.SMALL_WHOLE, kperiodic.STEPS_BEFORE_WHOLE,
         csdf_kperiodic.preferred) = saved


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(phased_graphs(), sdf_rings()), st.sampled_from(["ends", "starts"]),
       st.booleans())
def test_a_warm_start_prints_what_the_cold_one_prints(graph, order, grown):
    """Warm starts at every K after the first (and before a whole iteration taken at
    once), kept whatever their critical cycles: the same period, circuit, channels,
    K, actor periods and deadlocks as without."""
    assert _solved(graph, order, True, grown) == _solved(graph, order, False, grown)


def test_a_two_actor_graph_goes_warm_and_keeps_its_answer():
    """``a`` (two phases) and ``b`` in a loop, ``q = (2, 3)``: K = 1 first, then the
    whole iteration from its policy, the same answer as from scratch under both
    orders."""
    from moc import SDFGraph
    from moc.phases import Phases
    g = SDFGraph("two")
    g.add_actor("a", exec=Phases([2, 1]))
    g.add_actor("b", exec=3)
    g.add_channel("a", "b", "ab", prod=Phases([1, 2]), cons=2)
    g.add_channel("b", "a", "ba", prod=2, cons=Phases([2, 1]), delay=6)
    for order in ("ends", "starts"):
        before = USED["tried"]
        warm = _solved(g, order, True, False)
        assert USED["tried"] - before == 1
        assert warm == _solved(g, order, False, False)
        assert warm[1:3] == (("a", "b"), {"a": 2, "b": 3})


@st.composite
def weighted_graphs(draw):
    """A strongly connected multigraph of 2-7 nodes (a ring and chords, parallel
    edges and self-loops allowed), weights 0-4 and heights 1-3."""
    n = draw(st.integers(2, 7))
    pairs = [(i, (i + 1) % n) for i in range(n)] + draw(st.lists(st.tuples(
        st.integers(0, n - 1), st.integers(0, n - 1)), max_size=10))
    w = [draw(st.integers(0, 4)) for _ in pairs]
    h = [draw(st.integers(1, 3)) for _ in pairs]
    return n, pairs, w, h


@settings(max_examples=200, deadline=None)
@given(weighted_graphs(), st.data())
def test_any_start_gives_the_ratio_and_tight_edges_hold_every_critical_cycle(graph, data):
    """From any start mask and scale: the ratio from the heaviest edges, the largest over simple
    cycles (brute force), and every edge of every critical simple cycle (at each step
    the edges of the largest ``w·D − h·N``) among the tight ones (those the printed
    cycle is chosen from, :func:`moc.critical_cycle.least_cycle`); the policy an edge
    out of each node."""
    from moc import cycle_ratio
    n, pairs, w, h = graph
    u = np.array([p[0] for p in pairs], dtype=np.int64)
    v = np.array([p[1] for p in pairs], dtype=np.int64)
    W, H = np.array(w, dtype=np.int64), np.array(h, dtype=np.int64)
    start = np.array(data.draw(st.lists(st.booleans(), min_size=len(pairs),
                                        max_size=len(pairs))), dtype=bool)
    critical = []
    near = data.draw(st.sampled_from([None, 0.01, 1.0, 7.5]))
    chosen_from = []
    saved = cycle_ratio.least_cycle

    def spied(m, us, vs, mask):
        chosen_from.append((us, vs, mask))
        return saved(m, us, vs, mask)
    cycle_ratio.least_cycle = spied
    try:
        ratio, cycle = max_cycle_ratio_arrays(n, u, v, W, H, start=start,
                                              critical=critical, near=near, least=True)
    finally:
        cycle_ratio.least_cycle = saved
    assert ratio == max_cycle_ratio_arrays(n, u, v, W, H)[0]
    # one component (a ring): its nodes as numbered, its edges sorted by tail, stably
    (us, vs, mask), = chosen_from
    order = np.argsort(u, kind="stable")
    assert (us == u[order]).all() and (vs == v[order]).all()
    tight = np.zeros(len(pairs), dtype=bool)
    tight[order] = mask
    best = {}
    for e, (a, b) in enumerate(pairs):
        key = w[e] * ratio.denominator - h[e] * ratio.numerator
        best[a, b] = max(best.get((a, b), key), key)
    top = Fraction(-1)
    critical_cycles = []
    for nodes in nx.simple_cycles(nx.DiGraph(list(best))):
        steps = list(zip(nodes, nodes[1:] + nodes[:1]))
        value = Fraction(sum(best[s] for s in steps))
        top = max(top, value)
        if value == 0:
            critical_cycles.append(steps)
    assert top == 0                              # N/D is the largest ratio
    policy, = critical
    assert len(policy) == n and (u[policy] == np.arange(n)).all()
    for steps in critical_cycles:
        for a, b in steps:
            on = [e for e, p in enumerate(pairs) if p == (a, b) and
                  w[e] * ratio.denominator - h[e] * ratio.numerator == best[a, b]]
            assert all(tight[e] for e in on)
    assert cycle and cycle[0] == min(cycle)


def test_a_cycle_without_tokens_is_raised_from_a_warm_start_too():
    """The search for a cycle of height zero comes before the iteration: a start
    changes nothing there."""
    u = np.array([0, 1, 1], dtype=np.int64)
    v = np.array([1, 0, 1], dtype=np.int64)
    w = np.array([1, 1, 1], dtype=np.int64)
    h = np.array([0, 0, 1], dtype=np.int64)
    for start in (None, np.array([False, True, True])):
        try:
            max_cycle_ratio_arrays(2, u, v, w, h, start=start, critical=[])
        except UnboundedCycleError as exc:
            assert sorted(exc.cycle) == [0, 1]
        else:
            raise AssertionError("no cycle without tokens raised")


def test_a_warm_start_that_does_not_converge_gives_up(monkeypatch):
    """Past ``WARM_STEPS`` steps no answer comes, and ``critical`` says so."""
    from moc import cycle_ratio
    monkeypatch.setattr(cycle_ratio, "WARM_STEPS", 0)
    u = np.array([0, 1], dtype=np.int64)
    v = np.array([1, 0], dtype=np.int64)
    one = np.ones(2, dtype=np.int64)
    critical = []
    assert max_cycle_ratio_arrays(2, u, v, one, one, start=np.ones(2, dtype=bool),
                                  critical=critical) == (None, ())
    assert critical == [None]
    assert max_cycle_ratio_arrays(2, u, v, one, one)[0] == 1
