"""When the K-periodic iteration stops (Bodin, Munier-Kordon & de Dinechin, DAC 2016):
once every ``K_t`` on the critical circuit is a multiple of ``q_t / gcd of q on it``,
the circuit taken alone is fully expanded and its ratio is the optimum, however far
``K`` is from ``q`` (issue 42: Kiter's generator's ``k0179``, refused before)."""
import os
from contextlib import contextmanager
from fractions import Fraction
from pathlib import Path

import pytest

import moc.csdf_kperiodic as csdf_kperiodic
import moc.kperiodic as kperiodic
from moc import SDFGraph, hsdf_expansion, limits
from moc.csdf_kperiodic import phased_kperiodic_throughput
from moc.cycle_ratio import max_cycle_ratio
from moc.errors import LimitError
from moc.kperiodic import covers, kperiodic_throughput
from moc.repetition import repetition_vector
from moc.timing import execution_times


def rings(name, times, channels, n):
    """Actors of ``times`` (name, exec) joined by ``channels`` (src, dst, prod, cons,
    tokens); for ``n > 1`` an actor ``z`` of no time on a ring with ``a1`` at rates
    n:1 and 1:n (n tokens), which multiplies q by n."""
    g = SDFGraph(name)
    for a, d in times:
        g.add_actor(a, exec=d)
    for s, t, p, c, m in channels:
        g.add_channel(s, t, f"{s}{t}{m}", prod=p, cons=c, delay=m)
    if n > 1:
        g.add_actor("z", exec=0)
        g.add_channel("z", "a1", prod=n, cons=1)
        g.add_channel("a1", "z", prod=1, cons=n, delay=n)
    return g


def three_rings(n=1):
    """a0 <-> a2 single-rate (2 + 2 tokens, d = 1 + 5), a1 <-> a2 at rates 5:1 and 1:5
    (7 and 3 tokens), a0 -> a1 (1:5, 3 tokens); ``z`` for ``n > 1`` (:func:`rings`):
    q = (a0: 5n, a1: n, a2: 5n, z: 1)."""
    return rings("rings", (("a0", 1), ("a1", 4), ("a2", 5)),
                 (("a0", "a1", 1, 5, 3), ("a1", "a2", 5, 1, 7), ("a2", "a0", 1, 1, 2),
                  ("a2", "a1", 1, 5, 3), ("a0", "a2", 1, 1, 2)), n)


def late_rings(n=1):
    """The rings of :func:`three_rings` with other times and tokens, ``a2`` declared
    first: a2 <-> a0 single-rate (3 + 1 tokens, d = 2 + 6), a1 <-> a2 at rates 5:1 and
    1:5 (1 and 5 tokens), a0 -> a1 (1:5, 5 tokens); ``z`` as there:
    q = (a2: 5n, a1: n, a0: 5n, z: 1)."""
    return rings("late", (("a2", 2), ("a1", 2), ("a0", 6)),
                 (("a0", "a1", 1, 5, 5), ("a1", "a2", 5, 1, 1), ("a2", "a0", 1, 1, 3),
                  ("a2", "a1", 1, 5, 5), ("a0", "a2", 1, 1, 1)), n)


@contextmanager
def grown_from_one():
    """``K`` grown on critical circuits from 1, step by step, never the whole iteration
    at once (:func:`moc.kperiodic.whole_at_once`, which takes small graphs whole)."""
    saved = kperiodic.SMALL_WHOLE, kperiodic.STEPS_BEFORE_WHOLE, kperiodic.WHOLE_FACTOR
    kperiodic.SMALL_WHOLE, kperiodic.STEPS_BEFORE_WHOLE, kperiodic.WHOLE_FACTOR = 0, 10 ** 9, 0
    try:
        yield
    finally:
        kperiodic.SMALL_WHOLE, kperiodic.STEPS_BEFORE_WHOLE, kperiodic.WHOLE_FACTOR = saved


