"""Deadlock detection, the activity of one iteration (LSLA tokens) and HSDF expansion."""
import re

import pytest

from moc import (DeadlockError, ExpansionTooLargeError, SDFError, SDFGraph, activity,
                 check_deadlock, firing_sequence, hsdf_expansion, repetition_vector)


def cycle(delay_ab=0, delay_ba=0):
    g = SDFGraph("c")
    g.add_actor("a", quanta=3)
    g.add_actor("b", quanta=5, gamma=4)
    g.add_channel("a", "b", prod=2, cons=3, size=4, delay=delay_ab)
    g.add_channel("b", "a", prod=3, cons=2, delay=delay_ba)
    return g.bind()


def test_cycle_without_tokens_deadlocks_naming_both_actors():
    with pytest.raises(DeadlockError) as info:
        check_deadlock(cycle())
    assert set(info.value.actors) == {"a", "b"}
    assert "'a'" in str(info.value) and "'b'" in str(info.value)


def test_cycle_with_too_few_tokens_deadlocks():
    # q = (3, 2); b needs 3 tokens per firing, a makes 2 per firing from 2 read on b->a.
    with pytest.raises(DeadlockError):
        check_deadlock(cycle(delay_ba=1))


def test_cycle_with_enough_tokens_runs_one_iteration():
    g = cycle(delay_ba=6)
    seq = firing_sequence(g)
    fired = {}
    for actor, n in seq:
        fired[actor] = fired.get(actor, 0) + n
    assert fired == repetition_vector(g) == {"a": 3, "b": 2}


def test_self_loop_needs_an_initial_token():
    g = SDFGraph("s")
    g.add_actor("x")
    g.add_channel("x", "x", delay=0)
    with pytest.raises(DeadlockError) as info:
        check_deadlock(g.bind())
    assert info.value.actors == ("x",)
    g2 = SDFGraph("s")
    g2.add_actor("x")
    g2.add_channel("x", "x", delay=1)
    check_deadlock(g2.bind())


def test_activity_counts_tokens_as_lsla():
    g = cycle(delay_ba=6)
    act = activity(g)
    # a fires 3 times: 3 processing tokens of quanta 3; b: 2 tokens of quanta 5.
    assert (act.processing["a"].count, act.processing["a"].quanta) == (3, 3)
    assert (act.processing["b"].count, act.processing["b"].quanta) == (2, 5)
    # a->b: one token per producer firing, prod·size = 2·4 bytes; gamma from producer b? no: a.
    ab = act.communication["a->b"]
    assert (ab.count, ab.quanta) == (3, 8)
    assert "gamma" not in ab.attrs
    ba = act.communication["b->a"]
    assert (ba.count, ba.quanta, ba.attrs["gamma"]) == (2, 3, 4)
    assert act.token_counts == {"processing": 5, "communication": 5}


def test_hsdf_of_h263_like_graph_has_one_actor_per_firing():
    g = SDFGraph("m")
    g.add_actor("src")
    g.add_actor("dst")
    g.add_channel("src", "dst", prod=3, cons=2)
    h = hsdf_expansion(g.bind())
    assert sorted(h.actors) == ["dst#0", "dst#1", "dst#2", "src#0", "src#1"]
    # Tokens 0,1 -> dst#0 from src#0; tokens 2,3 -> dst#1 from src#0 and src#1; 4,5 -> dst#2.
    pairs = {(c.src, c.dst) for c in h.channels.values()}
    assert pairs == {("src#0", "dst#0"), ("src#0", "dst#1"), ("src#1", "dst#1"),
                     ("src#1", "dst#2")}
    assert repetition_vector(h.bind()) == {a: 1 for a in h.actors}


def test_hsdf_keeps_delays_as_iteration_distance():
    g = SDFGraph("loop")
    g.add_actor("x")
    g.add_channel("x", "x", delay=1)
    h = hsdf_expansion(g.bind())
    (ch,) = h.channels.values()
    assert (ch.src, ch.dst, ch.delay) == ("x#0", "x#0", 1)


