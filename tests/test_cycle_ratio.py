"""moc.cycle_ratio.max_cycle_ratio: Howard's policy iteration against brute force; its array
helpers against plain Python."""
import itertools
from fractions import Fraction

import networkx as nx
import pytest
from hypothesis import given, settings, strategies as st

from moc.cycle_ratio import CycleRatio, UnboundedCycleError, _nonpositive_cycle, \
    max_cycle_ratio
from moc.errors import SDFError


def brute_force(nodes, edges):
    """The largest Σw/Σh over the simple cycles, every choice of parallel edges."""
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    parallel = {}
    for u, v, w, h in edges:
        g.add_edge(u, v)
        parallel.setdefault((u, v), []).append((w, h))
    best = None
    for cycle in nx.simple_cycles(g):
        pairs = list(zip(cycle, cycle[1:] + cycle[:1]))
        for choice in itertools.product(*(parallel[p] for p in pairs)):
            ratio = Fraction(sum(w for w, _ in choice), sum(h for _, h in choice))
            best = ratio if best is None or ratio > best else best
    return best


def ratio_of(cycle, edges):
    """The best ratio of ``cycle`` (a node sequence) over its parallel edges: attained
    iff it equals the maximum."""
    pairs = list(zip(cycle, cycle[1:] + cycle[:1]))
    options = [[(w, h) for u, v, w, h in edges if (u, v) == p] for p in pairs]
    return max(Fraction(sum(w for w, _ in c), sum(h for _, h in c))
               for c in itertools.product(*options))


graphs = st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.integers(0, 9), st.integers(1, 4)), max_size=10)))


@settings(max_examples=150, deadline=None)
@given(graphs)
def test_howard_equals_brute_force(graph):
    n, edges = graph
    found = max_cycle_ratio(range(n), edges)
    expected = brute_force(range(n), edges)
    assert found.ratio == expected
    if expected is None:
        assert found.cycle == ()
    else:
        assert isinstance(found.ratio, Fraction)
        assert ratio_of(list(found.cycle), edges) == expected


def test_hand_examples():
    # a -> b -> a: (3 + 5)/(1 + 1) = 4; the self-loop c: 9/2; a -> b -> c -> a:
    # (3 + 1 + 2)/(1 + 0 + 1) = 3: the maximum is 9/2 on (c,)
    edges = [("a", "b", 3, 1), ("b", "a", 5, 1), ("c", "c", 9, 2), ("b", "c", 1, 0),
             ("c", "a", 2, 1)]
    assert max_cycle_ratio("abc", edges) == CycleRatio(Fraction(9, 2), ("c",))
    # parallel edges: the lighter height wins, 6/1 > 6/3
    assert max_cycle_ratio("x", [("x", "x", 6, 3), ("x", "x", 6, 1)]).ratio == 6
    # floats give floats
    found = max_cycle_ratio([0, 1], [(0, 1, 1.5, 1), (1, 0, 0.5, 1)])
    assert found.ratio == pytest.approx(1.0) and isinstance(found.ratio, float)
    assert set(found.cycle) == {0, 1}
    # no cycle
    assert max_cycle_ratio([1, 2], [(1, 2, 5, 1)]) == CycleRatio(None, ())


def test_numpy_integers_are_exact():
    import numpy as np
    found = max_cycle_ratio("ab", [("a", "b", np.int64(3), np.int64(1)),
                                   ("b", "a", np.int64(2), np.int64(2))])
    assert found.ratio == Fraction(5, 3) and type(found.ratio) is Fraction


def test_heights_may_be_negative_on_edges():
    # (4 + 2)/(-1 + 3) = 3 on the two-cycle; the self-loop gives 1
    found = max_cycle_ratio("uv", [("u", "v", 4, -1), ("v", "u", 2, 3), ("u", "u", 1, 1)])
    assert found.ratio == 3 and set(found.cycle) == {"u", "v"}


@pytest.mark.parametrize("edges, cycle", [
    ([("a", "b", 1, 0), ("b", "a", 1, 0), ("a", "a", 1, 1)], {"a", "b"}),
    ([("a", "b", 1, -2), ("b", "a", 1, 1)], {"a", "b"}),
])
def test_a_cycle_without_height_is_unbounded(edges, cycle):
    with pytest.raises(UnboundedCycleError, match="height sum of zero or less") as info:
        max_cycle_ratio("ab", edges)
    assert set(info.value.cycle) == cycle
    assert isinstance(info.value, SDFError)


