"""The bound by which the state space of the self-timed execution is known to pass its
limit before it is explored (``moc.self_timed.least_instants``)."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from dataflow_graphs import cyclo_static_ring
from moc import SDFGraph, limits
from moc.errors import LimitError
from moc.phases import Phases
from moc.self_timed import least_instants, simulate
from moc.timing import _throughput, prepared


@st.composite
def looped_rings(draw):
    """A live cyclo-static ring with chords (times 0-3), self-loops on some actors
    (``r`` tokens given and taken in every phase, ``r`` to ``3r`` on it), and
    sometimes a second ring fed by the first: its channel between them grows where
    the first fires faster."""
    g = cyclo_static_ring(draw, st, lambda i, j, wi, wj: wi * wj + draw(
        st.integers(0, 2)) if j <= i else 0, min_time=draw(st.integers(0, 1)),
        max_time=3)
    if draw(st.booleans()):
        h = cyclo_static_ring(draw, st, lambda i, j, wi, wj: wi * wj if j <= i else 0,
                              min_time=1, max_time=3)
        for a in h.actors.values():
            g.add_actor(f"b{a.name}", exec=a.attrs["exec"])
        for ch in h.channels.values():
            g.add_channel(f"b{ch.src}", f"b{ch.dst}", f"b{ch.name}", prod=ch.prod,
                          cons=ch.cons, delay=ch.delay)
        # whole cycles on both ends: a2b moves tokens without making either wait long
        g.add_channel("a0", "ba0", "a2b",
                      prod=_spread(_phases(g, "a0")), cons=_spread(_phases(g, "ba0")))
    for name in list(g.actors):
        if draw(st.booleans()):
            r = draw(st.integers(1, 2))
            n = _phases(g, name)
            g.add_channel(name, name, f"self_{name}", prod=_spread(n, r),
                          cons=_spread(n, r), delay=draw(st.integers(r, 3 * r)))
    return g


def _phases(g, name):
    value = g.actors[name].attrs["exec"]
    return len(value) if isinstance(value, tuple) else 1


def _spread(n, r=1):
    return Phases([r] * n) if n > 1 else r


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(looped_rings())
def test_the_bound_never_passes_the_instants_explored(g):
    graph, durations, q, _ = prepared(g)
    pace = _throughput(graph, durations, q)[1]
    assume(all(p > 0 for p in pace.values()))       # as the buffers' exploration asks
    growing = {ch.name for ch in graph.channels.values() if pace[ch.src] < pace[ch.dst]}
    run = simulate(graph, durations, q, growing, record=False)
    assert least_instants(graph, durations, q, growing) <= run.states


def test_a_serialised_reference_is_refused_before_any_state(monkeypatch):
    """a fires 3 times an iteration and b twice, each one firing at a time (a
    self-loop of one token) of time 1: the reference b completes 4 firings at 4
    instants before its state can recur, so a limit of 3 states is passed before any
    is explored."""
    g = SDFGraph("pair")
    g.add_actor("a", exec=1)
    g.add_actor("b", exec=1)
    g.add_channel("a", "b", "ab", prod=2, cons=3)
    g.add_channel("b", "a", "ba", prod=3, cons=2, delay=6)
    for name in "ab":
        g.add_channel(name, name, f"{name}{name}", prod=1, cons=1, delay=1)
    graph, durations, q, _ = prepared(g)
    assert least_instants(graph, durations, q) == 2 * 2
    assert simulate(graph, durations, q, record=False).states >= 4
    monkeypatch.setattr(limits, "MAX_STATES", 3)
    monkeypatch.setattr("moc.self_timed.heapq", None)     # exploring would fail
    with pytest.raises(LimitError, match="has at least 4 states, more than the limit "
                       "states = 3; raise it"):
        simulate(graph, durations, q, record=False)