def test_firing_names_and_channel_labels_read_back():
    # one spelling (moc.hsdf), read back even where the names hold its separators
    from moc.hsdf import channel_label, channel_of, firing_actor, firing_name
    assert firing_name("a", 3) == "a#3" and firing_actor("a#3") == "a"
    assert firing_actor(firing_name("x#1", 12)) == "x#1"
    label = channel_label("c:d->e", "a#0", "b#2")
    assert label == "c:d->e:a#0->b#2" and channel_of(label, "a#0", "b#2") == "c:d->e"
    g = SDFGraph("m")
    g.add_actor("src")
    g.add_actor("dst")
    g.add_channel("src", "dst", prod=3, cons=2)            # named 'src->dst'
    h = hsdf_expansion(g.bind())
    assert {channel_of(label, c.src, c.dst) for label, c in h.channels.items()} == \
        {"src->dst"}
    assert {firing_actor(f) for f in h.actors} == {"src", "dst"}


def test_hsdf_guard_refuses_large_expansions():
    g = SDFGraph("big")
    g.add_actor("a")
    g.add_actor("b")
    g.add_channel("a", "b", prod=1000, cons=1)
    with pytest.raises(ExpansionTooLargeError, match="1001 firings"):
        hsdf_expansion(g.bind(), max_firings=1000)


def test_bad_rates_are_errors_naming_the_channel():
    # refused when the channel is added, not when the graph is bound
    g = SDFGraph("bad")
    g.add_actor("a")
    g.add_actor("b")
    with pytest.raises(SDFError, match="'link': prod must be a positive integer"):
        g.add_channel("a", "b", name="link", prod=1.5)
    with pytest.raises(SDFError, match="delay must be a non-negative integer"):
        g.add_channel("a", "b", name="link", delay=-1)
    assert not g.channels


def test_duplicate_and_ambiguous_names():
    g = SDFGraph("d")
    g.add_actor("a")
    with pytest.raises(SDFError, match="duplicate actor 'a'"):
        g.add_actor("a")
    g.add_actor("b")
    g.add_channel("a", "b")
    with pytest.raises(SDFError, match="second unnamed channel a->b"):
        g.add_channel("a", "b")
    with pytest.raises(SDFError, match="unknown actor 'zz'"):
        g.add_channel("a", "zz")


def test_large_chain_is_fast_enough_to_analyse():
    g = SDFGraph("chain")
    n = 10_000
    for i in range(n):
        g.add_actor(f"a{i}")
    for i in range(n - 1):
        g.add_channel(f"a{i}", f"a{i+1}", prod=2 if i % 2 == 0 else 1, cons=1 if i % 2 == 0 else 2)
    b = g.bind()
    act = activity(b)
    assert act.repetitions["a1"] == 2 and act.repetitions["a2"] == 1
    check_deadlock(b, dict(act.repetitions))


# --- the deadlock check at scale, and its limit --------------------------------------------

import math

from hypothesis import given, settings, strategies as st

import moc.limits
from moc import LimitError, iteration_firings
from moc.hsdf import channel_of


def ping_pong(n, delay=1):
    """``src`` feeds ``a`` n tokens at once; ``a`` and ``b`` pass one token back and forth:
    n firings of each, one at a time, so a simulation of firing runs takes 2n runs."""
    g = SDFGraph("ping")
    for name in ("src", "a", "b"):
        g.add_actor(name)
    g.add_channel("src", "a", prod=n)
    g.add_channel("a", "b")
    g.add_channel("b", "a", delay=delay)
    return g.bind()


def test_ping_pong_with_a_huge_repetition_vector_is_checked_at_once():
    # took 154 s for n = 10^7 and never finished for 10^9 before rounds were repeated at once
    for n in (10 ** 7, 10 ** 9, 10 ** 18):
        check_deadlock(ping_pong(n))
        assert iteration_firings(ping_pong(n)) == {"src": 1, "a": n, "b": n}
    with pytest.raises(DeadlockError) as info:
        check_deadlock(ping_pong(10 ** 9, delay=0))
    assert info.value.actors == ("a", "b")


def test_deadlock_check_stops_past_the_firings_limit(monkeypatch):
    monkeypatch.setattr(moc.limits, "MAX_FIRINGS", 1)       # read when the check runs
    with pytest.raises(LimitError, match=r"raise it with --limit firings=N") as info:
        check_deadlock(ping_pong(10))
    assert isinstance(info.value, SDFError) and info.value.limit == "firings"
    with pytest.raises(LimitError, match="firings"):
        firing_sequence(ping_pong(10))