def _assert_whole_ring(n, edges, unbounded):
    """The ring of ``n`` nodes is the answer: a cycle without height through every node,
    or the critical cycle of ratio ``n``."""
    if unbounded:
        with pytest.raises(UnboundedCycleError) as info:
            max_cycle_ratio(range(n), edges)
        assert sorted(info.value.cycle) == list(range(n))
    else:
        found = max_cycle_ratio(range(n), edges)
        assert found.ratio == n and len(found.cycle) == n


@pytest.mark.parametrize("last, unbounded", [(0, True), (1, False)])
def test_a_long_ring_of_tall_heights_is_told_exactly_in_int64(last, unbounded):
    """A ring of 1,000 nodes, heights 2^42 and −2^42 on two edges and ``last`` on the
    closing one: the height sum is ``last``, so the ring has no height (unbounded) for
    0, and ratio 1000 (a weight of 1 per edge) for 1.  The search for a cycle without
    height sums them to about 2^42 only (the mean of −h), well inside int64."""
    n = 1000
    heights = [2 ** 42, -2 ** 42] + [0] * (n - 3) + [last]
    edges = [(i, (i + 1) % n, 1, heights[i]) for i in range(n)]
    _assert_whole_ring(n, edges, unbounded)


def lowest_height(nodes, edges):
    """The least Σh over the simple cycles, every choice of parallel edges (None: no
    cycle); a closed walk is a union of simple cycles, so none has a lower sum."""
    g = nx.DiGraph()
    g.add_nodes_from(nodes)
    lowest = {}
    for u, v, _, h in edges:
        g.add_edge(u, v)
        lowest[u, v] = min(h, lowest.get((u, v), h))
    return min((sum(lowest[p] for p in zip(c, c[1:] + c[:1])) for c in nx.simple_cycles(g)),
               default=None), lowest


signed_graphs = st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.integers(0, 9), st.integers(-4, 4)), max_size=12)))


@settings(max_examples=300, deadline=None)
@given(signed_graphs)
def test_a_cycle_without_height_is_found_iff_exhaustive_search_finds_one(graph):
    """Heights of either sign: unbounded exactly where some simple cycle's heights sum
    to zero or less (every simple cycle enumerated by networkx), and the cycle named
    is one of them; else the ratio is the brute force's."""
    n, edges = graph
    least, lowest = lowest_height(range(n), edges)
    if least is not None and least <= 0:
        with pytest.raises(UnboundedCycleError) as info:
            max_cycle_ratio(range(n), edges)
        cycle = list(info.value.cycle)
        assert len(set(cycle)) == len(cycle)
        assert sum(lowest[p] for p in zip(cycle, cycle[1:] + cycle[:1])) <= 0
    else:
        assert max_cycle_ratio(range(n), edges).ratio == brute_force(range(n), edges)


@settings(max_examples=100, deadline=None)
@given(signed_graphs)
def test_a_negative_height_sum_agrees_with_networkx_bellman_ford(graph):
    """networkx's Bellman-Ford on the heights: a negative cycle exists exactly where
    the search finds a cycle of height sum below zero (floats: zero is not told)."""
    n, edges = graph
    g = nx.MultiDiGraph()
    g.add_nodes_from(range(n))
    for u, v, _, h in edges:
        g.add_edge(u, v, weight=h)
    negative = nx.negative_edge_cycle(g)
    floats = [(u, v, float(w), float(h)) for u, v, w, h in edges]
    if negative:
        with pytest.raises(UnboundedCycleError) as info:
            max_cycle_ratio(range(n), floats)
        cycle = list(info.value.cycle)
        assert sum(min(d["weight"] for d in g[a][b].values())
                   for a, b in zip(cycle, cycle[1:] + cycle[:1])) < 0
    elif any(h < 0 for *_, h in edges):
        import numpy as np
        u, v, h = (np.array([e[i] for e in floats]) for i in (0, 1, 3))
        assert _nonpositive_cycle(n, u.astype(np.int64), v.astype(np.int64), h,
                                  False) is None


