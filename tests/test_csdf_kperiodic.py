"""Cyclo-static graphs without expansion (issue 42): liveness and throughput by
K-periodic scheduling (moc.csdf_kperiodic) against hand-worked graphs and against the
maximum cycle ratio of the firings of one iteration (moc.csdf, the expansion), and
Kiter's AGB5CSDF graphs where a local copy of Kiter's ``benchmarks/`` is named by
``KITER_BENCHMARKS``."""
from __future__ import annotations

import os
import time
from contextlib import nullcontext
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st

from dataflow_graphs import cyclo_static_ring
from initialised_run import run as execute
from moc import SDFGraph, repetition_vector
from moc import csdf_kperiodic
from moc.csdf import throughput as expanded_throughput
from moc.csdf_kperiodic import phased_kperiodic_throughput
from moc.kperiodic import one_at_a_time
from moc.deadlock import check_deadlock
from moc.errors import DeadlockError
from moc.phases import Phases, cyclo_static, phase_counts
from moc.timing import check_live, prepared, self_timed_period
from test_kperiodic_stop import grown_from_one


def _ring(delay_back, a_exec=(1, 2), b_exec=3):
    """``a`` (two phases) writes one token in its second phase to ``b``; ``b`` writes
    one back, which ``a`` reads in its first phase."""
    g = SDFGraph("ring")
    g.add_actor("a", exec=Phases(a_exec))
    g.add_actor("b", exec=b_exec)
    g.add_channel("a", "b", "ab", prod=Phases([0, 1]), cons=1)
    g.add_channel("b", "a", "ba", prod=1, cons=Phases([1, 0]), delay=delay_back)
    return g


def _period(g, order="ends"):
    graph, durations, q, _ = prepared(g)
    return phased_kperiodic_throughput(graph, durations, q, order).period


def test_a_ring_without_tokens_deadlocks_at_its_channel():
    g = _ring(0).bind()
    with pytest.raises(DeadlockError, match="ba") as err:
        check_live(g)
    assert set(err.value.actors) == {"a", "b"}
    with pytest.raises(DeadlockError):
        check_deadlock(g)                       # the symbolic execution agrees


def test_a_ring_with_one_token_has_the_hand_worked_period():
    """b ends at t; a0 starts at t, a1 with it (starts in order), ends at t + 2; b runs
    t + 2 .. t + 5: the period is d(a1) + d(b) = 5."""
    g = _ring(1)
    check_live(g.bind())
    assert _period(g) == 5 == _period(g, "starts")


def test_the_two_orders_of_an_actor_s_firings():
    """a0 takes 5 and reads b's token, a1 takes 1 and writes b's.  Firings ending in
    order: a1 ends with a0, at t + 5, b at t + 6, the next a0 starts then (period 6).
    Starting in order only: a1 ends at t + 1, b at t + 2 (period 2; the a0s overlap)."""
    g = _ring(1, a_exec=(5, 1), b_exec=1)
    assert _period(g, "ends") == 6
    assert _period(g, "starts") == 2
    graph, durations, q, _ = prepared(g)
    assert expanded_throughput(graph, durations, q).period == 6


def test_a_source_phase_in_a_ring():
    """Kiter's NoCMotivation/SimpleUseCase, restated: Kiter prints an infinite
    throughput.  Worked by hand (every firing 1): ``c`` fires its first phase (reads
    nothing, writes 3) whenever its previous firing has started; its second phase reads
    3.  From t = 3 on, ``c``'s reading firings start at 3, 6, 9, ...: two per 3 time
    units, one iteration (q = 2, 3, 4) every 3, period 3, not 0: the cycle
    ``x -> y -> c`` (its reading phase) ``-> c`` (next writing phase) ``-> x`` takes
    time."""
    g = SDFGraph("source_phase")
    for name, exec_ in (("x", 1), ("y", 1), ("c", Phases([1, 1]))):
        g.add_actor(name, exec=exec_)
    g.add_channel("x", "y", "xy", prod=3, cons=2)
    g.add_channel("y", "c", "yc", prod=2, cons=Phases([0, 3]))
    g.add_channel("c", "x", "cx", prod=Phases([3, 0]), cons=3, delay=3)
    assert repetition_vector(g.bind()) == {"x": 2, "y": 3, "c": 4}
    assert _period(g) == 3 == _period(g, "starts")
    graph, durations, q, _ = prepared(g)
    assert expanded_throughput(graph, durations, q).period == 3   # every firing, expanded