def test_limit_error_is_a_clear_exit_2(monkeypatch, tmp_path, capsys):
    from mapping.cli.main import main
    path = tmp_path / "ping.sdf"
    path.write_text("sdf ping {\n  actor src; actor a; actor b\n  src -> a [prod = 1000]\n"
                    "  a -> b\n  b -> a [delay = 1]\n}\n")
    assert main(["check", str(path)]) == 0
    capsys.readouterr()
    monkeypatch.setattr(moc.limits, "MAX_FIRINGS", 1)
    assert main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert "--limit firings=N" in err and "Traceback" not in err


def fire_one_at_a_time(graph, q):
    """The definition: fire any enabled actor that has firings left, once, until none is."""
    tokens = {c.name: c.delay for c in graph.channels.values()}
    fired = {a: 0 for a in graph.actors}
    progress = True
    while progress:
        progress = False
        for a in graph.actors:
            ins = [c for c in graph.channels.values() if c.dst == a]
            if fired[a] < q[a] and all(tokens[c.name] >= c.cons for c in ins):
                for c in ins:
                    tokens[c.name] -= c.cons
                for c in graph.channels.values():
                    if c.src == a:
                        tokens[c.name] += c.prod
                fired[a] += 1
                progress = True
    return fired


@st.composite
def cyclic_graphs(draw):
    n = draw(st.integers(1, 5))
    scale = draw(st.sampled_from([1, 12]))     # long runs: rounds repeated at once
    q = [draw(st.integers(1, 4)) * scale for _ in range(n)]
    g = SDFGraph("g")
    for i in range(n):
        g.add_actor(f"a{i}")
    if scale > 1:                                   # a source firing once keeps the scale
        g.add_actor("s")
        g.add_channel("s", "a0", prod=q[0])
    for k in range(draw(st.integers(0, 7))):
        i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
        lcm = q[i] * q[j] // math.gcd(q[i], q[j])
        factor = draw(st.integers(1, 3))
        cons = lcm // q[j] * factor
        delay = draw(st.one_of(st.integers(0, 2 * cons), st.integers(0, cons * q[j] + 1)))
        g.add_channel(f"a{i}", f"a{j}", name=f"c{k}", prod=lcm // q[i] * factor, cons=cons,
                      delay=delay)
    return g.bind()


@settings(max_examples=200, deadline=None)
@given(g=cyclic_graphs())
def test_iteration_firings_equal_firing_one_at_a_time(g):
    q = repetition_vector(g)
    expected = fire_one_at_a_time(g, q)
    assert iteration_firings(g, q) == expected
    if expected == q:
        check_deadlock(g, q)
    else:
        with pytest.raises(DeadlockError) as info:
            check_deadlock(g, q)
        assert set(info.value.actors) == {a for a in g.actors if expected[a] < q[a]}


# --- HSDF: one guard, work per (writer, reader) pair -----------------------------------------

def test_hsdf_guard_reads_the_firings_limit(monkeypatch):
    g = SDFGraph("big")
    g.add_actor("a")
    g.add_actor("b")
    g.add_channel("a", "b", prod=10, cons=1)
    monkeypatch.setattr(moc.limits, "MAX_FIRINGS", 10)
    with pytest.raises(ExpansionTooLargeError, match="11 firings.*--limit firings=N"):
        hsdf_expansion(g.bind())


def test_hsdf_of_large_rates_has_one_edge_per_firing_pair():
    g = SDFGraph("wide")
    g.add_actor("a")
    g.add_actor("b")
    g.add_channel("a", "b", prod=10 ** 9, cons=10 ** 9, delay=10 ** 9)
    h = hsdf_expansion(g.bind())
    (ch,) = h.channels.values()
    assert (ch.src, ch.dst, ch.delay) == ("a#0", "b#0", 1)


def hsdf_token_by_token(graph):
    """The expansion token by token, as first written: the reference of the pairwise one."""
    q = repetition_vector(graph)
    edges = {}
    for ch in graph.channels.values():
        for n in range(q[ch.dst] * ch.cons):
            back, index = divmod(n - ch.delay, q[ch.src] * ch.prod)
            key = (ch.name, f"{ch.src}#{index // ch.prod}", f"{ch.dst}#{n // ch.cons}")
            edges[key] = min(edges.get(key, -back), -back)
    return edges


@settings(max_examples=100, deadline=None)
@given(g=cyclic_graphs())
def test_hsdf_pairs_equal_the_token_by_token_expansion(g):
    h = hsdf_expansion(g)
    got = {(channel_of(name, c.src, c.dst), c.src, c.dst): c.delay
           for name, c in h.channels.items()}
    assert got == hsdf_token_by_token(g)


