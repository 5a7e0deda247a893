"""The circuit named for a cyclo-static deadlock does not depend on which proof ends
first (issue 42): where the K-periodic steps prove it, the symbolic execution goes on
(up to csdf_kperiodic.NAMING_CHECKS checks in all) and the circuit of waits where it
stalls is named, as where the execution proves it; so ``check`` and ``analyse`` name
the same circuit.  Checked against a circuit of waits found by brute force (networkx's
simple cycles of the waits once firing one at a time stops)."""
from __future__ import annotations

import contextlib

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from moc import SDFGraph, csdf_kperiodic, repetition_vector
from moc.errors import DeadlockError
from moc.phases import Phases, cyclo_static
from moc.timing import analyse, check_live

from test_csdf_liveness import _value, one_at_a_time, phased_graphs

DEFAULT_EFFORT = csdf_kperiodic.LEAST_CHECKS, csdf_kperiodic.CHECKS_PER_EDGE
#: the execution's default work beside the steps, one check or none at each K
EFFORTS = [DEFAULT_EFFORT, (1, 0), (0, 0)]


@contextlib.contextmanager
def _effort(least, per_edge, naming=None):
    saved = (csdf_kperiodic.LEAST_CHECKS, csdf_kperiodic.CHECKS_PER_EDGE,
             csdf_kperiodic.NAMING_CHECKS)
    csdf_kperiodic.LEAST_CHECKS, csdf_kperiodic.CHECKS_PER_EDGE = least, per_edge
    if naming is not None:
        csdf_kperiodic.NAMING_CHECKS = naming
    try:
        yield
    finally:
        (csdf_kperiodic.LEAST_CHECKS, csdf_kperiodic.CHECKS_PER_EDGE,
         csdf_kperiodic.NAMING_CHECKS) = saved


def _named(run):
    with pytest.raises(DeadlockError) as err:
        run()
    return err.value.actors, err.value.channels


def _ways(graph, q):
    """``check`` and ``analyse`` (both orders of an actor's firings) of ``graph``."""
    return {"check": lambda: check_live(graph, q),
            "analyse ends": lambda: analyse(graph, simulate=False),
            "analyse starts": lambda: analyse(graph, simulate=False, order="starts")}


def _self_loop_and_ring():
    """``a`` of two phases, ``b`` of one, no initial tokens: ``ab`` (``a`` writes 0, 1;
    ``b`` reads 1), ``ba`` (``b`` writes 1; ``a`` reads 0, 1) and ``a``'s self-loop
    ``aa`` (writes 0, 1; reads 0, 1)."""
    g = SDFGraph("loop_and_ring")
    g.add_actor("a", exec=Phases([1, 2]))
    g.add_actor("b", exec=0)
    g.add_channel("a", "b", "ab", prod=Phases([0, 1]), cons=1)
    g.add_channel("b", "a", "ba", prod=1, cons=Phases([0, 1]))
    g.add_channel("a", "a", "aa", prod=Phases([0, 1]), cons=Phases([0, 1]))
    return g.bind()


def test_the_circuit_of_waits_whichever_proof_ends_first():
    """By hand: a cycle of ``a``'s phases writes 1 on ``ab`` and ``b`` reads 1, so ``q
    = (a 2, b 1)``.  ``a``'s phase 0 reads nothing and writes nothing; its phase 1
    reads one token on ``ba`` (0) and on ``aa`` (0); ``b`` reads one on ``ab`` (0).
    Stalled with ``a`` at 1 of 2 and ``b`` at 0: ``a`` waits for itself (``aa``) and
    for ``b`` (``ba``), ``b`` for ``a`` (``ab``).  Circuits of waits: ``a`` alone (one
    wait) and ``a -> b`` (two): the lighter, ``a`` on ``aa``, is named.  Given no work
    beside them, the K-periodic steps prove the deadlock first, on the constraint
    graph's circuit through ``ab`` and ``ba``; before the execution went on to name it,
    that was the circuit named (``a``, ``b``), and it still is where the execution may
    not go on (``NAMING_CHECKS = 0``)."""
    g = _self_loop_and_ring()
    q = repetition_vector(g)
    assert q == {"a": 2, "b": 1}
    assert one_at_a_time(g, q)[0] == {"a": 1, "b": 0}
    for effort in EFFORTS:
        with _effort(*effort):
            for way, run in _ways(g, q).items():
                assert _named(run) == (("a",), ("aa",)), (effort, way)
    with _effort(0, 0, naming=0):
        for way, run in _ways(g, q).items():
            assert _named(run) == (("a", "b"), ("ab", "ba")), way


def _by_brute_force(graph, q):
    """The circuit of waits of the rule, from the state where firing one at a time
    stops: a channel is waited on where its consumer is short of ``q`` and it holds
    fewer tokens than the consumer's next phase reads, its producer short of ``q``
    too; of the simple cycles of those waits (networkx) the shortest, through the
    first actor declared on one of them.  Returns that actor, the length and the
    steps ``(producer, consumer) -> first channel declared``."""
    fired, tokens = one_at_a_time(graph, q)
    steps: dict = {}
    for ch in graph.channels.values():
        if fired[ch.dst] < q[ch.dst] and fired[ch.src] < q[ch.src] and \
                tokens[ch.name] < _value(ch.cons, fired[ch.dst]):
            steps.setdefault((ch.src, ch.dst), ch.name)
    cycles = list(nx.simple_cycles(nx.DiGraph(list(steps))))
    shortest = min(len(c) for c in cycles)
    order = list(graph.actors)
    first = min((a for c in cycles if len(c) == shortest for a in c), key=order.index)
    return first, shortest, steps


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(phased_graphs(), st.sampled_from(EFFORTS))
def test_check_and_analyse_name_the_rule_s_circuit_whatever_the_path(graph, effort):
    """``check`` and ``analyse`` (either order of firings) name the same circuit,
    whatever work the execution gets beside the K-periodic steps (its default, one
    check or none at each ``K``: then the steps prove most deadlocks first): a
    shortest circuit of waits, through the first actor declared on one, each actor
    waiting for the one before on the first channel declared between them."""
    if not cyclo_static(graph):
        return                      # SDF: every blocked actor is named (test_csdf_liveness)
    q = repetition_vector(graph)
    if one_at_a_time(graph, q)[0] == q:
        return
    first, shortest, steps = _by_brute_force(graph, q)
    with _effort(*effort):
        named = {way: _named(run) for way, run in _ways(graph, q).items()}
    actors, channels = named["check"]
    assert set(named.values()) == {(actors, channels)}
    assert actors[0] == first and len(actors) == shortest
    ring = list(zip(actors, actors[1:] + actors[:1]))
    assert all(step in steps for step in ring)
    assert set(channels) == {steps[step] for step in ring}
