"""Timing of the self-timed execution of an SDF graph alone (moc.timing, SPEC §13).

The hand values follow the execution step by step: a firing consumes at its start and
produces at its end; every enabled firing starts at once (no self-loop: any number of
firings of one actor overlap).
"""
import json
import math
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, event, given, settings, strategies as st

import moc.limits
from moc import SDFGraph, hsdf_expansion
from moc.cycle_ratio import max_cycle_ratio
from moc.errors import DeadlockError, InconsistentGraphError, LimitError, SDFError
from moc.kperiodic import constraint_edges, kperiodic_throughput
from moc.repetition import repetition_vector
from moc.self_timed import first_iteration, simulate
from moc.timing import analyse, execution_times, throughput
from test_kperiodic_stop import grown_from_one


def two_actor_cycle(tokens, self_loop=False):
    """a -(2:3)-> b -(3:2)-> a with ``tokens`` on b->a; q = (a: 3, b: 2); d(a)=1, d(b)=2."""
    g = SDFGraph("two")
    g.add_actor("a", exec=1)
    g.add_actor("b", exec=2)
    g.add_channel("a", "b", prod=2, cons=3)
    g.add_channel("b", "a", prod=3, cons=2, delay=tokens)
    if self_loop:
        g.add_channel("a", "a", delay=1)
    return g


def starts(result):
    return {a: [(f.start, f.end) for f in fs] for a, fs in result.schedule.items()}


def test_two_actor_multirate_cycle():
    # 4 tokens on b->a.  t=0: a fires twice (4 tokens), ends at 1: a->b holds 4.
    # t=1: b fires once (3), ends at 3: b->a holds 3.  t=3: a fires once (2 of 3),
    # ends at 4: a->b holds 1+2 = 3.  t=4: b fires, ends at 6: b->a holds 1+3 = 4,
    # the state of t=0 (nothing left, two firings of a ending 1 later): one iteration
    # (a fired 2+1 = q(a) times) takes 6.  The chain a, b, a, b = 1+2+1+2 crosses one
    # iteration: the critical cycle is {a, b}, period 6.
    result = analyse(two_actor_cycle(4))
    assert result.throughput == Fraction(1, 6) and result.period == 6
    assert set(result.critical_cycle) == {"a", "b"}
    assert starts(result) == {"a": [(0, 1), (0, 1), (3, 4)], "b": [(1, 3), (4, 6)]}
    assert result.latency == 6                       # b#1 ends last
    assert dict(result.buffers) == {"a->b": 4, "b->a": 4}   # a->b at t=1; b->a at 0, 6


def test_kperiodic_iteration_beats_the_one_periodic_bound():
    # K = 1, R = 6 tokens per iteration on both channels, g = gcd(p, c) = 1:
    # height (g·⌊M0/g⌋ + g − c)/R is (0 + 1 − 3)/6 = −1/3 on a->b, (4 + 1 − 2)/6 = 1/2 on
    # b->a: the cycle's ratio (1 + 2)/(1/6) = 18 is the best 1-periodic period.  It is no
    # repeating chain of firings (each firing of b waits for the 2nd and the 3rd of a in
    # turn), so K grows on a and b, to q here, and the period is the true 6.
    g = two_actor_cycle(4)
    q, durations = repetition_vector(g), execution_times(g)
    ones = {a: 1 for a in g.actors}
    edges = [e[:4] for e in constraint_edges(g.channels.values(), durations, q, ones)]
    assert edges == [(("a", 1), ("b", 1), 1, Fraction(-1, 3)),
                     (("b", 1), ("a", 1), 2, Fraction(1, 2))]
    assert max_cycle_ratio([("a", 1), ("b", 1)], edges).ratio == 18
    found = kperiodic_throughput(g, durations, q)
    assert found.period == 6 and dict(found.periodicity) == {"a": 3, "b": 2}


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 2 ** 36), st.integers(1, 8), st.integers(1, 8), st.integers(1, 12),
       st.integers(1, 12), st.integers(0, 2 ** 64), st.sampled_from([0, 62, 63]))
