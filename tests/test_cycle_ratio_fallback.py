"""The last resort of moc.cycle_ratio.max_cycle_ratio_arrays (issue 42): where the float
policy fails its certificate and int64 cannot hold the exact steps from it (weights
near 2^40 over heights near 2^20: ``(max|w|·D + max|h|·|N|)·(n + 1)`` passes 2^62), the
exact iteration in Python integers (moc.howard_exact.exact_iteration) gives the
largest ratio over the simple cycles (networkx's enumeration, every choice of parallel
edges, in Fractions), a cycle attaining it, and with ``least`` the cycle of
moc.critical_cycle's rule; the same as the lists' solve from scratch."""
from __future__ import annotations

import itertools
from fractions import Fraction

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import moc.cycle_ratio as cr
from moc.howard_exact import max_cycle_ratio_lists

TALL_W, TALL_H = 2 ** 40, 2 ** 20


def _forced(n, edges, least):
    """``max_cycle_ratio_arrays`` with every certificate refused (the exact steps from
    the float policy then run), and whether the iteration in Python integers ran."""
    u, v, w, h = (np.array([e[k] for e in edges], dtype=np.int64) for k in range(4))
    ran = []
    saved = cr._certified, cr.exact_iteration

    def spied(*args):
        ran.append(args[0])
        return saved[1](*args)
    cr._certified, cr.exact_iteration = (lambda *args: False), spied
    try:
        found = cr.max_cycle_ratio_arrays(n, u, v, w, h, least=least)
    finally:
        cr._certified, cr.exact_iteration = saved
    return found, bool(ran)


def _cycles(n, edges):
    """Every simple cycle (networkx) with every choice of parallel edges: its nodes
    and its ratio ``Σw/Σh``."""
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    parallel: dict = {}
    for a, b, w, h in edges:
        g.add_edge(a, b)
        parallel.setdefault((a, b), []).append((w, h))
    for nodes in nx.simple_cycles(g):
        steps = list(zip(nodes, nodes[1:] + nodes[:1]))
        for choice in itertools.product(*(parallel[s] for s in steps)):
            yield nodes, Fraction(sum(w for w, _ in choice), sum(h for _, h in choice))


def _check(n, edges, least):
    (ratio, cycle), ran = _forced(n, edges, least)
    cycles = list(_cycles(n, edges))
    if not cycles:
        assert (ratio, cycle) == (None, ())
        return ran
    best = max(r for _, r in cycles)
    assert ratio == best
    # the cycle attains it with some choice of parallel edges
    assert len(set(cycle)) == len(cycle)
    assert best in {r for nodes, r in cycles if len(nodes) == len(cycle)
                    and set(zip(nodes, nodes[1:] + nodes[:1])) ==
                    set(zip(cycle, cycle[1:] + cycle[:1]))}
    if least:
        # the rule: through the least node of any critical cycle, the shortest there
        critical = [nodes for nodes, r in cycles if r == best]
        first = min(min(c) for c in critical)
        assert cycle[0] == first
        assert len(cycle) == min(len(c) for c in critical if first in c)
    lists = [[e[k] for e in edges] for k in range(4)]
    assert (ratio, cycle) == max_cycle_ratio_lists(n, *lists, least=least)
    return ran


tall_graphs = st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.integers(TALL_W, TALL_W + 9),
                                   st.integers(TALL_H, TALL_H + 9)), max_size=9)))


@settings(max_examples=150, deadline=None)
@given(tall_graphs, st.booleans())
def test_the_last_resort_gives_brute_force_s_ratio_and_the_rule_s_cycle(graph, least):
    n, edges = graph
    _check(n, edges, least)


@pytest.mark.parametrize("least", [False, True])
def test_two_components_of_one_ratio_the_one_of_least_root(least):
    """Components {0, 3, 5} and {1, 2}, the cycles 3 -> 5 -> 3 and 1 -> 2 -> 1 alike
    (the largest ratio), 0 -> 3 -> 0 lighter: the policy's cycles have roots 3 and 1,
    so of the two components the second, as where the certificate holds (the
    components by their least nodes would give the first)."""
    a, b = (TALL_W + 1, TALL_H + 1), (TALL_W + 4, TALL_H)
    edges = [(0, 3, TALL_W // 2, TALL_H), (3, 0, TALL_W // 2, TALL_H),
             (3, 5, *a), (5, 3, *b), (1, 2, *a), (2, 1, *b)]
    assert _check(6, edges, least)
    u, v, w, h = (np.array([e[k] for e in edges], dtype=np.int64) for k in range(4))
    assert _forced(6, edges, least)[0] == cr.max_cycle_ratio_arrays(6, u, v, w, h,
                                                                      least=least)
    assert _forced(6, edges, least)[0][1] == (1, 2)


@pytest.mark.parametrize("least", [False, True])
def test_a_ring_with_chords_takes_the_last_resort(least):
    """Three nodes, a ring and two chords of tall weights: the int64 bound of the exact
    steps is passed, the iteration in Python integers runs, with and without
    ``least``."""
    edges = [(0, 1, TALL_W + 1, TALL_H + 1), (1, 2, TALL_W + 2, TALL_H),
             (2, 0, TALL_W + 4, TALL_H + 3), (1, 0, TALL_W + 7, TALL_H + 5),
             (2, 2, TALL_W + 3, TALL_H + 2)]
    assert _check(3, edges, least)