@pytest.mark.parametrize("last, unbounded", [(-(50_000 - 1), True), (-(50_000 - 2), False)])
def test_a_long_ring_with_chords_is_told_without_a_round_per_edge(last, unbounded):
    """A ring of 50,000 nodes, height 1 on every edge but the closing one (``last``),
    and a chord ``i -> i + 2`` of height 3 at every node (two ring edges sum to 2, so a
    chord only adds height); weights 1.  The ring's sum is 0 for the first ``last``:
    unbounded, the whole ring named (every other cycle winds once at least and adds
    chords or windings); 1 for the second: ratio 50,000 / 1 (``k`` chords give
    ``(50,000 − k)/(1 + k)``).  Bellman-Ford from 0 everywhere needs a round per edge
    of the ring to close it (the search used to, 25,000 rounds and more)."""
    n = 50_000
    edges = [(i, i + 1, 1, 1) for i in range(n - 1)] + [(n - 1, 0, 1, last)] + \
        [(i, (i + 2) % n, 1, 3) for i in range(n)]
    _assert_whole_ring(n, edges, unbounded)


def test_unknown_endpoint():
    with pytest.raises(SDFError, match="'z' is not a node"):
        max_cycle_ratio("a", [("a", "z", 1, 1)])


def test_howard_does_not_cycle_when_a_cycle_changes_root(monkeypatch):
    # an HSDF expansion found by the random timing tests: the policy iteration looped
    # for ever when each value determination re-rooted a cycle's potentials at 0
    edges = [("a0#0", "a1#0", 5, 1), ("a0#0", "a1#1", 5, 0), ("a0#0", "a1#2", 5, 0),
             ("a1#0", "a2#0", 4, 2), ("a1#1", "a2#1", 4, 2), ("a1#2", "a2#2", 4, 2),
             ("a2#2", "a3#0", 6, 3), ("a2#0", "a3#0", 6, 2), ("a2#1", "a3#1", 6, 2),
             ("a2#2", "a3#1", 6, 2), ("a3#0", "a0#0", 2, 2), ("a3#1", "a0#0", 2, 2),
             ("a2#0", "a1#0", 6, 1), ("a2#1", "a1#1", 6, 1), ("a2#2", "a1#2", 6, 1),
             ("a0#0", "a2#0", 5, 0), ("a0#0", "a2#1", 5, 0), ("a0#0", "a2#2", 5, 0)]
    nodes = sorted({u for u, *_ in edges})
    import moc.howard_exact as hx
    calls = []
    values = hx._values

    def counted(*args):
        calls.append(1)
        assert len(calls) < 100, "the policy iteration does not end"
        return values(*args)
    monkeypatch.setattr(hx, "_values", counted)
    # a1#k -> a2#k -> a1#k: (4 + 6)/(2 + 1)
    assert max_cycle_ratio(nodes, edges).ratio == brute_force(nodes, edges) == Fraction(10, 3)


def test_howard_ends_where_rounding_alone_makes_a_root_s_own_edge_look_better(monkeypatch):
    """A ring of 20,000 edges of weight 4 or 8 (11 on one) and height 123,456,789,013
    times the weight: every edge at the ring's ratio, so potentials stay near 0 while
    the sums along the ring reach thousands.  Those sums, rounded in another order than
    the cycle's ratio, leave the root's own edge a gain above the tolerance of the
    potentials: the step changed nothing and repeated to its bound of steps, each time
    spread along the ring (a 10-actor graph of SDF3's generator ran for hours so).  A
    step that keeps every edge is the end."""
    import numpy as np
    import moc.cycle_ratio as cr
    n = 20_000
    w = np.random.default_rng(0).choice([4, 8], n)
    w[0] = 11
    h = w * 123_456_789_013
    steps = []
    evaluate = cr._policy_values

    def counted(*args, **kwargs):
        steps.append(1)
        assert len(steps) <= 5, "the policy iteration repeats a step"
        return evaluate(*args, **kwargs)
    monkeypatch.setattr(cr, "_policy_values", counted)
    ring = np.arange(n)
    ratio, cycle = cr.max_cycle_ratio_arrays(n, ring, (ring + 1) % n, w, h)
    assert ratio == Fraction(1, 123_456_789_013) and len(cycle) == n


big_graphs = st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.integers(10 ** 17, 10 ** 17 + 50),
                                   st.integers(10 ** 15, 10 ** 15 + 3)), max_size=10)))


@settings(max_examples=100, deadline=None)
@given(big_graphs)
def test_exact_where_floats_cannot_tell_the_ratios_apart(graph):
    # ratios that agree to 15 digits: the float iteration's answer is certified by
    # integer potentials or replaced by the exact iteration
    n, edges = graph
    assert max_cycle_ratio(range(n), edges).ratio == brute_force(range(n), edges)


tall_graphs = st.integers(1, 5).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.integers(0, 9),
                                   st.integers(2 ** 35, 2 ** 35 + 3)), max_size=10)))


