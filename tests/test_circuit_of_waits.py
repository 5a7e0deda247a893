"""One rule picks a circuit of waits (``moc.deadlock.circuit_of_waits``): the cyclo-static
deadlock message names it, and the buffer trade-off grows the channels whose space is
waited for on it at a deadlocked distribution.  Hand-worked graphs with two circuits of
waits each."""
from __future__ import annotations

import pytest

from moc import SDFGraph, repetition_vector
from moc.capacities import bounded_graph
from moc.deadlock import circuit_of_waits, iteration_firings
from moc.errors import DeadlockError
from moc.phases import Phases
from moc.timing import check_live, prepared, self_timed_period
from moc.tradeoff import _BoundedExecution, _kperiodic


def test_the_lightest_circuit_then_the_first_actor_declared_on_one():
    """``a`` waits for ``c`` and ``c`` for ``a`` (one circuit of two waits), ``b`` for
    itself (one of one wait); ``d`` waits for ``e``, which does not wait."""
    waits = {"a": [("c", "ca")], "b": [("b", "bb")], "c": [("a", "ac")],
             "d": [("e", "ed")]}
    assert circuit_of_waits(waits) == [("b", "bb")]
    # weighed by what the caller says: the self-loop's wait is now the heavier
    heavy = {"bb": 3, "ca": 1, "ac": 1}
    assert circuit_of_waits(waits, heavy.get) == [("a", "ac"), ("c", "ca")]
    # two circuits of equal weight: the one through the first actor declared
    assert circuit_of_waits({"x": [("y", 1)], "y": [("x", 2)], "u": [("v", 3)],
                             "v": [("u", 4)]}) == [("x", 2), ("y", 1)]
    assert circuit_of_waits({"d": [("e", "ed")], "e": []}) is None


def _three_and_two():
    """Two rings without tokens that share ``c``: ``a -> b -> c -> a`` and ``c -> d ->
    c``; ``a`` has two phases (one token a phase on ``ab`` and ``ca``), so the graph
    is cyclo-static and its deadlock is named by the symbolic execution."""
    g = SDFGraph("rings")
    for name in "abcd":
        g.add_actor(name, exec=Phases([1, 1]) if name == "a" else 1)
    g.add_channel("a", "b", "ab", prod=Phases([1, 1]), cons=1)
    g.add_channel("b", "c", "bc", prod=1, cons=1)
    g.add_channel("c", "a", "ca", prod=1, cons=Phases([1, 1]))
    g.add_channel("c", "d", "cd", prod=1, cons=1)
    g.add_channel("d", "c", "dc", prod=1, cons=1)
    return g.bind()


def test_a_cyclo_static_deadlock_names_the_shorter_of_two_circuits():
    """By hand: ``q`` is 2 for each actor (``a``'s cycle of two phases writes 2 on
    ``ab``).  No channel holds a token, so no actor fires: ``a`` waits on ``ca`` (for
    ``c``), ``b`` on ``ab`` (for ``a``), ``c`` on ``bc`` and ``dc`` (for ``b`` and
    ``d``), ``d`` on ``cd`` (for ``c``).  The waits hold the circuit ``a, b, c`` through
    the first actor declared and the shorter ``c, d``: the shorter is named, from ``c``,
    in the order tokens flow (``c`` writes ``cd``, ``d`` writes ``dc``), at ``cd``."""
    g = _three_and_two()
    q = repetition_vector(g)
    assert q == dict.fromkeys("abcd", 2)
    assert iteration_firings(g, q) == dict.fromkeys("abcd", 0)
    with pytest.raises(DeadlockError) as err:
        check_live(g, q)
    assert str(err.value).startswith("deadlock: actors 'c', 'd' cannot complete one "
                                     "iteration (not enough initial tokens on cd, dc)")
    assert err.value.actors == ("c", "d") and err.value.channels == ("cd", "dc")
    _, durations, _, _ = prepared(g)
    with pytest.raises(DeadlockError) as timed:
        self_timed_period(g, durations, q)
    assert str(timed.value) == str(err.value)


def _ring_and_pipe():
    """A ring ``a -> b -> a`` (``ab``, ``ba``: one token each) feeding, through ``bc``
    (``b`` writes 3, ``c`` reads 1, three tokens), a pipe ``c -> d`` (``c`` writes 2,
    ``d`` reads 3).  Every firing takes one time unit."""
    g = SDFGraph("ring_and_pipe")
    for name in "abcd":
        g.add_actor(name, exec=1)
    g.add_channel("a", "b", "ab", delay=1)
    g.add_channel("b", "a", "ba", delay=1)
    g.add_channel("b", "c", "bc", prod=3, cons=1, delay=3)
    g.add_channel("c", "d", "cd", prod=2, cons=3)
    return g.bind()


def test_a_deadlocked_distribution_depends_on_the_circuit_with_fewer_space_waits():
    """By hand, with capacities ``ab`` 1, ``ba`` 1, ``bc`` 3, ``cd`` 3 (``q``: a 1, b 1,
    c 3, d 2): ``ab`` and ``ba`` are full, so ``a`` waits for the space of ``ab`` (for
    ``b``) and ``b`` for that of ``ba`` (for ``a``): a circuit of two space waits,
    through the first actor declared.  ``c`` fires once (``bc`` 2 tokens, so 1 space:
    ``b``, which writes 3, waits for it too; ``cd`` 2 tokens, 1 space); then ``c``
    waits for the space of ``cd`` (2 a firing, for ``d``) and ``d`` for its tokens (3,
    for ``c``): a circuit of one space wait.  Whatever the other capacities, ``c`` and
    ``d`` stay stuck until ``cd`` grows, so the deadlock depends on ``cd`` alone; both
    ways of timing a distribution say so."""
    g = _ring_and_pipe()
    graph, durations, q, _ = prepared(g)
    assert q == {"a": 1, "b": 1, "c": 3, "d": 2}
    caps = {"ab": 1, "ba": 1, "bc": 3, "cd": 3}
    bounded = bounded_graph(graph, caps)
    assert iteration_firings(bounded, q) == {"a": 0, "b": 0, "c": 1, "d": 0}
    assert _kperiodic(bounded, durations, q) == (0, {"cd"})
    assert _BoundedExecution(graph, durations, q).run(
        [caps[n] for n in graph.channels]) == (0, {"cd"})
    # with cd at its least capacity alone (p + c - gcd = 4) the pipe runs: the ring's
    # circuit is the one left, both of its channels
    bigger = bounded_graph(graph, {**caps, "cd": 4})
    assert _kperiodic(bigger, durations, q) == (0, {"ab", "ba"})
    assert _BoundedExecution(graph, durations, q).run([1, 1, 3, 4]) == (0, {"ab", "ba"})
