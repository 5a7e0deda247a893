"""The critical cycle printed for a mapped graph (issue 42): that of the rule of
moc.critical_cycle on the static-order graph, its times read as the decimals they print
as and summed exactly, whatever path Howard's float iteration takes."""
from __future__ import annotations

import itertools
import random
from fractions import Fraction

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dsl import parse_map, parse_moa, parse_sdf
from mapping.evaluation.timing import _actors_of, mapped_analysis, static_order_graph
from mapping.semantics.problem import bind_problem
from moc.cycle_ratio import max_cycle_ratio

BOARD = """moa duo {{
    lambda = 1
    pe p0 [time = lsla(alpha = 1)]
    pe p1 [time = lsla(alpha = 1)]
    cn bus [time = lsla(alpha = {bus})]
    p0 -- bus; p1 -- bus
}}"""


def _problem(sdf, mapping, bus=0):
    app, = parse_sdf(sdf)
    arch, = parse_moa(BOARD.format(bus=bus))
    m, = parse_map(mapping)
    return bind_problem(app, arch), m


def _pipeline(order, times):
    """``a -> b -> c``, ``a`` alone on ``p0``, ``b`` and ``c`` on ``p1``, actors
    declared in ``order``: no data edge closes a cycle, so the cycles are the PEs'
    wraps, ``a`` alone (``t_a`` over 1) and ``b -> c`` (``t_b + t_c`` over 1)."""
    decl = "\n".join(f"    actor {x} [quanta = {times[x]}]" for x in order)
    return _problem(f"sdf w {{\n{decl}\n    a -> b\n    b -> c\n}}",
                    "mapping m { a -> p0; b -> p1; c -> p1 }")


@pytest.mark.parametrize("order, expected", [("abc", ("a",)), ("bca", ("b", "c")),
                                             ("cab", ("c", "b"))])
def test_decimal_ties_go_to_the_least_firing(order, expected):
    """By hand: ``t_a = 0.3``, ``t_b = 0.1``, ``t_c = 0.2``: both wraps weigh 0.3 as
    decimals, so they are equally critical and the cycle through the first firing of
    the first actor declared is named.  In floats 0.1 + 0.2 = 0.30000000000000004 >
    0.3, and Howard's float iteration named ``b -> c`` whatever the order (before this
    rule, ``abc`` printed ``b -> c``).  The period printed stays Karp's float value."""
    problem, m = _pipeline(order, {"a": 0.3, "b": 0.1, "c": 0.2})
    t = mapped_analysis(problem, m)
    assert t.period == 0.1 + 0.2
    assert t.critical_cycle == expected


def test_a_longer_cycle_of_a_larger_ratio_still_wins():
    # t_b + t_c = 0.4 over 1 against a's 0.3: b -> c whatever the order
    for order in ("abc", "cab"):
        problem, m = _pipeline(order, {"a": 0.3, "b": 0.1, "c": 0.3})
        t = mapped_analysis(problem, m)
        assert t.period == pytest.approx(0.4) and set(t.critical_cycle) == {"b", "c"}


TIMES = st.sampled_from(["0.1", "0.2", "0.3", "0.5", "0.7", "1", "2", "3"])


@st.composite
def mapped_problems(draw):
    """2-4 actors of decimal times, repetitions 1-2, a chain forward with chords, back
    channels carrying one or two iterations' tokens, a bus of delay 0 or 0.1 per byte,
    every actor on one of two PEs."""
    n = draw(st.integers(2, 4))
    q = [draw(st.integers(1, 2)) for _ in range(n)]
    pairs = [(i, i + 1) for i in range(n - 1)]
    pairs += draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                           max_size=3))
    lines = [f"    actor x{i} [quanta = {draw(TIMES)}]" for i in range(n)]
    for k, (i, j) in enumerate(dict.fromkeys(pairs)):
        if i == j:
            continue
        prod, cons = q[j], q[i]
        delay = 0 if i < j else prod * q[i] * draw(st.integers(1, 2))
        lines.append(f"    channel c{k} : x{i} -> x{j} [prod = {prod}, cons = {cons}, "
                     f"delay = {delay}]")
    places = "; ".join(f"x{i} -> p{draw(st.integers(0, 1))}" for i in range(n))
    return _problem("sdf g {\n" + "\n".join(lines) + "\n}", f"mapping m {{ {places} }}",
                    bus=draw(st.sampled_from(["0", "0.1"])))


def _critical_cycles(n, edges):
    """The maximum ratio and the critical simple cycles (node lists) of the exact
    ``edges``, by enumerating the simple cycles and each choice of parallel edges."""
    steps: dict = {}
    for u, v, w, h in edges:
        steps.setdefault((u, v), []).append((w, h))
    ratios = []
    for c in nx.simple_cycles(nx.DiGraph(list(steps))):
        best = None
        for choice in itertools.product(*(steps[s] for s in zip(c, c[1:] + c[:1]))):
            height = sum(h for _, h in choice)
            if height > 0:
                r = Fraction(sum(w for w, _ in choice)) / height
                best = r if best is None else max(best, r)
        if best is not None:
            ratios.append((best, c))
    top = max(r for r, _ in ratios)
    return top, [c for r, c in ratios if r == top]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mapped_problems(), st.integers(0, 10 ** 6))
def test_the_mapped_cycle_is_the_rule_s_whatever_the_path(problem_mapping, seed):
    """The cycle named is critical in exact decimal arithmetic (brute force over
    networkx's simple cycles), goes through the least firing on any critical cycle,
    is as short as the shortest there, and is the same from the edges listed in any
    order (Howard's float iteration then takes another path); its ratio is the period
    printed (Karp's, in floats) up to rounding."""
    problem, m = problem_mapping
    t = mapped_analysis(problem, m)
    if not 0 < t.period < float("inf"):
        return
    names, edges = static_order_graph(problem, m, decimal=True)
    index = {f: i for i, f in enumerate(names)}
    numbered = [(index[u], index[v], w, h) for u, v, w, h in edges]
    ratio, cycles = _critical_cycles(len(names), numbered)
    found = max_cycle_ratio(names, edges, least=True)
    assert found.ratio == ratio
    assert float(ratio) == pytest.approx(t.period, rel=1e-12)
    cycle = [index[f] for f in found.cycle]
    least = min(min(c) for c in cycles)
    assert cycle[0] == least
    assert len(cycle) == min(len(c) for c in cycles if least in c)
    assert any(sorted(c) == sorted(cycle) and len(c) == len(cycle) for c in cycles)
    assert t.critical_cycle == _actors_of(found.cycle)
    shuffled = list(edges)
    random.Random(seed).shuffle(shuffled)
    assert max_cycle_ratio(names, shuffled, least=True) == found