# --- values of actors and channels --------------------------------------------------------------

# refused when the actor or channel is added (values known then), not when bound

@pytest.mark.parametrize("quanta", [-1, math.inf, math.nan])
def test_quanta_must_be_finite_and_non_negative(quanta):
    g = SDFGraph("v")
    with pytest.raises(SDFError, match="actor 'a': quanta must be a finite non-negative"):
        g.add_actor("a", quanta=quanta)
    assert not g.actors


@pytest.mark.parametrize("size", [-1, math.inf, math.nan])
def test_size_must_be_finite_and_non_negative(size):
    g = SDFGraph("v")
    g.add_actor("a")
    g.add_actor("b")
    with pytest.raises(SDFError, match="channel 'ab': size must be a finite non-negative"):
        g.add_channel("a", "b", name="ab", size=size)


def test_no_attribute_is_nan_but_infinity_is_a_value():
    g = SDFGraph("v")
    g.add_actor("a", intensity=math.inf)
    with pytest.raises(SDFError, match="actor 'b': S is not a number"):
        g.add_actor("b", S=math.nan)
    g.add_actor("b")
    with pytest.raises(SDFError, match="channel 'ab': gamma is not a number"):
        g.add_channel("a", "b", name="ab", gamma=math.nan)
    assert g.bind().actors["a"].attrs["intensity"] == math.inf


def test_rates_and_delays_reject_nan_and_infinity():
    for field, value in (("prod", math.nan), ("cons", math.inf), ("delay", math.nan)):
        g = SDFGraph("v")
        g.add_actor("a")
        g.add_actor("b")
        with pytest.raises(SDFError, match=f"'ab': {field} must be a"):
            g.add_channel("a", "b", name="ab", **{field: value})


@settings(max_examples=100, deadline=None)
@given(g=cyclic_graphs())
def test_components_are_networkx_s_in_topological_order(g):
    import networkx as nx
    from moc.deadlock import strongly_connected_components
    components = strongly_connected_components(g)
    expected = {frozenset(c) for c in nx.strongly_connected_components(g.to_networkx())}
    assert {frozenset(c) for c in components} == expected
    position = {a: i for i, c in enumerate(components) for a in c}
    assert all(position[c.src] <= position[c.dst] for c in g.channels.values())


def test_a_long_chain_of_parameters_binds():
    # 3,000 parameters each defined from the previous one: every parameter is evaluated
    # once (measured: 10 ms; before, each evaluation walked the chain again: 23 s)
    import dsl
    n = 3000
    text = ("sdf g {\n  param p0 = 1\n"
            + "".join(f"  param p{i} = p{i - 1} + 1\n" for i in range(1, n))
            + f"  actor a [quanta = p{n - 1}]\n}}\n")
    graph = dsl.parse_sdf(text)[0]
    bound = graph.bind()
    assert bound.actors["a"].quanta == n and bound.params[f"p{n - 1}"] == n


@pytest.mark.parametrize("attrs, message", [
    ("actor a [quanta = 2 ** 2000 * S]\n a -> b",
     "actor 'a': quanta must be a finite non-negative number, got an integer of about 603 digits"),
    ("actor a\n a -> b [size = 2 ** 2000 * S]",
     "channel 'a->b': size must be a finite non-negative number, got an integer of about 603"),
    ("actor a\n a -> b [prod = 2 ** 2000 * S]",
     "channel 'a->b': prod must be a positive integer within the float range, got an "
     "integer of about 603 digits"),
])
def test_integers_beyond_the_float_range_are_refused_when_bound(attrs, message):
    # found by the fuzzer: math.isfinite of such an integer raised OverflowError (exit 1)
    import dsl
    graph = dsl.parse_sdf(f"sdf g {{\n param S = 4\n actor b\n {attrs}\n}}\n")[0]
    with pytest.raises(SDFError, match=re.escape(message)):
        graph.bind()


def test_the_writer_of_a_token():
    from moc.hsdf import token_writer
    # rate 2, 3 initial tokens: tokens 0-2 are initial (firings -2 and -1 of the
    # iterations before), then firing 0 writes tokens 3 and 4, firing 1 token 5
    assert [token_writer(n, 2, 3) for n in range(6)] == [-2, -1, -1, 0, 0, 1]
