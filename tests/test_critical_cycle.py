"""The printed critical cycle by a rule of its own (moc.critical_cycle, issue 42): the
shortest cycle of tight edges through the least node on one, breadth-first with
successors in increasing order, whatever Howard's start or the order of the edges."""
from __future__ import annotations

import contextlib
import random
from fractions import Fraction

import networkx as nx
import numpy as np
from hypothesis import given, settings, strategies as st

from moc import SDFGraph, critical_cycle
from moc.cycle_ratio import max_cycle_ratio_arrays
from moc.howard_exact import max_cycle_ratio_lists
from moc.phases import Phases
from moc.timing import analyse

from test_warm_start import weighted_graphs


def _solve(n, edges, **more):
    u, v, w, h = (np.array([e[i] for e in edges], dtype=np.int64) for i in range(4))
    return max_cycle_ratio_arrays(n, u, v, w, h, least=True, **more)


@contextlib.contextmanager
def _through_scipy():
    """The arrays' path of :mod:`moc.critical_cycle` (scipy's search) on any size."""
    saved = critical_cycle.LARGE, critical_cycle.LOADED
    critical_cycle.LARGE = critical_cycle.LOADED = 0
    try:
        yield
    finally:
        critical_cycle.LARGE, critical_cycle.LOADED = saved


def _lists(n, edges):
    return max_cycle_ratio_lists(n, *([e[i] for e in edges] for i in range(4)), least=True)


def test_of_two_critical_cycles_through_the_least_node_the_first_reached():
    # 0 -> 1 -> 0 (1 + 1 over 1 + 1) and 0 -> 2 -> 0 (2 + 0 over 1 + 1): ratio 1 both.
    # Howard starts from the heaviest edge out of 0, to 2; the rule visits 0's
    # successors 1, 2 in order, and 1 closes first: (0, 1)
    edges = [(0, 2, 2, 1), (2, 0, 0, 1), (0, 1, 1, 1), (1, 0, 1, 1)]
    assert _solve(3, edges) == (1, (0, 1)) == _lists(3, edges)
    # without the rule, the policy's own cycle
    u, v, w, h = (np.array([e[i] for e in edges], dtype=np.int64) for i in range(4))
    assert max_cycle_ratio_arrays(3, u, v, w, h) == (1, (0, 2))


def test_the_shortest_cycle_through_the_least_node_wins_over_smaller_nodes():
    # 0 -> 1 -> 2 -> 0 (3 over 3) and 0 -> 3 -> 0 (2 over 2), ratio 1 both: the search
    # reaches 1 and 3 in its first round, 2 and the way back to 0 (from 3) in its
    # second, and 3 comes before 2 in it: (0, 3)
    edges = [(0, 1, 1, 1), (1, 2, 1, 1), (2, 0, 1, 1), (0, 3, 1, 1), (3, 0, 1, 1)]
    assert _solve(4, edges) == (1, (0, 3)) == _lists(4, edges)


def test_the_least_node_of_a_critical_cycle_not_of_any_cycle():
    # 0 <-> 1 has ratio 1/2 (1 over 2), 1 <-> 2 and 2 <-> 3 ratio 2: node 0 is on no
    # critical cycle, 1 is the least on one: (1, 2)
    edges = [(0, 1, 1, 1), (1, 0, 0, 1), (1, 2, 2, 1), (2, 1, 2, 1), (2, 3, 3, 1),
             (3, 2, 1, 1)]
    assert _solve(4, edges) == (2, (1, 2)) == _lists(4, edges)


def test_a_critical_self_loop_is_the_cycle_of_its_node():
    edges = [(1, 1, 3, 1), (0, 1, 0, 1), (1, 0, 6, 1)]      # 1 -> 1 and 0 <-> 1: 3 both
    assert _solve(2, edges) == (3, (0, 1)) == _lists(2, edges)
    edges = [(1, 1, 3, 1), (0, 1, 0, 1), (1, 0, 5, 1)]      # 0 <-> 1 below: 5/2
    assert _solve(2, edges) == (3, (1,)) == _lists(2, edges)


def _two_rings(order):
    """A <-> B and A <-> C, one token on each way back, times 1: each ring's period
    is 2, equally critical; actors declared in ``order``."""
    g = SDFGraph("rings")
    for a in order:
        g.add_actor(a, exec=1)
    for other in ("B", "C"):
        g.add_channel("A", other, f"A{other}")
        g.add_channel(other, "A", f"{other}A", delay=1)
    return g


def test_declaration_order_decides_the_printed_sdf_cycle():
    # the nodes go in declaration order: A, then the ring of the actor declared next
    found = analyse(_two_rings("ABC"), simulate=False)
    assert (found.period, found.critical_cycle) == (2, ("A", "B"))
    assert "critical cycle A -> B" in str(found)
    assert analyse(_two_rings("ACB"), simulate=False).critical_cycle == ("A", "C")