def test_constraint_pairs_of_large_numbers_are_exact(r, a, b, K_a, K_b, m0, near):
    """The pairs and ``x_max`` of a channel's constraint edges (int64 where every number
    fits, Python integers past that) against the definition, pair by pair in Python
    integers: ``(k_a, k_b)`` is an edge iff ``C0 mod g < p``, ``C0 = M0 + p·k_a −
    c·k_b``, ``g = gcd(p·K_a, c·K_b)``, and ``x_max = g·⌊(p − C0 − 1)/g⌋``."""
    from types import SimpleNamespace
    from moc.kperiodic import _channel_edges
    p, c = r * a, r * b                         # a common factor: g above p as well
    if near == 62:       # the largest numbers just below 2^62 (int64)
        m0 = max(0, 2 ** 62 - (p + c) * (K_a + 1) * (K_b + 1) - m0 % 4)
    elif near == 63:     # M0 + p·k_a past int64
        m0 = 2 ** 63 - 1 - m0 % p
    g = math.gcd(p * K_a, c * K_b)
    expected = [(k_a, k_b, g * ((p - c0 - 1) // g))
                for k_a in range(1, K_a + 1) for k_b in range(1, K_b + 1)
                for c0 in [m0 + p * k_a - c * k_b] if c0 % g < p]
    ka, kb, x = _channel_edges(SimpleNamespace(prod=p, cons=c, delay=m0), K_a, K_b)
    assert list(zip(ka.tolist(), kb.tolist(), x.tolist())) == expected


def test_firings_read_as_the_tuple_of_their_firings():
    """The schedule's lazy sequence (moc.self_timed.Firings) against the tuple of the
    same Firing objects: equal both ways, same items, slices, hash and JSON rows."""
    import pickle
    from moc.self_timed import Firing, Firings
    from moc.timing import _rows
    fs = Firings("a", [0, Fraction(1, 2), 2], [1, Fraction(3, 2), 4])
    expected = (Firing("a", 0, 0, 1), Firing("a", 1, Fraction(1, 2), Fraction(3, 2)),
                Firing("a", 2, 2, 4))
    assert fs == expected and expected == fs and tuple(fs) == expected and len(fs) == 3
    assert fs[-1] == expected[-1] and fs[1:] == expected[1:] and fs[::2] == expected[::2]
    assert hash(fs) == hash(expected) and pickle.loads(pickle.dumps(fs)) == fs
    assert fs != Firings("b", fs.starts, fs.ends) and fs != expected[:2]
    with pytest.raises(IndexError):
        fs[3]
    rows = [{"firing": "a#0", "start": 0, "end": 1},
            {"firing": "a#1", "start": 0.5, "end": 1.5},
            {"firing": "a#2", "start": 2, "end": 4}]
    assert _rows(fs) == _rows(expected) == rows
    assert all(type(r["start"]) is type(e["start"]) for r, e in zip(_rows(fs), rows))


def test_auto_concurrency_matters_and_a_self_loop_limits_it():
    # 6 tokens: t=0 all three firings of a overlap (end 1), then both of b (1..3): the
    # tokens are back at t=3, period 3 (the cycle a, b: 1 + 2).
    free = analyse(two_actor_cycle(6))
    assert free.period == 3 and free.latency == 3
    assert starts(free) == {"a": [(0, 1)] * 3, "b": [(1, 3)] * 2}
    assert dict(free.buffers) == {"a->b": 6, "b->a": 6}
    # a self-loop with one token: a fires at 0, 1, 2; a->b holds 2 at t=1, 4 at t=2,
    # so b fires at 2 (ends 4) and 3 (ends 5); b->a gets 3 at t=4 (a fires, 1 left) and
    # 3 at t=5 (a fires at 5 and 6).  The state after the starts of t=4 (b->a 1, a->b 0,
    # a ending in 1, b ending in 1) recurs at t=8: period 4 > 3, although a alone
    # (3 firings of 1) needs only 3.
    limited = analyse(two_actor_cycle(6, self_loop=True))
    assert limited.period == 4 and limited.throughput == Fraction(1, 4)
    assert set(limited.critical_cycle) == {"a", "b"}
    assert starts(limited) == {"a": [(0, 1), (1, 2), (2, 3)], "b": [(2, 4), (3, 5)]}
    assert limited.latency == 5
    assert dict(limited.buffers) == {"a->b": 4, "b->a": 6, "a->a": 1}


def test_self_loop_with_two_tokens_overlaps_two_firings():
    # one actor, d = 3, a self-loop with 2 tokens: two firings every 3, period 3/2
    g = SDFGraph("s")
    g.add_actor("a", exec=3)
    g.add_channel("a", "a", delay=2)
    result = analyse(g)
    assert result.period == Fraction(3, 2) and result.throughput == Fraction(2, 3)
    assert result.critical_cycle == ("a",)
    assert result.latency == 3 and dict(result.buffers) == {"a->a": 2}


def test_acyclic_graph_has_unbounded_throughput():
    # no cycle bounds a or b: infinitely many firings of a start at 0
    g = SDFGraph("p")
    g.add_actor("a", exec=1)
    g.add_actor("b", exec=2)
    g.add_channel("a", "b", prod=2)
    result = analyse(g)
    assert result.throughput == math.inf and result.period == 0
    assert result.critical_cycle == ()
    # q = (1, 2): a 0..1, both firings of b 1..3
    assert starts(result) == {"a": [(0, 1)], "b": [(1, 3), (1, 3)]}
    assert result.latency == 3
    assert dict(result.buffers) == {"a->b": math.inf}
    assert throughput(g).throughput == math.inf


def test_zero_time_cycle():
    # a and b take no time and pass one token around: infinitely many firings at 0,
    # throughput inf; a->b and b->a hold at most that token (not explored), while a->c
    # receives unboundedly many tokens at time 0
    g = SDFGraph("z")
    g.add_actor("a", exec=0)
    g.add_actor("b", exec=0)
    g.add_actor("c", exec=1)
    g.add_channel("a", "b")
    g.add_channel("b", "a", delay=1)
    g.add_channel("a", "c")
    result = analyse(g)
    assert result.throughput == math.inf and result.period == 0
    assert dict(result.buffers) == {"a->b": None, "b->a": None, "a->c": math.inf}
    assert starts(result) == {"a": [(0, 0)], "b": [(0, 0)], "c": [(0, 1)]}


def test_zero_time_sources_beside_a_slow_self_loop():
    """The situation of Kiter's ``faustExample`` (an audio dot product), on a graph
    written here: every actor one firing at a time (a self-loop with one token), four
    sources and a sink that take no time, two multiplies of 3 and an add of 14.  Kiter's
    ``KPeriodicThroughput`` prints an infinite throughput (period 0) on this graph, and
    14 once the zero-time actors lose their self-loops or take time 1: its cycle ratio
    fails on a cycle of no time.  By hand: the add's n-th firing cannot start before its
    (n-1)-th ends, so n iterations take at least 14n; and the schedule where the sources
    fire at time 0, the multiplies every 3 and the add every 14 keeps that pace: the
    period is 14, not 0.  The zero-time self-loops let the sources run ahead without
    bound (their channels grow); they do not bound the period."""
    g = SDFGraph("dot")
    for name, exec_ in (("in0", 0), ("in1", 0), ("in2", 0), ("in3", 0),
                        ("mul0", 3), ("mul1", 3), ("add", 14), ("out", 0)):
        g.add_actor(name, exec=exec_)
        g.add_channel(name, name, name=f"{name}_self", delay=1)
    for src, dst in (("in0", "mul0"), ("in1", "mul0"), ("in2", "mul1"), ("in3", "mul1"),
                     ("mul0", "add"), ("mul1", "add"), ("add", "out")):
        g.add_channel(src, dst)
    result = analyse(g)
    assert result.period == 14 and result.throughput == Fraction(1, 14)
    assert result.critical_cycle == ("add",)
    assert throughput(g).period == 14
    assert hsdf_period(g) == 14                  # the expansion's maximum cycle ratio


def test_pipeline_of_unequal_paces():
    # a (d=1) and b (d=2), each limited to one firing at a time by a self-loop:
    # a fires every 1, b every 2, so a->b grows without bound; period 2 (b)
    g = SDFGraph("pipe")
    g.add_actor("a", exec=1)
    g.add_actor("b", exec=2)
    g.add_channel("a", "b")
    g.add_channel("a", "a", name="sa", delay=1)
    g.add_channel("b", "b", name="sb", delay=1)
    # c (d=2, one firing at a time) after b: b ends at 3, 5, 7, ..., c starts at 3, 5,
    # 7, ... so b->c never holds more than 1 token
    g.add_actor("c", exec=2)
    g.add_channel("b", "c")
    g.add_channel("c", "c", name="sc", delay=1)
    result = analyse(g)
    assert result.period == 2 and result.critical_cycle in {("b",), ("c",)}
    assert starts(result) == {"a": [(0, 1)], "b": [(1, 3)], "c": [(3, 5)]}
    assert result.latency == 5
    assert dict(result.buffers) == {"a->b": math.inf, "sa": 1, "sb": 1, "b->c": 1, "sc": 1}


def test_float_times_give_floats():
    # the cycle of test_two_actor_multirate_cycle with times 0.1 and 0.2: the same
    # schedule scaled by 1/10 (times add up exactly: a float is the fraction it stores)
    g = SDFGraph("f")
    g.add_actor("a", exec=0.1)
    g.add_actor("b", exec=0.2)
    for ch in two_actor_cycle(4).channels.values():
        g.add_channel(ch.src, ch.dst, prod=ch.prod, cons=ch.cons, delay=ch.delay)
    result = analyse(g)
    assert isinstance(result.period, float) and result.period == pytest.approx(0.6)
    assert result.throughput == pytest.approx(1 / 0.6) and result.latency == pytest.approx(0.6)
    assert [f.end for f in result.schedule["b"]] == pytest.approx([0.3, 0.6])
    assert all(isinstance(f.start, float) for fs in result.schedule.values() for f in fs)
    assert dict(result.buffers) == {"a->b": 4, "b->a": 4}
    assert isinstance(throughput(g).period, float)


def test_float_times_that_add_up_are_equal_paces():
    # a (0.3) feeds 3 tokens to b (0.1), each one firing at a time: both take 0.3 per
    # iteration, so a->b holds at most the 3 tokens of one firing of a (in floats,
    # 3·0.1 > 0.3 made b look slower and a->b unbounded)
    g = SDFGraph("f")
    g.add_actor("a", exec=0.3)
    g.add_actor("b", exec=0.1)
    g.add_channel("a", "b", prod=3)
    g.add_channel("a", "a", name="sa", delay=1)
    g.add_channel("b", "b", name="sb", delay=1)
    result = analyse(g)
    assert result.period == 0.3 and dict(result.buffers) == {"a->b": 3, "sa": 1, "sb": 1}


def test_to_dict_and_str():
    result = analyse(two_actor_cycle(4))
    d = result.to_dict()
    assert set(d) == {"throughput", "period", "critical_cycle", "latency", "buffers",
                      "schedule", "method", "schedule_missing"}
    assert d["schedule_missing"] is None
    assert analyse(two_actor_cycle(4), simulate=False).to_dict()["schedule_missing"] == \
        "not simulated (--no-simulate)"
    assert d["throughput"] == pytest.approx(1 / 6) and isinstance(d["period"], float)
    assert d["schedule"]["b"] == [{"firing": "b#0", "start": 1, "end": 3},
                                  {"firing": "b#1", "start": 4, "end": 6}]
    from dsl.json_export import json_safe
    assert json.loads(json.dumps(json_safe(analyse(two_actor_cycle(4)).to_dict())))
    acyclic = SDFGraph("p")
    acyclic.add_actor("a", exec=1)
    acyclic.add_actor("b", exec=1)
    acyclic.add_channel("a", "b")
    document = json.loads(json.dumps(json_safe(analyse(acyclic).to_dict()), allow_nan=False))
    assert document["throughput"] == "inf" and document["buffers"] == {"a->b": "inf"}
    text = str(result)
    assert "period         6" in text and "a->b  4" in text and "b#1 4-6" in text
    quick = analyse(two_actor_cycle(4), simulate=False)
    assert quick.period == 6 and quick.latency is quick.buffers is quick.schedule is None
    assert quick.to_dict()["schedule"] is None and "latency" not in str(quick)


def test_exec_attribute_is_chosen():
    g = SDFGraph("x")
    g.add_actor("a", exec=1, wcet=5)
    g.add_channel("a", "a", delay=1)
    assert throughput(g).period == 1 and throughput(g, exec_attr="wcet").period == 5


def test_multirate_cycle_of_a_million_firings():
    # q = (a: 500001, b: 499999), the sum is 10^6.  Each actor has a self-loop with one
    # token: a needs q(a)·2 = 1000002 per iteration, b needs q(b)·3 = 1499997.  The
    # cycle a, b with 3·10^6 tokens bounds the 1-periodic schedule by
    # (2+3)·R/(3·10^6 + 2 − 10^6) ≈ 624998 (R = 499999·500001), so K = 1 already meets
    # b's bound, which no schedule beats: period 1499997.
    g = SDFGraph("big")
    g.add_actor("a", exec=2)
    g.add_actor("b", exec=3)
    g.add_channel("a", "b", prod=499_999, cons=500_001)
    g.add_channel("b", "a", prod=500_001, cons=499_999, delay=3_000_000)
    g.add_channel("a", "a", delay=1)
    g.add_channel("b", "b", delay=1)
    assert sum(repetition_vector(g).values()) == 10 ** 6
    result = throughput(g)
    assert result.period == 1499997 and result.throughput == Fraction(1, 1499997)
    assert result.critical_cycle == ("b",)


def test_errors():
    g = SDFGraph("e")
    g.add_actor("a")
    g.add_actor("b", exec=-1)
    g.add_actor("c", exec=2)
    g.add_actor("d", exec="x")
    g.add_channel("a", "b")
    with pytest.raises(SDFError, match=r"actors 'a', 'b' \(-1\), 'd' \(x\) need a finite "
                                       r"non-negative 'exec'"):
        throughput(g)
    with pytest.raises(DeadlockError):
        analyse(two_actor_cycle(1))
    with pytest.raises(DeadlockError):
        throughput(two_actor_cycle(1))
    bad = two_actor_cycle(4)
    bad.add_channel("a", "b", name="extra")          # 1:1 against 2:3
    with pytest.raises(InconsistentGraphError):
        throughput(bad)


def test_state_limit(monkeypatch):
    q = {"a": 3, "b": 2}
    durations = {"a": 1, "b": 2}
    graph = two_actor_cycle(6, self_loop=True)
    exact = analyse(graph)
    explored = simulate(graph, durations, q)
    monkeypatch.setattr(moc.limits, "MAX_STATES", 2)
    with pytest.raises(LimitError, match="raise it with --limit states=N") as info:
        simulate(graph, durations, q)
    assert info.value.limit == "states"
    # the firings' precedences answer without the state space (issue 42) ...
    assert "precedences" in exact.method and "state space" not in exact.method
    assert dict(exact.buffers) == dict(explored.buffers)
    # ... within the limit firings: past both limits the default still answers (issue
    # 33), with the buffers it cannot reach unexplored and the reason in its method
    monkeypatch.setattr(moc.limits, "MAX_FIRINGS", 15)
    limited = analyse(graph)
    assert (limited.period, limited.latency, limited.schedule) == \
        (exact.period, exact.latency, exact.schedule) and limited.period == 4
    assert "buffers not explored" in limited.method and "states" in limited.method
    assert dict(limited.buffers) == {"a->b": None, "b->a": None, "a->a": 1}


def hsdf_period(graph):
    """The maximum cycle mean of the HSDF expansion (0 when it has no cycle)."""
    h = hsdf_expansion(graph)
    found = max_cycle_ratio(h.actors, [(ch.src, ch.dst, h.actors[ch.src].attrs["exec"],
                                        ch.delay) for ch in h.channels.values()])
    return found.ratio or 0


@st.composite
def live_graphs(draw):
    """A consistent graph of 1-4 actors: a ring or a chain of actors with self-loops,
    rates from a drawn repetition vector (rates 1-4), some more channels, random
    tokens."""
    n = draw(st.integers(1, 4))
    q = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    g = SDFGraph("random")
    for i in range(n):
        g.add_actor(f"a{i}", exec=draw(st.integers(0, 5)))
    if draw(st.booleans()):                        # a ring, or a chain of self-loops
        pairs = [(i, (i + 1) % n) for i in range(n)] if n > 1 else []
    else:
        pairs = [(i, i + 1) for i in range(n - 1)] + [(i, i) for i in range(n)]
    pairs += draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                           max_size=3))
    for k, (i, j) in enumerate(pairs):
        prod, cons = q[j] // math.gcd(q[i], q[j]), q[i] // math.gcd(q[i], q[j])
        if max(prod, cons) <= 2:                   # rates stay within 1-4
            scale = draw(st.integers(1, 2))
            prod, cons = prod * scale, cons * scale
        delay = draw(st.integers(0, 2 * prod * q[i]))
        g.add_channel(f"a{i}", f"a{j}", f"e{k}", prod=prod, cons=cons, delay=delay)
    return g


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(live_graphs())
def test_kperiodic_equals_hsdf_and_state_space(g):
    q = repetition_vector(g)
    try:
        expected = hsdf_period(g)
    except SDFError:                               # a zero-token cycle: a deadlock
        with pytest.raises(DeadlockError):
            throughput(g)
        assume(False)
    result = analyse(g)
    assert result.period == expected
    assert result.throughput == (math.inf if expected == 0 else 1 / Fraction(expected))
    durations = execution_times(g)
    found = kperiodic_throughput(g, durations, q)
    with grown_from_one():              # small graphs are solved whole at once
        grown = kperiodic_throughput(g, durations, q)
    assert grown.period == found.period and grown.actor_periods == found.actor_periods
    pace = found.actor_periods
    bounded = all(pace[a] > 0 for a in g.actors)
    event(f"state space explored: {bounded}")
    if bounded:
        growing = {ch.name for ch in g.channels.values() if pace[ch.src] < pace[ch.dst]}
        event(f"channels growing without bound: {bool(growing)}")
        run = simulate(g, durations, q, growing)
        assert run.period == expected
        assert run.schedule == first_iteration(g, durations, q) == result.schedule
        assert run.latency == result.latency
        assert run.buffers == result.buffers
        assert {c for c, n in run.buffers.items() if n == math.inf} == growing