@settings(max_examples=100, deadline=None)
@given(tall_graphs)
def test_the_exact_steps_from_the_float_policy_take_tall_heights_in_int64(graph):
    """Small weights over heights of 2^35 (a cyclo-static constraint graph's heights in
    units of 1/lcm of the cycles: SDF3's g0049 reaches 1.5·10^9): every cost
    ``w·D − h·N`` and its path sums fit in int64, so the float policy that is not
    certified is finished exactly from where it stopped, never by the iteration on
    Python dictionaries from the start."""
    _brute_force_with(graph, _certified=lambda *args: False,
                      exact_iteration=_refused("the exact iteration from the start ran"))


def _refused(message):
    def refused(*args):
        raise AssertionError(message)
    return refused


def _brute_force_with(graph, **stand_ins):
    """``max_cycle_ratio`` of ``graph`` with functions of ``moc.cycle_ratio`` replaced
    by ``stand_ins`` (by name), against the brute force: ratio and cycle."""
    import moc.cycle_ratio as cr
    n, edges = graph
    saved = {name: getattr(cr, name) for name in stand_ins}
    for name, stand_in in stand_ins.items():
        setattr(cr, name, stand_in)
    try:
        found = max_cycle_ratio(range(n), edges)
    finally:
        for name, function in saved.items():
            setattr(cr, name, function)
    expected = brute_force(range(n), edges)
    assert found.ratio == expected
    if expected is not None:
        assert ratio_of(list(found.cycle), edges) == expected


@st.composite
def tiny_ratio_graphs(draw):
    """Up to 9 nodes and 18 edges of weights 0-9: an edge to a later node has height 0,
    one back (or a self-loop) a height of 1-4 times 2^40, so every cycle has tokens, as
    in a constraint graph whose initial tokens run to 10^12.  Ratios that differ then
    differ by more than a thousandth of themselves (heights of 2^40 and 2^40 + 1 would
    give ratios that no float iteration tells apart: the exact iteration's work)."""
    n = draw(st.integers(1, 9))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                          max_size=18))
    return n, [(a, b, draw(st.integers(0, 9)),
                0 if b > a else draw(st.integers(1, 4)) * 2 ** 40) for a, b in pairs]


@settings(max_examples=300, deadline=None)
@given(tiny_ratio_graphs())
def test_ratios_far_below_the_float_tolerance_are_told_apart_in_floats(graph):
    """Ratios of 10^-12 (SDF3 generator's seed 41 g0039: tokens of 3·10^11 over
    weights of 1-3) lie far below the tolerance of 1e-9 with which the float
    iteration tells ratios apart; its heights are scaled down by a power of two from
    the first policy's ratios, so that its own policy is optimal: certified, with
    neither exact iteration run after it."""
    refused = _refused("the float policy was not optimal")
    _brute_force_with(graph, _exact_from=refused, exact_iteration=refused)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 30).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                         max_size=60))))
def test_strong_labels_partition_as_networkx(graph):
    """The Python search of a small graph and scipy's of a large one give networkx's
    strongly connected components."""
    import numpy as np

    import moc.cycle_ratio as cr
    n, edges = graph
    u = np.array([a for a, _ in edges], dtype=np.int64)
    v = np.array([b for _, b in edges], dtype=np.int64)
    g = nx.DiGraph()
    g.add_nodes_from(range(n))
    g.add_edges_from(edges)
    expected = sorted(sorted(c) for c in nx.strongly_connected_components(g))
    small = cr.strong_labels(n, u, v)
    order = np.argsort(u, kind="stable")
    saved, cr.SMALL_GRAPH = cr.SMALL_GRAPH, 0
    try:
        large = cr.strong_labels(n, u, v)
        # the rows read off edges sorted by tail: scipy's very labels
        by_tail = cr.strong_labels(n, u[order], v[order], by_tail=True)
    finally:
        cr.SMALL_GRAPH = saved
    assert by_tail.tolist() == large.tolist()
    for label in (small, large):
        groups: dict[int, list[int]] = {}
        for node, c in enumerate(label.tolist()):
            groups.setdefault(c, []).append(node)
        assert sorted(groups.values()) == expected