def hsdf_period(graph):
    h = hsdf_expansion(graph)
    return max_cycle_ratio(h.actors, [(ch.src, ch.dst, h.actors[ch.src].attrs["exec"],
                                       ch.delay) for ch in h.channels.values()]).ratio


def test_rule_stops_at_once_on_the_circuit_the_rule_picks():
    # K = 1: a1 <-> a2 and a0 <-> a2 are equally critical (15/2 both); the circuit
    # printed and grown on is the one through the least node (moc.critical_cycle), a0's
    # firing class 1 (a0 declared first): a0 -> a2 -> a0 (q 5, 5, gcd 5: each fires
    # once per turn of the circuit alone), so K = 1 is a multiple of q/gcd = 1 and the
    # rule stops there, K(a0) = 1 < q(a0) = 5.  Its ratio: 1 + 5 time for 2 + 2 tokens
    # of one firing each, 6/4 per firing, 5 firings an iteration: 15/2, the HSDF
    # expansion's maximum cycle mean.
    g = three_rings()
    q = repetition_vector(g)
    assert dict(q) == {"a0": 5, "a1": 1, "a2": 5}
    with grown_from_one():
        found = kperiodic_throughput(g, execution_times(g), q)
    assert found.period == Fraction(15, 2) == hsdf_period(g) and found.optimal
    assert dict(found.periodicity) == {"a0": 1, "a1": 1, "a2": 1}
    assert found.critical_cycle == ("a0", "a2")
    assert covers(found.periodicity, ["a0", "a2"], q)
    assert not covers({"a0": 1, "a1": 1, "a2": 1}, ["a1", "a2"], q)


def test_rule_stops_below_q_at_the_optimum():
    # K = 1: the circuit through the least node (a2's class 1, a2 declared first) is
    # a2 <-> a1 (q 5, 1, gcd 1): K(a2) grows to 5.  Then the critical circuit is
    # a2 <-> a0 (q 5, 5, gcd 5); K(a2) = 5 and K(a0) = 1 are multiples of 1, so the rule
    # stops with K(a0) = 1 < q(a0) = 5.  Its ratio: 2 + 6 time for 3 + 1 tokens of one
    # firing each, 2 per firing, 5 firings an iteration: 10, the HSDF expansion's.
    g = late_rings()
    q = repetition_vector(g)
    assert dict(q) == {"a2": 5, "a1": 1, "a0": 5}
    with grown_from_one():
        found = kperiodic_throughput(g, execution_times(g), q)
    assert found.period == 10 == hsdf_period(g) and found.optimal
    assert dict(found.periodicity) == {"a2": 5, "a1": 1, "a0": 1}
    assert found.critical_cycle == ("a2", "a0")
    assert covers(found.periodicity, ["a0", "a2"], q)
    assert not covers({"a0": 1, "a1": 1, "a2": 1}, ["a1", "a2"], q)


def test_a_small_component_is_solved_whole_at_once():
    # the rings of the two tests above, each within SMALL_WHOLE nodes and edges whole:
    # one exact solve of K = q, the same period
    for g, period in ((three_rings(), Fraction(15, 2)), (late_rings(), 10)):
        q = repetition_vector(g)
        found = kperiodic_throughput(g, execution_times(g), q)
        assert found.period == period and found.optimal and found.periodicity == q


def test_the_whole_iteration_is_taken_where_small_or_late_within_the_limit():
    from moc import limits
    from moc.kperiodic import SMALL_WHOLE, STEPS_BEFORE_WHOLE, WHOLE_FACTOR, whole_at_once
    assert whole_at_once(1, 10, SMALL_WHOLE) and not whole_at_once(1, 10, SMALL_WHOLE + 1)
    size = 10 ** 5
    assert whole_at_once(1, size, WHOLE_FACTOR * size)
    assert not whole_at_once(1, size, WHOLE_FACTOR * size + 1)
    late = limits.MAX_FIRINGS
    assert whole_at_once(STEPS_BEFORE_WHOLE + 1, 10, late)
    assert not whole_at_once(STEPS_BEFORE_WHOLE, 10, late)
    assert not whole_at_once(10 ** 9, late, late + 1)


