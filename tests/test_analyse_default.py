"""The default ``analyse`` (issue 33): latency, buffers and the first iteration's schedule
without waiting for the state of the whole execution to recur.

Three references: the numbers the default gave before issue 33 wherever it answered
(``tests/data/analyse_before.json``, recorded by ``tests/oracle_before/record.py``); the
peak token counts of a long run computed from the precedences alone
(:func:`horizon_peaks`, independent of the state-space exploration); and, for the
throughput, SDF3 (``tests/test_sdf3_oracle.py``).
"""
from __future__ import annotations

import hashlib
import json
import math
from bisect import bisect_left, bisect_right
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings

import dsl
from dataflow_graphs import big_two_actor_cycle, ring
from moc.repetition import repetition_vector
from moc.self_timed import first_iteration
from moc.timing import analyse, execution_times
from test_moc_timing import live_graphs

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT / ".." / "shared" / "data" / "graphs"
BEFORE = json.loads((ROOT / "tests" / "data" / "analyse_before.json").read_text())
EXAMPLES = sorted((ROOT / "tests" / "data" / "sdf3_examples").glob("*.sdf"))


def _load(record):
    path = (SHARED if record["base"] == "shared" else ROOT) / record["file"]
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    return dsl.read_sdf3(path) if path.suffix == ".xml" else dsl.load_sdf(path)[0]


def horizon_peaks(graph, iterations):
    """Per channel, the most tokens it holds in the first ``iterations`` iterations of
    the self-timed execution, from the firing times that the precedences give
    (:func:`moc.self_timed.first_iteration` of ``iterations·q``): right after the
    firings that end at ``t`` produce, before those that start at ``t`` consume, at
    every ``t`` up to where the run of both ends is known.  Positive firing times."""
    graph = graph.bind()
    q = repetition_vector(graph)
    firings = first_iteration(graph, execution_times(graph),
                              {a: iterations * n for a, n in q.items()})
    peaks = {}
    for ch in graph.channels.values():
        ends = [f.end for f in firings[ch.src]]
        starts = [f.start for f in firings[ch.dst]]
        known = min(ends[-1], starts[-1])
        peaks[ch.name] = max([ch.delay] + [
            ch.delay + ch.prod * bisect_right(ends, t) - ch.cons * bisect_left(starts, t)
            for t in ends if t <= known])
    return peaks


def _agree_with_a_long_run(graph, iterations, doublings=3):
    """The buffers equal the peaks of a run long enough that doubling it changes no
    bounded peak (a transient may last longer than ``iterations``: a random graph of 4
    actors reached its peak of 32 tokens after 12 iterations, not before)."""
    buffers = analyse(graph).buffers
    bounded = [n for n, peak in buffers.items() if peak != math.inf]
    short, long = horizon_peaks(graph, iterations), horizon_peaks(graph, 2 * iterations)
    for _ in range(doublings):
        if all(short[n] == long[n] for n in bounded):
            break
        iterations *= 2
        short, long = long, horizon_peaks(graph, 2 * iterations)
    for name, peak in buffers.items():
        if peak == math.inf:          # a faster producer: the long run holds more
            assert long[name] > short[name], name
        else:
            assert peak == short[name] == long[name], name


# the testbench graphs the default could not answer before issue 33 are among these
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_buffers_are_the_peaks_of_a_long_run_of_precedences(path):
    (graph,) = dsl.load_sdf(path)
    _agree_with_a_long_run(graph, 4)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(live_graphs())
def test_random_graphs_buffers_are_the_peaks_of_a_long_run(graph):
    assume(all(a.attrs["exec"] > 0 for a in graph.actors.values()))
    try:
        result = analyse(graph)
    except Exception:          # deadlocks are test_moc_timing's
        assume(False)
    assume(None not in result.buffers.values())
    _agree_with_a_long_run(graph, 12)


def test_a_transient_longer_than_twelve_iterations():
    """Found by the property test above: e2's peak, 32, comes after the 12th iteration."""
    (graph,) = dsl.loads_sdf("""sdf random {
        actor a0 [exec = 2]; actor a1 [exec = 5]; actor a2 [exec = 1]; actor a3 [exec = 5]
        channel e0 : a0 -> a1 [cons = 2, delay = 3]
        channel e1 : a1 -> a2 [prod = 4, delay = 6]
        channel e2 : a2 -> a3 [prod = 2, cons = 4, delay = 16]
        channel e3 : a3 -> a0 [prod = 2, cons = 2, delay = 8]
        channel e4 : a2 -> a1 [cons = 4, delay = 5]
        channel e5 : a3 -> a3 [prod = 2, cons = 2, delay = 7]
        channel e6 : a2 -> a3 [cons = 2, delay = 8]
    }""")
    assert analyse(graph).buffers["e2"] == 32
    assert horizon_peaks(graph, 12)["e2"] == 28 and horizon_peaks(graph, 48)["e2"] == 32
    _agree_with_a_long_run(graph, 12)


