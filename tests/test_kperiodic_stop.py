"""When the K-periodic iteration stops (Bodin, Munier-Kordon & de Dinechin, DAC 2016):
once every ``K_t`` on the critical circuit is a multiple of ``q_t / gcd of q on it``,
the circuit taken alone is fully expanded and its ratio is the optimum, however far
``K`` is from ``q`` (issue 42: Kiter's generator's ``k0179``, refused before)."""
import os
from fractions import Fraction
from pathlib import Path

import pytest

import moc.csdf_kperiodic as csdf_kperiodic
import moc.kperiodic as kperiodic
from moc import SDFGraph, hsdf_expansion
from moc.csdf_kperiodic import phased_kperiodic_throughput
from moc.cycle_ratio import max_cycle_ratio
from moc.errors import LimitError
from moc.kperiodic import covers, kperiodic_throughput
from moc.repetition import repetition_vector
from moc.timing import execution_times


def three_rings(n=1):
    """a0 <-> a2 single-rate (2 + 2 tokens, d = 1 + 5), a1 <-> a2 at rates 5:1 and 1:5
    (7 and 3 tokens), a0 -> a1 (1:5, 3 tokens); for ``n > 1`` an actor ``z`` of no
    time on a ring with ``a1`` at rates n:1 and 1:n (n tokens) multiplies q by n:
    q = (a0: 5n, a1: n, a2: 5n, z: 1)."""
    g = SDFGraph("rings")
    for a, d in (("a0", 1), ("a1", 4), ("a2", 5)):
        g.add_actor(a, exec=d)
    for s, t, p, c, m in (("a0", "a1", 1, 5, 3), ("a1", "a2", 5, 1, 7), ("a2", "a0", 1, 1, 2),
                          ("a2", "a1", 1, 5, 3), ("a0", "a2", 1, 1, 2)):
        g.add_channel(s, t, f"{s}{t}{m}", prod=p, cons=c, delay=m)
    if n > 1:
        g.add_actor("z", exec=0)
        g.add_channel("z", "a1", prod=n, cons=1)
        g.add_channel("a1", "z", prod=1, cons=n, delay=n)
    return g


def hsdf_period(graph):
    h = hsdf_expansion(graph)
    return max_cycle_ratio(h.actors, [(ch.src, ch.dst, h.actors[ch.src].attrs["exec"],
                                       ch.delay) for ch in h.channels.values()]).ratio


def test_rule_stops_below_q_at_the_optimum():
    # K = 1: the critical circuit is a1 <-> a2 (q 1, 5, gcd 1): K(a2) grows to 5.
    # Then the critical circuit is a0 <-> a2 (q 5, 5, gcd 5: each fires once per turn
    # of the circuit alone); K(a0) = 1 and K(a2) = 5 are multiples of 1, so the rule
    # stops with K(a0) = 1 < q(a0) = 5.  Its ratio is the cycle a0 -> a2 -> a0: 1 + 5
    # time for 2 + 2 tokens of one firing each, 6/4 per firing, 5 firings an
    # iteration: 15/2, the HSDF expansion's maximum cycle mean.
    g = three_rings()
    q = repetition_vector(g)
    assert dict(q) == {"a0": 5, "a1": 1, "a2": 5}
    found = kperiodic_throughput(g, execution_times(g), q)
    assert found.period == Fraction(15, 2) == hsdf_period(g) and found.optimal
    assert dict(found.periodicity) == {"a0": 1, "a1": 1, "a2": 5}
    assert set(found.critical_cycle) == {"a0", "a2"}
    assert covers(found.periodicity, ["a0", "a2"], q)
    assert not covers({"a0": 1, "a1": 1, "a2": 1}, ["a1", "a2"], q)


def test_rule_keeps_k_small_where_q_is_large():
    # The same circuits with q multiplied by n: the period is 15/2 per n firings of a0's
    # five, 15n/2; K stays (1, 1, 5, 1) where K = q would have 2·5·10^6 nodes.
    for n in (2, 3):
        g = three_rings(n)
        q = repetition_vector(g)
        assert kperiodic_throughput(g, execution_times(g), q).period == \
            Fraction(15 * n, 2) == hsdf_period(g)
    g = three_rings(10 ** 6)
    q = repetition_vector(g)
    assert q["a0"] == 5 * 10 ** 6
    found = kperiodic_throughput(g, execution_times(g), q)
    assert found.period == 7_500_000 and found.optimal
    assert dict(found.periodicity) == {"a0": 1, "a1": 1, "a2": 5, "z": 1}


def test_without_the_rule_the_same_graph_passes_the_limit(monkeypatch):
    # the realizable-chain proof alone fails on a0 <-> a2 and K jumps to q
    monkeypatch.setattr(kperiodic, "covers", lambda *args: False)
    g = three_rings()
    q = repetition_vector(g)
    assert dict(kperiodic_throughput(g, execution_times(g), q).periodicity)["a0"] == 5
    g = three_rings(10 ** 6)
    with pytest.raises(LimitError):
        kperiodic_throughput(g, execution_times(g), repetition_vector(g))


@pytest.mark.parametrize("order", ["ends", "starts"])
def test_cyclo_static_iteration_stops_at_the_rule_too(order, monkeypatch):
    # one phase per actor, through moc.csdf_kperiodic: whole iterations would be past
    # the limit, so without the rule only a bound (not optimal) comes back; with it
    # the same K as the SDF iteration, proven (both orders agree here: an actor's
    # firings all take the same time, so they end in the order they start)
    g = three_rings(10 ** 6)
    q = repetition_vector(g)
    found = phased_kperiodic_throughput(g, execution_times(g), q, order)
    assert found.period == 7_500_000 and found.optimal
    assert dict(found.periodicity) == {"a0": 1, "a1": 1, "a2": 5, "z": 1}
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