def _reads_in_its_second_phase(a_exec, delay):
    """``a``'s first phase writes one token for ``b`` and reads nothing; its second
    reads ``b``'s token and writes nothing; ``b`` (3 time units with one initial token
    on ``ba``, else 1) turns a token into a token."""
    g = SDFGraph("phase_order")
    g.add_actor("a", exec=Phases(a_exec))
    g.add_actor("b", exec=3 if delay == 1 else 1)
    g.add_channel("a", "b", "ab", prod=Phases([1, 0]), cons=1)
    g.add_channel("b", "a", "ba", prod=1, cons=Phases([0, 1]), delay=delay)
    return g


def test_an_actor_s_next_cycle_waits_for_its_last_phase_to_start():
    """Where an actor's first phase reads nothing, only the order of its own firings
    holds it back: its next first phase starts once its second phase (which waits for a
    token) has started.  Kiter leaves that order out between an actor's last phase and
    its next cycle when no self-loop limits the actor, and prints period 0 (infinite
    throughput) for the first graph and 0.333333 for the second (both exported by
    ``mapeval export sdf3``).  By hand:

    a = (3, 1), b = 3, one token on ba: at 0, a's firings 0 (first phase) and 1 (second,
    with the token) start, then firing 2 (first phase again); firings 0 and 2 end at 3
    and give b two tokens; b runs 3 .. 6 twice, so at 6 two second phases start, and
    two first phases after them: two cycles of a (two iterations) every 6, period 3.

    a = (5, 4), b = 1, three tokens on ba: at 0 three second phases start and four first
    phases; the four end at 5, b runs 5 .. 6 four times, at 6 four second phases and four
    first phases start: four iterations every 6, period 3/2.  Either order of an actor's
    firings gives the same (the second phases write nothing)."""
    for a_exec, delay, period in (((3, 1), 1, 3), ((5, 4), 3, Fraction(3, 2))):
        g = _reads_in_its_second_phase(a_exec, delay)
        assert repetition_vector(g.bind()) == {"a": 2, "b": 1}
        assert _period(g) == period == _period(g, "starts")
        graph, durations, q, _ = prepared(g)
        assert expanded_throughput(graph, durations, q).period == period


def test_a_self_loop_of_three_tokens_orders_the_cycles_of_phases_too():
    """Campaign seed 29's ``k0049-joined-loops`` (Kiter's generator, its self-loop
    given three tokens): its critical cycle is ``Node_1`` alone, five phases of times
    74, 67, 65, 75, 27, one token of its self-loop read and written per phase.  Firing
    ``j`` starts after firing ``j − 1`` has started and after firing ``j − 3`` has
    ended (the self-loop's token), so a path of such steps (+1 of weight 0, +3 of
    weight the phase's time) bounds the time per cycle of phases.  By hand the
    heaviest: phases 0 -> 3 -> 1 -> 4 (+3 steps, 74 + 75 + 67) -> 0 of the next cycle
    (+1), 216 over 10 firings: 108 a cycle (all +3 steps give 308 over 15, 102.67).
    Kiter prints 107 a cycle: without the +1 step from the last phase to the next
    cycle, which it adds only for a self-loop of one token (its reentrancy factor), the
    heaviest is 0 -> 3 -> 1 -> 2 -> 0, 214 over 10.  The same 108 where firings end
    in order (firing ``j − 1`` ending first adds +4 steps of weight ``d(j − 1)``, no
    heavier than +3 then +1), as the event-by-event execution gives; that execution
    with firings ending in any order counts the tokens, not which firing wrote them, and
    runs faster (308/3: every step +3), the documented gap of Kiter's model."""
    g = SDFGraph("loop")
    g.add_actor("a", exec=Phases((74, 67, 65, 75, 27)))
    g.add_channel("a", "a", "loop", prod=1, cons=1, delay=3)
    assert repetition_vector(g.bind()) == {"a": 5}
    assert _period(g) == 108 == _period(g, "starts")
    q = repetition_vector(g.bind())
    assert execute(g.bind(), q) == ("period", 108)
    assert execute(g.bind(), q, ends_in_order=False) == ("period", Fraction(308, 3))


