"""Liveness of cyclo-static graphs without expanding their firings (issue 42): the
K-periodic schedules prove a graph live, the symbolic execution of one iteration
(moc.deadlock.SymbolicExecution, taken beside it a number of runs at a time) proves a
deadlock and names a circuit of waits where it stalls.  Checked against a firing by
firing execution written here and against a deadlock worked out by hand."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from dataflow_graphs import cyclo_static_ring
from moc import SDFGraph, repetition_vector
from moc import csdf_kperiodic
from moc.deadlock import SymbolicExecution, iteration_firings
from moc.errors import DeadlockError
from moc.phases import Phases, cyclo_static
from moc.timing import check_live, prepared, self_timed_period


def _value(v, k):
    return v[k % len(v)] if isinstance(v, tuple) else v


def one_at_a_time(graph, q):
    """Firing counts and tokens once no actor can fire: one firing at a time, the first
    actor declared that can (it reads its phase's tokens, then writes its phase's),
    each actor at most ``q`` times."""
    fired = dict.fromkeys(graph.actors, 0)
    tokens = {name: ch.delay for name, ch in graph.channels.items()}
    channels = list(graph.channels.values())
    inputs = {a: [ch for ch in channels if ch.dst == a] for a in graph.actors}
    outputs = {a: [ch for ch in channels if ch.src == a] for a in graph.actors}
    while True:
        for a in graph.actors:
            k = fired[a]
            if k < q[a] and all(tokens[ch.name] >= _value(ch.cons, k) for ch in inputs[a]):
                for ch in inputs[a]:
                    tokens[ch.name] -= _value(ch.cons, k)
                for ch in outputs[a]:
                    tokens[ch.name] += _value(ch.prod, k)
                fired[a] += 1
                break
        else:
            return fired, tokens


DEFAULT_EFFORT = csdf_kperiodic.LEAST_CHECKS, csdf_kperiodic.CHECKS_PER_EDGE


@st.composite
def phased_graphs(draw):
    """A ring of 2-4 actors of 1-3 phases plus chords (tests/dataflow_graphs.py), some
    of its channels without the tokens an iteration needs, and maybe an actor
    downstream of it and one upstream (components apart from the ring's)."""
    g = cyclo_static_ring(draw, st, lambda i, j, wi, wj: draw(st.integers(0, wi * wj)))
    if draw(st.booleans()):
        g.add_actor("sink", exec=1)
        g.add_channel("a0", "sink", "to_sink", prod=g.channels["c0"].prod,
                      cons=g.channels["c0"].cons)
    if draw(st.booleans()):
        g.add_actor("source", exec=1)
        g.add_channel("source", "a1", "from_source", prod=g.channels["c0"].prod,
                      cons=g.channels["c0"].cons, delay=draw(st.integers(0, 1)))
    return g.bind()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(phased_graphs(), st.sampled_from([DEFAULT_EFFORT, (1, 0), (0, 0)]))
def test_liveness_equals_firing_one_at_a_time(graph, effort):
    """``check_live`` and the throughput's K-periodic schedules deadlock exactly where
    firing one at a time stops short of an iteration, whichever of the two proofs ends
    first (the symbolic execution given its default work, or one check or none at each
    ``K`` without a schedule: a round at a time).  Where the execution decides, a
    cyclo-static deadlock names a circuit: each actor named waits on one channel named,
    from the actor before it, whose tokens are below what its next firing reads once no
    actor can fire; an SDF one (every actor of one phase) names every actor short of
    ``q`` and every channel they starve on."""
    q = repetition_vector(graph)
    fired, tokens = one_at_a_time(graph, q)
    assert iteration_firings(graph, q) == fired
    stepped = SymbolicExecution(graph, q)
    for _ in range(10 ** 4):
        if stepped.advance(checks=1) is not None:
            break
    assert stepped.fired == fired
    saved = csdf_kperiodic.LEAST_CHECKS, csdf_kperiodic.CHECKS_PER_EDGE
    csdf_kperiodic.LEAST_CHECKS, csdf_kperiodic.CHECKS_PER_EDGE = effort
    try:
        if fired == q:
            check_live(graph, q)
            return
        with pytest.raises(DeadlockError) as err:
            check_live(graph, q)
        starving = [ch.name for ch in graph.channels.values() if fired[ch.dst] < q[ch.dst]
                    and tokens[ch.name] < _value(ch.cons, fired[ch.dst])]
        if not cyclo_static(graph):
            # SDF: every actor short of q and every channel it starves on
            assert err.value.actors == tuple(a for a in graph.actors if fired[a] < q[a])
            assert set(err.value.channels) == set(starving)
        elif effort == DEFAULT_EFFORT:
            # small graphs: the symbolic execution decides, at its circuit of waits
            named = err.value
            assert len(named.channels) == len(named.actors)
            actors = list(named.actors)
            for ch in (graph.channels[c] for c in named.channels):
                assert ch.src in actors and ch.dst in actors
                assert actors[(actors.index(ch.src) + 1) % len(actors)] == ch.dst
                assert ch.name in starving
            assert {graph.channels[c].dst for c in named.channels} == set(actors)
        _, durations, _, _ = prepared(graph)
        with pytest.raises(DeadlockError):
            self_timed_period(graph, durations, q)
    finally:
        csdf_kperiodic.LEAST_CHECKS, csdf_kperiodic.CHECKS_PER_EDGE = saved


def _stalls_in_its_third_phase(tokens=2):
    """``d`` feeds ``a``'s first phase; ``a`` (three phases) and ``b`` form a ring
    ``ab`` (``a`` writes 1, 0, 2; ``b`` reads 3) and ``ba`` (``b`` writes 3, ``a`` reads 1
    per phase; ``tokens`` initial tokens); ``c`` reads ``a``'s third phase."""
    g = SDFGraph("stall")
    for name in "dabc":
        g.add_actor(name, exec=1)
    g.add_channel("d", "a", "da", prod=1, cons=Phases([1, 0, 0]))
    g.add_channel("a", "b", "ab", prod=Phases([1, 0, 2]), cons=3)
    g.add_channel("b", "a", "ba", prod=3, cons=Phases([1, 1, 1]), delay=tokens)
    g.add_channel("a", "c", "ac", prod=Phases([0, 0, 1]), cons=1)
    return g.bind()


def test_a_ring_that_stalls_in_a_later_phase_names_its_channels():
    """By hand: a cycle of ``a``'s phases writes 3 on ``ab`` and ``b`` reads 3, so
    ``q = (d 1, a 3, b 1, c 1)``.  ``d`` fires once (``da`` 1).  ``a``'s phase 0 reads
    ``da`` 1 and ``ba`` 1 (``ba`` 2 -> 1) and writes ``ab`` 1; phase 1 reads ``ba`` 1
    (-> 0) and writes nothing.  Phase 2 needs one token on ``ba`` (0); ``b`` needs 3 on
    ``ab`` (1); ``c`` needs 1 on ``ac`` (0).  So ``a`` fired 2 of 3 times, ``b`` and
    ``c`` none: ``a`` and ``b`` wait on each other through ``ab`` and ``ba``; ``c``
    waits on ``a`` but lies on no circuit, and ``da`` (0 left) is not read again until
    the next cycle of ``a``."""
    g = _stalls_in_its_third_phase()
    q = repetition_vector(g)
    assert q == {"d": 1, "a": 3, "b": 1, "c": 1}
    assert iteration_firings(g, q) == {"d": 1, "a": 2, "b": 0, "c": 0}
    message = ("deadlock: actors 'a', 'b' cannot complete one iteration "
               "(not enough initial tokens on ab, ba)")
    with pytest.raises(DeadlockError) as err:
        check_live(g, q)
    assert str(err.value).startswith(message)
    assert err.value.actors == ("a", "b") and err.value.channels == ("ab", "ba")
    _, durations, _, _ = prepared(g)
    with pytest.raises(DeadlockError) as timed:            # analyse: the same circuit
        self_timed_period(g, durations, q)
    assert str(timed.value) == str(err.value)


def test_one_token_more_on_the_ring_makes_it_live():
    """With three tokens on ``ba`` ``a`` completes its cycle (writing 3 on ``ab``), then
    ``b`` fires and ``c`` reads ``a``'s third phase."""
    g = _stalls_in_its_third_phase(tokens=3)
    q = repetition_vector(g)
    assert iteration_firings(g, q) == q
    check_live(g, q)
