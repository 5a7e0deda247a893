"""The self-timed state space of a graph whose parts run at different paces (issue 42:
Kiter's generator joins graphs by chains, and on ``k0038-joined-loops`` the fast parts
were explored for as long as the slowest took to repeat).  A group of actors whose
state has recurred is no longer explored; only its completions on growing channels
to groups still explored are replayed, a period later each time.  Checked against the
event-by-event execution of :mod:`initialised_run` (no code shared with ``moc``) run
over a long horizon: the buffer maxima of the channels that stay bounded, the firings
of the first iteration and the latency; a channel the analysis calls unbounded grows
there."""
from __future__ import annotations

import math

from hypothesis import HealthCheck, assume, given, settings, strategies as st

from dataflow_graphs import cyclo_static_ring
from initialised_run import run
from moc import SDFGraph
from moc.initial_phases import has_initial_phases
from moc.phases import InitialPhases, Phases
from moc.repetition import repetition_vector
from moc.self_timed import simulate
from moc.timing import _throughput, analyse, prepared

#: instants of the execution; twice as many show which maxima have settled
HORIZON = 1500


def _phases(value):
    return len(value) if isinstance(value, tuple) else 1


def _spread(n, r):
    return Phases([r] * n) if n > 1 else r


@st.composite
def joined_rings(draw):
    """2-3 live cyclo-static rings (times 1-3), each after the first fed by an earlier
    one through a channel of 1-2 tokens a phase on both ends (a chain closes no cycle:
    consistent), so that a ring runs at its own pace (the channel grows) or at its
    feeder's; self-loops of ``r`` to ``3r`` tokens on some actors (their firings
    overlap), and on some actors an initialisation phase that only writes (live)."""
    actors, channels = {}, []
    rings = draw(st.integers(2, 3))
    for r in range(rings):
        h = cyclo_static_ring(draw, st, lambda i, j, wi, wj: wi * wj + draw(
            st.integers(0, 2)) if j <= i else 0, min_time=1, max_time=3, actors=3,
            chords=1)
        for a in h.actors.values():
            actors[f"r{r}{a.name}"] = a.attrs["exec"]
        for ch in h.channels.values():
            channels.append((f"r{r}{ch.name}", f"r{r}{ch.src}", f"r{r}{ch.dst}", ch.prod,
                             ch.cons, ch.delay))
        if r:
            src = f"r{draw(st.integers(0, r - 1))}a0"
            dst = f"r{r}a{draw(st.integers(0, len(h.actors) - 1))}"
            channels.append((f"j{r}", src, dst,
                             _spread(_phases(actors[src]), draw(st.integers(1, 2))),
                             _spread(_phases(actors[dst]), draw(st.integers(1, 2))), 0))
    for a in actors:
        if draw(st.integers(0, 3)) == 0:
            r = draw(st.integers(1, 2))
            n = _phases(actors[a])
            channels.append((f"s_{a}", a, a, _spread(n, r), _spread(n, r),
                             draw(st.integers(r, 3 * r))))
    g = SDFGraph("joined")
    for a, times in actors.items():
        init = None
        if draw(st.integers(0, 3)) == 0:
            init = InitialPhases(1, {"exec": (draw(st.integers(0, 3)),)},
                                 prod={c: (draw(st.integers(0, 2)),)
                                       for c, s, *_ in channels if s == a})
        g.add_actor(a, exec=times, initial_phases=init)
    for name, src, dst, prod, cons, delay in channels:
        g.add_channel(src, dst, name, prod=prod, cons=cons, delay=delay)
    return g


def executed(g, events):
    """The execution's first-iteration firings and maxima over ``events`` instants."""
    seen = {}
    outcome, _ = run(g, repetition_vector(g.bind()), events, seen)
    assert outcome in ("period", "long")
    return seen


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(joined_rings())
def test_groups_that_repeat_first_are_replayed_not_explored(g):
    once, twice = executed(g, HORIZON), executed(g, 2 * HORIZON)
    if has_initial_phases(g):
        found = analyse(g)          # the state space, always, with initialisation phases
        assume(found.buffers is not None)
        schedule, buffers, latency = found.schedule, found.buffers, found.latency
    else:
        graph, durations, q, _ = prepared(g)
        pace = _throughput(graph, durations, q)[1]
        growing = {ch.name for ch in graph.channels.values()
                   if pace[ch.src] < pace[ch.dst]}
        explored = simulate(graph, durations, q, growing)
        schedule, buffers, latency = explored.schedule, explored.buffers, \
            explored.latency
        # the firings' precedences (moc.occupancy), another method, agree
        assert dict(analyse(g).buffers) == dict(buffers)
    firings = {a: [(f.start, f.end) for f in fs] for a, fs in schedule.items()}
    assert firings == once["firings"] == twice["firings"]
    assert latency == max(e for fs in firings.values() for _, e in fs)
    for ch, most in buffers.items():
        if most == math.inf:
            assert twice["buffers"][ch] > once["buffers"][ch]
        else:
            assert most == once["buffers"][ch] == twice["buffers"][ch]


def test_a_fast_ring_feeding_a_slow_one_stays_exact():
    """``a`` (time 1, one firing at a time) writes a token a firing to ``b`` (time 3,
    one at a time): ``ab`` grows by 2 tokens every 3 time units; ``b`` writes one to
    ``c`` (time 1, two tokens on ``cc``), which reads 2 at a time.  ``a``'s group
    stores its state as ``a`` completes its 2 firings of an iteration, at 2 and again
    at 4: it is frozen there, and its completions at 5, 6, ... are replayed to ``ab``
    while ``b`` and ``c`` repeat only at 14 (their state at 8).  By hand: ``b`` fires at 1, 4, 7, ...; ``bc``
    holds 1 at 4, 2 at 7 (``c`` fires 7-8 reading both): at most 2; ``c`` never runs
    two firings at once, so ``cc`` holds its 2 tokens at most."""
    g = SDFGraph("chain")
    for name, time in (("a", 1), ("b", 3), ("c", 1)):
        g.add_actor(name, exec=time)
        g.add_channel(name, name, f"{name}{name}", delay=2 if name == "c" else 1)
    g.add_channel("a", "b", "ab")
    g.add_channel("b", "c", "bc", cons=2)
    graph, durations, q, _ = prepared(g)
    pace = _throughput(graph, durations, q)[1]
    assert pace == {"a": 2, "b": 6, "c": 6}
    explored = simulate(graph, durations, q, {"ab"})
    assert dict(explored.buffers) == {"aa": 1, "bb": 1, "cc": 2, "ab": math.inf,
                                      "bc": 2}
    assert [(f.start, f.end) for f in explored.schedule["b"]] == [(1, 4), (4, 7)]
    assert [(f.start, f.end) for f in explored.schedule["c"]] == [(7, 8)]
    assert explored.latency == 8