def test_declaration_order_decides_the_printed_cyclo_static_cycle():
    # the same rings with A of two phases (1, 1) writing and reading one token each
    # (q: A, B, C twice): each ring takes 1 + 1 time per token, two firings an
    # iteration, 4, equally critical; A's first start is the least node, and the ring
    # of the actor declared after A closes first
    for order, expected in (("ABC", ("A", "B")), ("ACB", ("A", "C"))):
        g = SDFGraph("phased")
        for a in order:
            g.add_actor(a, exec=Phases([1, 1]) if a == "A" else 1)
        for other in ("B", "C"):
            g.add_channel("A", other, f"A{other}", prod=Phases([1, 1]))
            g.add_channel(other, "A", f"{other}A", cons=Phases([1, 1]), delay=1)
        for csdf_order in ("ends", "starts"):
            found = analyse(g, simulate=False, order=csdf_order)
            assert (found.period, found.critical_cycle) == (4, expected), csdf_order


def _critical_steps(n, edges, ratio):
    """Per step (a, b) the largest cost w·D − N·h of its edges, and the critical
    simple cycles (brute force)."""
    best = {}
    for a, b, w, h in edges:
        key = w * ratio.denominator - h * ratio.numerator
        best[a, b] = max(best.get((a, b), key), key)
    cycles = [c for c in nx.simple_cycles(nx.DiGraph(list(best)))
              if sum(best[s] for s in zip(c, c[1:] + c[:1])) == 0]
    return best, cycles


@settings(max_examples=300, deadline=None)
@given(weighted_graphs(), st.data())
def test_the_cycle_is_critical_and_the_rules_whatever_the_start(graph, data):
    """The cycle's exact ratio (each step's tightest edge) is the maximum; it goes
    through the least node of any critical cycle and is the shortest there (brute
    force over simple cycles); and it is the same on lists, on arrays, from any warm
    start and scale, from the edges in any order, and by the large graphs' search."""
    n, pairs, w, h = graph
    edges = [(a, b, x, y) for (a, b), x, y in zip(pairs, w, h)]
    ratio, cycle = _solve(n, edges)
    best, cycles = _critical_steps(n, edges, ratio)
    steps = list(zip(cycle, cycle[1:] + cycle[:1]))
    assert len(set(cycle)) == len(cycle) and all(s in best for s in steps)
    tightest = [max((e for e in edges if e[:2] == s),
                    key=lambda e: e[2] * ratio.denominator - e[3] * ratio.numerator)
                for s in steps]
    assert Fraction(sum(e[2] for e in tightest), sum(e[3] for e in tightest)) == ratio
    least = min(min(c) for c in cycles)
    assert cycle[0] == least
    assert len(cycle) == min(len(c) for c in cycles if least in c)
    assert _lists(n, edges) == (ratio, cycle)
    start = np.array(data.draw(st.lists(st.booleans(), min_size=len(edges),
                                        max_size=len(edges))), dtype=bool)
    near = data.draw(st.sampled_from([None, 0.01, 1.0, 7.5]))
    assert _solve(n, edges, start=start, critical=[], near=near) == (ratio, cycle)
    shuffled = list(edges)
    random.Random(data.draw(st.integers(0, 10 ** 6))).shuffle(shuffled)
    assert _solve(n, shuffled) == (ratio, cycle) == _lists(n, shuffled)
    with _through_scipy():
        assert _solve(n, edges) == (ratio, cycle)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.lists(
    st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=16))))
def test_holds_cycle_where_networkx_finds_one(graph):
    """:func:`moc.critical_cycle.holds_cycle` (the edges kept a few rounds, then the
    rule's search) is true exactly where networkx enumerates a simple cycle."""
    import networkx as nx
    import numpy as np
    from moc.critical_cycle import holds_cycle
    n, edges = graph
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    u, v = (np.array([e[k] for e in edges], dtype=np.int64) for k in (0, 1))
    assert holds_cycle(n, u, v) == any(True for _ in nx.simple_cycles(g))


def test_the_search_from_the_least_node_left_that_comes_back_empty():
    # 2 <-> 3 a cycle; 0 reached from 2 keeps an edge in but lies on none (it leads
    # to 4 only): the search from 0 finds no way back, the components give 2, whose
    # search reaches 0 and 3 in its first round and closes at 3: (2, 3)
    u, v = [2, 3, 2, 0, 1], [3, 2, 0, 4, 0]
    assert critical_cycle.least_cycle(5, u, v) == (2, 3)
    with _through_scipy():
        assert critical_cycle.least_cycle(5, np.array(u), np.array(v)) == (2, 3)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 9).flatmap(lambda n: st.tuples(st.just(n), st.lists(
    st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=18))))
def test_the_rule_s_cycle_of_any_edges(graph):
    """:func:`moc.critical_cycle.least_cycle` of any edges: a cycle through the least
    node on a simple cycle (networkx's enumeration), as short as the shortest through
    it, the same on lists and by scipy's search; none where networkx finds none."""
    n, edges = graph
    cycles = list(nx.simple_cycles(nx.DiGraph(edges)))
    u, v = [a for a, _ in edges], [b for _, b in edges]
    found = critical_cycle.least_cycle(n, u, v)
    if not cycles:
        assert found == ()
        return
    least = min(min(c) for c in cycles)
    assert found[0] == least
    assert len(found) == min(len(c) for c in cycles if least in c)
    steps = set(edges)
    assert all(step in steps for step in zip(found, found[1:] + found[:1]))
    with _through_scipy():
        assert critical_cycle.least_cycle(n, np.array(u), np.array(v)) == found