@pytest.mark.parametrize("setting", ["SMALL_GRAPH", "CREEP_STEPS"])
@settings(max_examples=150, deadline=None)
@given(graphs)
def test_howard_on_the_large_graph_path_equals_brute_force(setting, graph):
    """With scipy's components for every policy (as past ``SMALL_GRAPH`` nodes), or
    with every step at one ratio spread (:mod:`moc.policy_spread`, where steps creep:
    after ``CREEP_STEPS`` small ones in a row)."""
    import moc.cycle_ratio as cr
    n, edges = graph
    saved = getattr(cr, setting)
    setattr(cr, setting, 0)
    try:
        found = max_cycle_ratio(range(n), edges)
    finally:
        setattr(cr, setting, saved)
    expected = brute_force(range(n), edges)
    assert found.ratio == expected
    if expected is not None:
        assert ratio_of(list(found.cycle), edges) == expected


def walk(succ, value):
    """Per node, by following ``succ`` one step at a time: the smallest node of the
    cycle it reaches, whether it is on a cycle, and the sum of ``value`` up to that
    smallest node (the first time it is reached)."""
    n = len(succ)
    root, on, total = [0] * n, [False] * n, [0] * n
    for start in range(n):
        seen, here = [], start
        while here not in seen:
            seen.append(here)
            here = succ[here]
        cycle = seen[seen.index(here):]
        on[start] = start in cycle
        root[start] = min(cycle)
        here = start
        while here != root[start]:
            total[start] += value[here]
            here = succ[here]
    return root, on, total


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 25).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
    st.lists(st.integers(-9, 9), min_size=n, max_size=n))))
def test_policy_cycles_and_sums_as_a_walk(graph):
    """The cycles of a policy (numpy's pointer doubling and scipy's components), the
    root each node reaches and the sums to it, against a step-by-step walk."""
    import numpy as np

    import moc.cycle_ratio as cr
    succ, value = (np.array(x, dtype=np.int64) for x in graph)
    root, on, total = walk(graph[0], graph[1])
    cyclic = [i for i in range(len(succ)) if on[i]]
    roots = sorted(set(root))
    for found in (cr._cycles(succ), cr._cycles_large(succ)):
        assert found[0].tolist() == roots
        assert found[1].tolist() == cyclic
        assert found[2].tolist() == [root[i] for i in cyclic]
    (sums,), reached = cr._sums_to_roots(succ, (value,), np.array(roots))
    assert reached.tolist() == root and sums.tolist() == total
    # two float values at once, side by side, as Howard's weights and heights
    (halves, sums), reached = cr._sums_to_roots(succ, (value / 2, value * 1.0),
                                                np.array(roots))
    assert reached.tolist() == root and sums.tolist() == total
    assert halves.tolist() == [t / 2 for t in total]


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 25).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
    st.lists(st.integers(-9, 9), min_size=n, max_size=n),
    st.lists(st.integers(0, 5 * 10 ** 6), min_size=n, max_size=n))))
def test_packed_sums_give_the_float_sums_bit_for_bit(graph):
    """Whole weights and heights summed as one int64 ``h·B + w`` give Howard's ratios
    and potentials exactly as the two float sums do (both are exact), so the policies
    and the printed cycle stay; a weight that is not whole is not packed."""
    import numpy as np

    import moc.cycle_ratio as cr
    succ, w, h = (np.array(x, dtype=np.int64) for x in graph)
    w, h = w.astype(np.float64), h.astype(np.float64) + 1
    policy = np.arange(len(succ))
    packed = cr._packed(w, h)
    assert packed is not None
    eta, x = cr._policy_values(len(succ), succ, w, h, policy)
    eta2, x2 = cr._policy_values(len(succ), succ, w, h, policy, packed=packed)
    assert eta.tobytes() == eta2.tobytes() and x.tobytes() == x2.tobytes()
    assert cr._packed(w + 0.5, h) is None
    assert cr._packed(w + 2.0 ** 20, h * 2.0 ** 42) is None    # too large for one int64


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 20).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
    st.lists(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                      max_size=3), max_size=6),
    st.lists(st.integers(-9, 9), min_size=n, max_size=n),
    st.lists(st.integers(0, 5), min_size=n, max_size=n))), st.booleans())
