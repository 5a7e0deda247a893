"""The storage-throughput trade-off of graphs with initialisation phases (issue 42):
the front of ``moc.tradeoff`` against an exhaustive search of distributions, every
capacity vector up to the front's largest size timed by the event-by-event execution
of :mod:`initialised_run` with those capacities (the buffers bound the transient
too)."""
from __future__ import annotations

import json
import os
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings

from dsl import read_sdf3
from initialised_run import run
from test_csdf_tradeoff import pareto_of_distributions
from test_initial_phases import graphs, ring
from mapping.cli.main import main
from moc.errors import DeadlockError, SDFError
from moc.initial_phases import InitialPhases
from moc.repetition import repetition_vector
from moc.tradeoff import capacity_bounds, tradeoff


def executed_throughput(graph, capacities):
    """Iterations per time unit of the execution with ``capacities``; 0 where it (or
    its initialisation) deadlocks."""
    outcome, period = run(graph, repetition_vector(graph), 200_000, capacities=capacities)
    assert outcome != "long"
    return 1 / period if outcome == "period" else 0


def exhaustive_front(graph, largest, fixed):
    """The Pareto points ``(size, throughput)`` of positive throughput among every
    distribution of total size at most ``largest``: each channel from the least
    capacity that holds its initial tokens and every rate of one of its phases
    (initialisation phases included), every whole number, none skipped; ``fixed``
    (self-loops, as the trade-off keeps them) not varied."""
    names = [n for n in graph.channels if n not in fixed]
    low = {}
    for n in names:
        ch = graph.channels[n]
        rates = [ch.delay]
        for value in (ch.prod, ch.cons):
            rates += list(value) if isinstance(value, tuple) else [value]
        for end, kind in ((ch.src, "prod"), (ch.dst, "cons")):
            init = graph.actors[end].initial_phases
            if init is not None:
                rates += list(init.rates(kind, n))
        low[n] = max(rates)
    return pareto_of_distributions(graph, largest, fixed, low, executed_throughput)


def _positive(front):
    return [(p.size, p.throughput) for p in front.points if p.throughput > 0]


def _loops(graph, front):
    return {n: front.points[-1].distributions[0][n] for n, ch in graph.channels.items()
            if ch.src == ch.dst}


def test_the_warm_ring_by_hand():
    """``a``'s initialisation phase (7) writes a token on ``ab``; ``ba`` holds one.
    Capacities 1 and 1: the phase claims ``ab``'s room, so ``a``'s periodic firing
    cannot start; at 7 ``b`` cannot either (``ba`` is full): throughput 0.  2 and 1:
    both ``a`` firings run 0-7, but ``b``'s second firing waits for room on ``ba``,
    which ``a`` frees only as its firing ends: one token goes round, period 5 (and
    likewise 1 and 2).  2 and 2: the unbounded period 5/2."""
    g = ring(0, 1, InitialPhases(1, {"exec": (7,)}, prod={"ab": (1,)})).bind()
    front = tradeoff(g)
    assert front.complete and front.max_throughput == Fraction(2, 5)
    assert [(p.size, p.throughput) for p in front.points] == \
        [(0, 0), (3, Fraction(1, 5)), (4, Fraction(2, 5))]
    assert [dict(d) for d in front.points[1].distributions] == \
        [{"ab": 2, "ba": 1}, {"ab": 1, "ba": 2}]
    assert front.points[-1].size == 4 and dict(front.points[-1].distributions[0]) == \
        {"ab": 2, "ba": 2}
    assert _positive(front) == exhaustive_front(g, 4, {})


def test_a_self_loop_written_by_an_initialisation_phase_is_kept_one_at_a_time():
    """``a``'s self-loop ``aa`` (1 token, 1 a firing) gets 2 more from its
    initialisation phase: one firing at a time needs room for 1 + 2 then 3 + 1."""
    g = ring(0, 1, InitialPhases(1, {"exec": (1,)}, prod={"ab": (1,), "aa": (2,)}))
    g.add_channel("a", "a", "aa", delay=1)
    g = g.bind()
    assert capacity_bounds(g)["aa"] == (4, 1)
    front = tradeoff(g)
    assert front.complete
    assert _positive(front) == exhaustive_front(g, front.points[-1].size, {"aa": 4})


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.filter_too_much])
@given(graphs())
def test_front_equals_the_exhaustive_search_on_random_graphs(g):
    g = g.bind()
    assume(sum(ch.src != ch.dst for ch in g.channels.values()) <= 3)
    try:
        front = tradeoff(g, max_explored=200)
    except DeadlockError:
        return
    assume(front.complete and front.points[-1].size <= 20)
    loops = _loops(g, front)
    assert _positive(front) == exhaustive_front(g, front.points[-1].size, loops)


def test_the_command_line_writes_a_point_back_and_refuses_the_state_space(capsys,
                                                                          tmp_path):
    """Point 2 of ``warm_ring`` written back (the initialisation phase claims room on
    ``ab`` through its back-edge) times at the point's throughput, 1/5."""
    g = ring(0, 1, InitialPhases(1, {"exec": (7,)}, prod={"ab": (1,)}))
    with pytest.raises(SDFError, match="the bounded state space does not model "
                       "initialisation phases"):
        tradeoff(g, method="state-space")
    path = Path(__file__).resolve().parents[1] / "examples" / "csdf" / "warm_ring.xml"
    out = tmp_path / "w.sdf"
    assert main(["analyse", "--tradeoff", str(path), "--point", "2", "-o", str(out)]) == 0
    capsys.readouterr()
    assert "channel ab_space : b -> a [cons = [1; 1], delay = 2" in out.read_text()
    assert main(["analyse", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["exact"]["throughput"] == "1/5"
    assert main(["analyse", "--tradeoff", str(path), "--timing", "state-space"]) == 2
    err = capsys.readouterr().err
    assert "the bounded state space does not model initialisation phases" in err
    assert "Traceback" not in err


KITER = os.environ.get("KITER_BENCHMARKS")


@pytest.mark.skipif(not KITER, reason="KITER_BENCHMARKS names no copy of Kiter's "
                                      "benchmarks/ folder")
@pytest.mark.parametrize("name, front", [
    ("init_sample.xml", [(27, Fraction(1, 25)), (28, Fraction(1, 24)),
                         (29, Fraction(1, 23))]),
    ("NoCMotivation/initUserCase.xml", [(25, Fraction(1, 8)), (26, Fraction(1, 7)),
                                        (27, Fraction(1, 6)), (30, Fraction(1, 5)),
                                        (31, Fraction(1, 4))]),
    ("NoCMotivation/SimpleInitUseCase.xml", [(11, Fraction(1, 6)), (13, Fraction(1, 5)),
                                             (18, Fraction(1, 3))]),
])
def test_kiter_files_equal_the_exhaustive_search(name, front):
    path = Path(KITER) / name
    if not path.exists():
        pytest.skip(f"{path} is absent")
    g = read_sdf3(path).bind()
    found = tradeoff(g)
    assert found.complete and _positive(found) == front
    assert exhaustive_front(g, front[-1][0], _loops(g, found)) == front