@st.composite
def phased_graphs(draw):
    """A ring of 2-4 actors of 1-3 phases with rates split over the phases, plus up to
    two chords; initial tokens at random (some graphs deadlock)."""
    return cyclo_static_ring(draw, st, lambda i, j, wi, wj: draw(st.integers(0, 8)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(phased_graphs())
def test_kperiodic_equals_the_expansion(graph):
    """The K-periodic period equals the maximum cycle ratio of the firings of one
    iteration exactly, and both find the same graphs deadlocked, as the symbolic
    execution of one iteration (moc.deadlock) does; K grown step by step from 1 gives
    the whole iteration's value, under either order of an actor's firings (each
    equal to the expansion's under that order)."""
    bound, durations, q, _ = prepared(graph)
    try:
        check_deadlock(bound, q)
    except DeadlockError:
        with pytest.raises(DeadlockError):
            check_live(bound, q)
        with pytest.raises(DeadlockError):
            self_timed_period(bound, durations, q)
        return
    check_live(bound, q)
    expected = expanded_throughput(bound, durations, q).period
    found = self_timed_period(bound, durations, q)
    assert found.optimal and found.period == expected
    periods = {"ends": expected,
               "starts": phased_kperiodic_throughput(bound, durations, q, "starts").period}
    assert periods["starts"] == expanded_throughput(bound, durations, q, "starts").period
    with grown_from_one():
        for order in ("ends", "starts"):
            grown = phased_kperiodic_throughput(bound, durations, q, order)
            assert grown.optimal and grown.period == periods[order]


@st.composite
def looped_phased_graphs(draw, most=1, every=True):
    """:func:`phased_graphs` with a self-loop on every actor (on some, unless
    ``every``) that lets at most ``most`` firings run at once (``r`` tokens a phase,
    ``r ≤ M0 < (most + 1)·r``; one at a time by default), some of them phased."""
    graph = draw(phased_graphs())
    n = phase_counts(graph)
    for a in list(graph.actors):
        if not every and not draw(st.booleans()):
            continue
        r = draw(st.integers(1, 3))
        rate = Phases([r] * n[a]) if n[a] > 1 and draw(st.booleans()) else r
        graph.add_channel(a, a, f"{a}_alone", prod=rate, cons=rate,
                          delay=draw(st.integers(r, (most + 1) * r - 1)))
    return graph


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(looped_phased_graphs())
def test_one_firing_at_a_time_makes_the_two_orders_one(graph):
    """Where every actor fires one firing at a time, the expansion's period is the same
    under either order of an actor's firings, and the K-periodic answer under ``ends``
    (solved on the graph of ``starts``, :func:`moc.csdf_kperiodic.one_at_a_time_each`)
    is the expansion's, K grown step by step from 1 too."""
    bound, durations, q, _ = prepared(graph)
    assert csdf_kperiodic.one_at_a_time_each(list(bound.actors),
                                             list(bound.channels.values()),
                                             phase_counts(bound))
    try:
        check_deadlock(bound, q)
    except DeadlockError:
        with pytest.raises(DeadlockError):
            self_timed_period(bound, durations, q)
        return
    expected = expanded_throughput(bound, durations, q).period
    assert expanded_throughput(bound, durations, q, "starts").period == expected
    for steps in (nullcontext, grown_from_one):
        with steps():
            found = phased_kperiodic_throughput(bound, durations, q, "ends")
        assert found.optimal and found.period == expected


def test_a_loop_that_lets_two_firings_overlap_keeps_the_ends_graph():
    """Two tokens on a loop of one token a firing let two firings overlap: their ends
    are not in order by themselves, and the orders differ (108 against 308/3 above)."""
    def loops(rate, delay):
        g = SDFGraph("loop")
        g.add_actor("a", exec=1)
        g.add_channel("a", "a", "loop", prod=rate, cons=rate, delay=delay)
        return list(g.channels.values())
    assert csdf_kperiodic.one_at_a_time_each(["a"], loops(1, 1), {"a": 1})
    assert csdf_kperiodic.one_at_a_time_each(["a"], loops(3, 5), {"a": 1})
    assert not csdf_kperiodic.one_at_a_time_each(["a"], loops(1, 2), {"a": 1})
    assert not csdf_kperiodic.one_at_a_time_each(["a"], loops(Phases([1, 2]), 2), {"a": 2})
    assert not csdf_kperiodic.one_at_a_time_each(["a", "b"], loops(1, 1), {"a": 1, "b": 1})


def _solved(graph, order, lists=True):
    """The whole K-periodic answer (or the error) with small constraint graphs on Python
    lists, or with every one in numpy arrays."""
    from moc import howard_exact
    saved = howard_exact.SMALL_LISTS, howard_exact.LOADED_LISTS
    if not lists:
        howard_exact.SMALL_LISTS = howard_exact.LOADED_LISTS = -1
    try:
        return answer(self_timed_period, graph, order)
    finally:
        howard_exact.SMALL_LISTS, howard_exact.LOADED_LISTS = saved


def answer(solve, graph, order):
    """What ``solve`` (a K-periodic throughput of a bound graph) prints of ``graph``:
    the period, the critical circuit and its channels, K, whether optimal and the
    actors' periods; or the deadlock's message, actors and channels."""
    try:
        bound, durations, q, _ = prepared(graph)
        found = solve(bound, durations, q, order)
        return (found.period, found.critical_cycle, dict(found.periodicity),
                found.critical_channels, found.optimal, dict(found.actor_periods))
    except DeadlockError as exc:
        return str(exc), exc.actors, exc.channels


@st.composite
def sdf_rings(draw):
    """A ring of 2-5 SDF actors with up to two chords, tokens at random."""
    n = draw(st.integers(2, 5))
    g = SDFGraph("ring")
    for i in range(n):
        g.add_actor(f"a{i}", exec=draw(st.integers(1, 9)))
    weight = [draw(st.sampled_from([1, 2, 3, 4, 6])) for _ in range(n)]
    pairs = [(i, (i + 1) % n) for i in range(n)] + draw(st.lists(st.tuples(
        st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2))
    for c, (i, j) in enumerate(pairs):
        g.add_channel(f"a{i}", f"a{j}", f"c{c}", prod=weight[j], cons=weight[i],
                      delay=weight[i] * weight[j] * draw(st.integers(0, 3)))
    return g


def _self_looped_ring():
    """``a`` (two phases of 1) writes 1 then 6 tokens to ``b``, which reads 2 and
    writes 2 back, read 2 then 5 (5 and 3 initial tokens); each actor's firings one at
    a time.  q = (4, 7): one iteration's firings run one after another take
    2·(1 + 1) + 7·1 = 11; the expansion's period is 8."""
    g = SDFGraph("looped")
    g.add_actor("a", exec=Phases([1, 1]))
    g.add_actor("b", exec=1)
    g.add_channel("a", "b", "ab", prod=Phases([1, 6]), cons=2, delay=5)
    g.add_channel("b", "a", "ba", prod=2, cons=Phases([2, 5]), delay=3)
    g.add_channel("a", "a", "aa", prod=1, cons=1, delay=1)
    g.add_channel("b", "b", "bb", prod=1, cons=1, delay=1)
    return g


def test_past_the_limit_firings_run_one_at_a_time_bound_the_period(monkeypatch):
    """Where a larger K would pass the limit and the K-periodic schedules found are
    slower than running one iteration's firings one after another, that is the period
    given: no critical cycle, not optimal, an upper bound of the expansion's."""
    from moc import limits
    from moc.timing import analyse
    bound, durations, q, _ = prepared(_self_looped_ring())
    assert q == {"a": 4, "b": 7}
    assert expanded_throughput(bound, durations, q).period == 8
    monkeypatch.setattr(limits, "MAX_FIRINGS", 30)
    found = self_timed_period(bound, durations, q)
    assert (found.period, found.critical_cycle, found.optimal) == (11, (), False)
    assert one_at_a_time(["a", "b"], durations, q, {"a": 2, "b": 1}) == 11
    # below it: b's seven firings of time 1, one at a time (a's: 2·(1 + 1) = 4)
    assert found.floor == 7
    # the state space left out (past its limit), the bound is the answer
    monkeypatch.setattr(limits, "MAX_STATES", 1)
    result = analyse(_self_looped_ring(), simulate=False)
    assert result.throughput == Fraction(1, 11) and not result.critical_cycle
    assert "run one at a time" in result.method and "not proven optimal" in result.method
    assert result.method.endswith("the period is at least 7 (the busiest actor's firings "
                                  "of one iteration, as many at a time as its self-loop "
                                  "lets run)")
    # within it, the state space repeats and proves the expansion's 8
    monkeypatch.setattr(limits, "MAX_STATES", 200_000)
    result = analyse(_self_looped_ring(), simulate=False)
    assert result.period == 8 and not result.critical_cycle
    assert "not proven optimal" not in result.method
    assert "the period is the self-timed state space's, which repeated after" in \
        result.method


def _live_and_exact(graph):
    """``(bound, durations, q, period)``: the prepared ``graph`` and its expansion's
    period; None where it deadlocks."""
    bound, durations, q, _ = prepared(graph)
    try:
        check_deadlock(bound, q)
    except DeadlockError:
        return None
    return bound, durations, q, expanded_throughput(bound, durations, q).period


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(phased_graphs(), looped_phased_graphs()), st.integers(10, 60))
def test_a_period_past_the_limit_is_between_the_exact_one_and_the_firings_in_turn(
        graph, limit):
    """With a small limit, the period given (where K = 1 fits) is never below the
    expansion's and never above one iteration's firings run one after another, and the
    floor given with it never above the expansion's; where it is proven optimal it is
    the expansion's."""
    from moc import limits
    from moc.errors import LimitError
    from moc.phases import phase_counts
    found = _live_and_exact(graph)
    if found is None:
        return
    bound, durations, q, exact = found
    saved = limits.MAX_FIRINGS
    limits.MAX_FIRINGS = limit
    try:
        found = self_timed_period(bound, durations, q)
    except LimitError:
        return
    finally:
        limits.MAX_FIRINGS = saved
    assert found.floor <= exact <= found.period
    assert found.period <= one_at_a_time(
        list(bound.actors), durations, q, phase_counts(bound))
    if found.optimal:
        assert found.period == exact == found.floor


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(phased_graphs(), looped_phased_graphs(), sdf_rings()), st.data())
def test_the_state_space_that_repeats_gives_the_expansion_s_period(graph, data):
    """Where the K-periodic schedules found are not proven optimal, the state space
    that repeats within its limit gives the period (``moc.timing._recurring``): it is
    the expansion's, exactly, whatever bound it was handed (here the proven period
    doubled, plus one, and no floor).  Channels the bound's paces leave out of the state
    as growing change whether it repeats, never what it gives: with paces drawn at
    random it gives the expansion's period or nothing (within 2,000 instants here)."""
    from moc import limits
    from moc.record import replace
    from moc.timing import _recurring
    found = _live_and_exact(graph)
    if found is None:
        return
    bound, durations, q, exact = found
    found = self_timed_period(bound, durations, q)
    loose = replace(found, optimal=False, period=2 * found.period + 1, floor=0)
    run = _recurring(bound, durations, q, loose)
    if exact == 0:
        assert run is None                 # an actor fires without bound
        return
    assert run.period == exact
    paces = {a: data.draw(st.integers(1, 5), label=a) for a in bound.actors}
    saved, limits.MAX_STATES = limits.MAX_STATES, 2000
    try:
        run = _recurring(bound, durations, q, replace(loose, actor_periods=paces))
    finally:
        limits.MAX_STATES = saved
    event(f"random paces: {'repeated' if run else 'past the limit'}")
    assert run is None or run.period == exact


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.one_of(phased_graphs(), sdf_rings()), st.sampled_from(["ends", "starts"]))
def test_small_graphs_on_lists_give_the_arrays_answer(graph, order):
    """A small constraint graph is made and solved on Python lists
    (``moc.howard_exact.on_lists``): the same period, critical circuit and channels,
    K and deadlocks as with numpy's arrays, cyclo-static or SDF."""
    assert _solved(graph, order) == _solved(graph, order, lists=False)


KITER = os.environ.get("KITER_BENCHMARKS")


@pytest.mark.skipif(not KITER, reason="KITER_BENCHMARKS names no copy of Kiter's "
                                      "benchmarks/ folder")
@pytest.mark.parametrize("name", ["autogen2", "autogen3"])
def test_kiter_autogen_graphs_are_answered_quickly(name):
    """Refused before (41 and 309 million firings): live, and a K-periodic throughput."""
    from dsl import read_sdf3
    path = Path(KITER) / "AGB5CSDF" / f"{name}.xml"
    if not path.exists():
        pytest.skip(f"{path} is absent")
    graph = read_sdf3(path)
    bound, durations, q, _ = prepared(graph)
    start = time.monotonic()
    check_live(bound, q)
    found = self_timed_period(bound, durations, q)
    assert time.monotonic() - start < 10
    # every firing takes 1: no slower than one iteration's firings one after another
    assert 0 < Fraction(found.period) <= sum(q.values())