def test_cycles_guessed_from_the_step_before_give_the_values_bit_for_bit(case, scipy):
    """A sequence of policies, each the one before with a few nodes moved: the values
    with the cycles guessed from the step before (kept where every node's sum reaches
    them) are, byte for byte, those of a search at every step, by the doubling and by
    scipy's components; the guess is taken at a step after one where it held."""
    import numpy as np

    import moc.cycle_ratio as cr
    first, moves, w, h = case
    n = len(first)
    w, h = np.array(w, dtype=np.float64), np.array(h, dtype=np.float64) + 0.5
    succ, policy = np.array(first, dtype=np.int64), np.arange(n)
    saved = cr.SMALL_GRAPH
    cr.SMALL_GRAPH = 0 if scipy else saved
    try:
        before, guessed, last, held = (None, None), (None, None), {}, 0
        for step in [[]] + moves:
            succ = succ.copy()
            for node, to in step:
                succ[node] = to
            held += bool(last.get("hold"))
            searched = cr._policy_values(n, succ, w, h, policy, *before, 1e-9)
            found = cr._policy_values(n, succ, w, h, policy, *guessed, 1e-9, last=last)
            assert all(a.tobytes() == b.tobytes() for a, b in zip(searched, found))
            before, guessed = searched, found
    finally:
        cr.SMALL_GRAPH = saved
    assert held <= len(moves)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 6), st.integers(-3, 3)), min_size=1))
def test_first_per_takes_each_group_s_first_largest(pairs):
    """Sorted groups (a segment's maximum) and unsorted ones (a sort) alike."""
    import numpy as np

    from moc.group_first import first_per
    for rows in (sorted(pairs, key=lambda p: p[0]), pairs):
        group = np.array([g for g, _ in rows], dtype=np.int64)
        key = np.array([k for _, k in rows], dtype=np.float64)
        best: dict = {}
        for i, (g, k) in enumerate(rows):
            if g not in best or k > rows[best[g]][1]:
                best[g] = i
        assert first_per(group, key).tolist() == [best[g] for g in sorted(best)]


@settings(deadline=None)
@given(st.lists(st.integers(-2 ** 40, 2 ** 40), max_size=40))
def test_sorted_unique_is_the_sorted_set(values):
    import numpy as np
    from moc.cycle_ratio import sorted_unique
    got = sorted_unique(np.array(values, dtype=np.int64))
    assert got.tolist() == sorted(set(values)) and got.dtype == np.int64


@settings(deadline=None)
@given(st.integers(1, 12).flatmap(lambda n: st.tuples(
    st.just(n),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=40),
    st.lists(st.integers(0, n - 1), max_size=n))))
def test_cycle_edges_are_the_edges_of_its_steps(case):
    """Every edge (parallel ones too) from a node of the cycle to the next one, the
    last to the first; no other."""
    import numpy as np
    from moc.cycle_ratio import cycle_edges
    n, edges, cycle = case
    u = np.array([a for a, _ in edges], dtype=np.int64)
    v = np.array([b for _, b in edges], dtype=np.int64)
    steps = set(zip(cycle, cycle[1:] + cycle[:1]))
    expected = [i for i, e in enumerate(edges) if e in steps]
    assert cycle_edges(n, u, v, cycle).tolist() == expected


def certificate_cases(most_w, most_h, most_n, most_d):
    return st.integers(2, 12).flatmap(lambda n: st.tuples(
        st.just(n),
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                           st.integers(0, most_w), st.integers(1, most_h)),
                 min_size=1, max_size=40),
        st.integers(0, most_n), st.integers(1, most_d)))


@settings(max_examples=200, deadline=None)
@given(certificate_cases(2 ** 20, 2 ** 44, 2 ** 12, 2 ** 24))
def test_the_certificate_in_int64_agrees_with_python_integers(graph):
    """``_certified`` of a policy of tall heights (where ``(max|w| + max|h|)·(|N| + D)·n``
    may pass int64 but each cost ``w·D − h·N`` and the sums of ``n`` do not), against
    the same test walked node by node in Python integers: ``y`` summed along the policy
    to 0 at the smallest node of the cycle reached, then ``y[u] ≥ w·D − N·h + y[v]`` on
    every edge, equal on the tight ones."""
    _check_certificate(graph)


@settings(max_examples=200, deadline=None)
@given(certificate_cases(2 ** 30, 2 ** 44, 2 ** 17, 2 ** 28))
def test_the_certificate_in_two_limbs_agrees_with_python_integers(graph):
    """The same where costs reach ``2**61`` and their sums pass int64: summed in two
    int64 limbs (:func:`moc.policy_sums.limb_path_sums`)."""
    _check_certificate(graph)


@settings(max_examples=200, deadline=None)
@given(st.integers(5, 12).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, n - 1), min_size=n, max_size=n),
    st.lists(st.integers(-2 ** 57, 2 ** 57), min_size=n - 1, max_size=n - 1),
    st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1), st.integers(-2, 2)),
             max_size=30))))