def test_rule_keeps_k_small_where_q_is_large():
    # The same circuits with q multiplied by n: the period is 10 per n firings of a0's
    # five, 10n; K stays (5, 1, 1, 1) where K = q would have 2·5·10^6 nodes.
    for n in (2, 3):
        g = late_rings(n)
        q = repetition_vector(g)
        assert kperiodic_throughput(g, execution_times(g), q).period == \
            10 * n == hsdf_period(g)
    g = late_rings(10 ** 6)
    q = repetition_vector(g)
    assert q["a0"] == 5 * 10 ** 6
    found = kperiodic_throughput(g, execution_times(g), q)
    assert found.period == 10_000_000 and found.optimal
    assert dict(found.periodicity) == {"a2": 5, "a1": 1, "a0": 1, "z": 1}


def test_without_the_rule_the_same_graph_gives_a_bound(monkeypatch):
    # the realizable-chain proof alone fails on a2 <-> a0 and K jumps to q
    monkeypatch.setattr(kperiodic, "covers", lambda *args: False)
    g = late_rings()
    q = repetition_vector(g)
    assert dict(kperiodic_throughput(g, execution_times(g), q).periodicity)["a0"] == 5
    # K = q passes the limit: the least K-periodic period found comes back, the
    # optimum here (that of K = (5, 1, 1, 1)) but unproven, with no lower bound (no
    # actor has a self-loop), as the cyclo-static iteration gives it
    g = late_rings(10 ** 6)
    found = kperiodic_throughput(g, execution_times(g), repetition_vector(g))
    assert found.period == 10_000_000 and not found.optimal and found.floor == 0
    # beside a component of period 2·10^7, exact (K = its whole iteration), that bound
    # of 10^7 cannot be the graph's: the period is proven
    g.add_actor("x", exec=20_000_000)
    g.add_actor("y", exec=0)
    g.add_channel("x", "y", prod=1, cons=1)
    g.add_channel("y", "x", prod=1, cons=1, delay=1)
    found = kperiodic_throughput(g, execution_times(g), repetition_vector(g))
    assert found.period == 20_000_000 == found.floor and found.optimal
    assert found.critical_cycle == ("x", "y")
    # without a schedule found before the limit, the limit is the answer
    monkeypatch.setattr(limits, "MAX_FIRINGS", 10)
    with pytest.raises(LimitError):
        kperiodic_throughput(g, execution_times(g), repetition_vector(g))


@pytest.mark.parametrize("order", ["ends", "starts"])
def test_cyclo_static_iteration_stops_at_the_rule_too(order, monkeypatch):
    # one phase per actor, through moc.csdf_kperiodic: whole iterations would be past
    # the limit, so without the rule only a bound (not optimal) comes back; with it
    # the same K as the SDF iteration, proven (both orders agree here: an actor's
    # firings all take the same time, so they end in the order they start)
    g = late_rings(10 ** 6)
    q = repetition_vector(g)
    found = phased_kperiodic_throughput(g, execution_times(g), q, order)
    assert found.period == 10_000_000 and found.optimal
    assert dict(found.periodicity) == {"a2": 5, "a1": 1, "a0": 1, "z": 1}
    monkeypatch.setattr(csdf_kperiodic, "covers", lambda *args: False)
    assert not phased_kperiodic_throughput(g, execution_times(g), q, order).optimal


K0179 = os.environ.get("MAPEVAL_KITER_K0179")


@pytest.mark.skipif(not K0179 or not Path(K0179).exists(),
                    reason="MAPEVAL_KITER_K0179 names no copy of Kiter's generated k0179-c0")
def test_kiter_generated_k0179(capsys):
    """24 actors, 8.1e7 firings an iteration; Kiter: period 74952150, K sums to 284."""
    from mapping.cli.main import main
    assert main(["analyse", K0179, "--no-simulate"]) == 0
    assert "period          74952150" in capsys.readouterr().out