def _digest(schedule):
    rows = [[a, [[str(f.start), str(f.end)] for f in fs]] for a, fs in schedule.items()]
    return hashlib.sha256(json.dumps(rows, separators=(",", ":")).encode()).hexdigest()


@pytest.mark.parametrize("record", BEFORE["graphs"], ids=lambda r: Path(r["file"]).name)
def test_the_default_keeps_the_numbers_it_gave_before(record):
    graph = _load(record)
    if "error" in record and "exec" in record["error"]:
        with pytest.raises(Exception, match="exec"):
            analyse(graph)
        return
    result = analyse(graph)
    if "error" in record:
        # before: stopped at the states limit or no answer in the time given; now the
        # state space or the firings' precedences (issue 42) answer
        assert ("state space" in result.method or "precedences" in result.method) and \
            None not in result.buffers.values()
        return
    assert str(result.throughput) == record["throughput"]
    assert str(result.latency) == record["latency"]
    assert {c: None if n is None else str(n) for c, n in result.buffers.items()} == \
        record["buffers"]
    assert _digest(result.schedule) == record["schedule"]


def test_records_name_their_commit_and_cover_the_testbench():
    assert len(BEFORE["before"]["commit"]) == 40
    files = {r["file"] for r in BEFORE["graphs"]}
    assert {p.relative_to(ROOT).as_posix() for p in EXAMPLES} <= files


def test_two_actor_cycle_of_two_hundred_thousand_firings_answers():
    # issue 33: rates 99,991/99,989 and 9,999,100,000 tokens ran for ever; the
    # K-periodic constraint graph now names only the pairs that are linked, and the
    # state space repeats the period the K-periodic analysis gives (checked inside)
    graph = big_two_actor_cycle()
    assert sum(repetition_vector(graph).values()) == 199_980
    result = analyse(graph)
    assert result.period == Fraction(179980, 89999)
    assert "state space" in result.method


def test_a_ring_of_large_rates_answers():
    # a 5-actor ring, q = (4999, 3001, 2003, 1009, 997) (11,009 firings an iteration),
    # with 1/20 of an iteration's tokens on the closing channel
    q = [4999, 3001, 2003, 1009, 997]
    full = ring(q)
    tokens = list(full.channels.values())[-1].delay // 20
    graph = ring(q, exec_times=[3, 5, 2, 7, 4], tokens=tokens)
    result = analyse(graph)
    assert result.latency is not None and None not in result.buffers.values()
    assert result.period == analyse(graph, simulate=False).period


def test_a_constraint_graph_past_the_firings_limit_gives_a_bound_or_stops_with_its_name(
        monkeypatch):
    # past the limit after a schedule was found: the least K-periodic period found, an
    # upper bound of the exact 179980/89999 above, not proven optimal (and no schedule:
    # the expansion is past the limit too); before any: the limit, named
    import moc.limits
    from moc.errors import LimitError
    # the bound by hand: K = 1, one edge per channel (gcd(99991, 99989) = 1), each of
    # height −x_max/R with x_max = p − C0 − 1, C0 = M0 + p − c, R = 99991·99989 tokens
    # an iteration on both; the cycle's weight is 1 + 1
    R = 99_991 * 99_989
    x_ab = 99_991 - (0 + 99_991 - 99_989) - 1
    x_ba = 99_989 - (9_999_100_000 + 99_989 - 99_991) - 1
    by_hand = Fraction(2) / Fraction(-x_ab - x_ba, R)
    assert by_hand == Fraction(9998000099, 4999450011)
    monkeypatch.setattr(moc.limits, "MAX_FIRINGS", 100_000)
    monkeypatch.setattr(moc.limits, "MAX_STATES", 10)      # the state space left out
    for simulate in (True, False):
        found = analyse(big_two_actor_cycle(), simulate=simulate)
        assert found.period == by_hand > Fraction(179980, 89999)
        assert "not proven optimal" in found.method
    # within its limit the state space repeats: the exact period, as above
    monkeypatch.setattr(moc.limits, "MAX_STATES", 200_000)
    found = analyse(big_two_actor_cycle(), simulate=False)
    assert found.period == Fraction(179980, 89999) and found.critical_cycle == ()
    assert "not proven optimal" not in found.method
    monkeypatch.setattr(moc.limits, "MAX_FIRINGS", 3)
    for simulate in (True, False):
        with pytest.raises(LimitError, match=r"K-periodic constraint graph of 'big_cycle' "
                           r".* more than the limit firings = 3; raise it with "
                           r"--limit firings=N") as info:
            analyse(big_two_actor_cycle(), simulate=simulate)
        assert info.value.limit == "firings"