def test_the_two_limb_certificate_tells_slacks_near_zero(case):
    """Costs of ``2**59`` and up to ``2**62`` (weights alone: ratio 0; their sums past
    int64), potentials ``y`` along a random policy, and other edges of slack ``y[u] −
    y[v] − cost`` in −2..2: the certificate holds iff no slack is negative, and the
    tight edges are those of slack 0, where a sign read from the high limb alone,
    before the low one's borrow, errs."""
    import numpy as np

    import moc.cycle_ratio as cr
    succ, w_policy, others = case
    w_policy = [2 ** 59] + w_policy
    n = len(succ)
    y = potentials(succ, w_policy)
    edges = [(i, succ[i], w_policy[i]) for i in range(n)] + \
        [(a, b, y[a] - y[b] - slack) for a, b, slack in others]
    u, v, w = (np.array(c, dtype=np.int64) for c in zip(*edges))
    slacks = [y[a] - y[b] - c for a, b, c in edges]
    tight = []
    found = cr._certified(u, v, w, np.ones(len(u), dtype=np.int64), np.arange(n),
                          cr._cycle_roots(v[:n]), np.zeros(n, dtype=np.int64),
                          {0: Fraction(0)}, tight)
    assert found == all(s >= 0 for s in slacks)
    assert tight[0].tolist() == [s == 0 for s in slacks]


def potentials(succ, cost):
    """Per node the sum of ``cost`` (per node, of its edge) along ``succ`` to the
    smallest node of the cycle it reaches, walked node by node in Python integers."""
    y = []
    for start in range(len(succ)):
        seen, here = [], start
        while here not in seen:
            seen.append(here)
            here = succ[here]
        root = min(seen[seen.index(here):])
        total, here = 0, start
        while here != root:
            total += cost[here]
            here = succ[here]
        y.append(total)
    return y


def _check_certificate(graph):
    import numpy as np

    import moc.cycle_ratio as cr
    n, edges, N, D = graph
    # every node gets an out-edge (the policy: its first), all in one component
    edges = [(i, (i + 1) % n, 1, 1) for i in range(n)] + edges
    u, v, w, h = (np.array(c, dtype=np.int64) for c in zip(*edges))
    first = {}
    for e, a in enumerate(u.tolist()):
        first.setdefault(a, e)
    policy = np.array([first[i] for i in range(n)], dtype=np.int64)
    succ = v[policy].tolist()
    cost = [a * D - b * N for a, b in zip(w.tolist(), h.tolist())]
    y = potentials(succ, [cost[int(e)] for e in policy])
    expected = all(y[a] - y[b] - c >= 0 for a, b, c in zip(u.tolist(), v.tolist(), cost))
    tight = []
    found = cr._certified(u, v, w, h, policy, cr._cycle_roots(v[policy]),
                          np.zeros(n, dtype=np.int64), {0: Fraction(N, D)}, tight)
    assert found == expected
    assert tight[0].tolist() == [y[a] - y[b] - c == 0
                                 for a, b, c in zip(u.tolist(), v.tolist(), cost)]


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 7).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.integers(0, 9), st.integers(0, 2)), max_size=14))))
def test_a_cycle_of_zero_heights_is_found_iff_exhaustive_search_finds_one(graph):
    """Heights of 0-2 (a constraint graph's tokens): unbounded exactly where some
    simple cycle (networkx's enumeration) has only zero heights, a self-loop among
    them, and the cycle named is one; the components' sizes tell "none" first (by
    the Python search of a small graph and by scipy's of a large one)."""
    import moc.cycle_ratio as cr
    n, edges = graph
    least, lowest = lowest_height(range(n), edges)
    for small in (cr.SMALL_GRAPH, 0):
        saved, cr.SMALL_GRAPH = cr.SMALL_GRAPH, small
        try:
            if least is not None and least <= 0:
                with pytest.raises(UnboundedCycleError) as info:
                    max_cycle_ratio(range(n), edges)
                cycle = list(info.value.cycle)
                assert len(set(cycle)) == len(cycle)
                assert sum(lowest[p] for p in zip(cycle, cycle[1:] + cycle[:1])) == 0
            else:
                assert max_cycle_ratio(range(n), edges).ratio == \
                    brute_force(range(n), edges)
        finally:
            cr.SMALL_GRAPH = saved


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 6).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.integers(-3, 9), st.integers(-1, 4)), max_size=14))))
def test_the_lists_of_small_graphs_give_the_arrays_ratio_and_cycle(graph):
    """moc.howard_exact.max_cycle_ratio_lists, numpy's iteration on Python lists: the
    same ratio (brute force's) and the same cycle as max_cycle_ratio_arrays, or the same
    cycle of height sum zero or less."""
    import numpy as np
    from moc.cycle_ratio import max_cycle_ratio_arrays
    from moc.howard_exact import max_cycle_ratio_lists
    n, edges = graph
    u, v, w, h = ([e[k] for e in edges] for k in range(4))
    found = []
    for solve, args in ((max_cycle_ratio_lists, (u, v, w, h)),
                        (max_cycle_ratio_arrays,
                         tuple(np.array(x, dtype=np.int64) for x in (u, v, w, h)))):
        try:
            found.append(solve(n, *args))
        except UnboundedCycleError as exc:
            found.append(("unbounded", exc.cycle))
    assert found[0] == found[1]
    if found[0][0] not in (None, "unbounded"):
        assert found[0][0] == brute_force(range(n), edges)


@settings(max_examples=200, deadline=None)
@given(signed_graphs)
def test_negative_heights_skip_the_search_where_the_certificate_proves_it_vain(graph):
    """Heights of either sign, weights ≥ 0: where no simple cycle's heights sum to zero
    or less, the ratio is the brute force's and, wherever the policy's potentials
    prove every cycle of positive height (always where weights are positive), the
    search for a cycle of height zero or less never runs; where one exists, the search names it as before."""
    import moc.cycle_ratio as cr
    n, edges = graph
    least, _ = lowest_height(range(n), edges)
    searched = []
    saved = cr._nonpositive_cycle

    def counted(*args, **kwargs):
        searched.append(args[3])
        return saved(*args, **kwargs)
    cr._nonpositive_cycle = counted
    try:
        if least is not None and least <= 0:
            with pytest.raises(UnboundedCycleError):
                max_cycle_ratio(range(n), edges)
            assert any((h < 0).any() or (h == 0).any() for h in searched)
        else:
            assert max_cycle_ratio(range(n), edges).ratio == brute_force(range(n), edges)
            if all(w > 0 for _, _, w, _ in edges):
                # weights > 0: a positive ratio, no edge of weight 0, always proven
                assert not any((h < 0).any() for h in searched)
    finally:
        cr._nonpositive_cycle = saved


@pytest.mark.parametrize("edges", [
    # a cycle of weight 0 and height 0 beside negative heights: tight, found
    [("a", "b", 0, -1), ("b", "a", 0, 1), ("a", "a", 2, 1), ("b", "b", 1, 1)],
    # a cycle of positive weight and negative height: no certificate holds
    [("a", "b", 3, -2), ("b", "a", 1, 1), ("a", "a", 1, 1)],
])
def test_a_deferred_search_still_finds_a_cycle_without_height(edges):
    with pytest.raises(UnboundedCycleError) as info:
        max_cycle_ratio("ab", edges)
    assert set(info.value.cycle) == {"a", "b"}


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 7).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1),
                                   st.integers(0, 9), st.integers(0, 2)), max_size=14))),
       st.booleans())
def test_a_deferred_search_over_heights_of_zero_changes_no_answer(graph, least):
    """Heights of 0-2, weights of 0-9: the search for a cycle of height zero deferred
    (the default) gives the same ratio and cycle, or names the same cycle of height
    zero, as the search first (``defer=False``); it never runs (on heights with a
    zero) where weights are positive and no simple cycle (networkx's enumeration) has
    height zero."""
    import numpy as np
    import moc.cycle_ratio as cr
    n, edges = graph
    arrays = tuple(np.array([e[k] for e in edges], dtype=np.int64) for k in range(4))
    searched = []
    saved = cr._nonpositive_cycle

    def counted(*args, **kwargs):
        searched.append(args[3])
        return saved(*args, **kwargs)
    found = []
    cr._nonpositive_cycle = counted
    try:
        for defer in (True, False):
            try:
                found.append(cr.max_cycle_ratio_arrays(n, *arrays, defer=defer,
                                                       least=least))
            except UnboundedCycleError as exc:
                found.append(("unbounded", list(exc.cycle)))
            if defer:
                deferred_searches = [h for h in searched if (h <= 0).any()]
    finally:
        cr._nonpositive_cycle = saved
    assert found[0] == found[1]
    low, _ = lowest_height(range(n), edges)
    assert (found[0][0] == "unbounded") == (low is not None and low <= 0)
    if all(w > 0 for _, _, w, _ in edges) and not (low is not None and low <= 0):
        assert not deferred_searches
