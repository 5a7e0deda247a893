"""How many firings a self-loop lets run at once, and the busiest actor's floor on the
period (``moc.self_loops``), against the expansion of every firing (``moc.csdf``)."""
from __future__ import annotations

from fractions import Fraction

from hypothesis import HealthCheck, given, settings

from moc import SDFGraph
from moc.csdf import throughput as expanded_throughput
from moc.deadlock import check_deadlock
from moc.errors import DeadlockError
from moc.phases import Phases, phase_counts
from moc.self_loops import busiest, concurrency
from moc.timing import prepared, self_timed_period
from test_csdf_kperiodic import looped_phased_graphs


def _loop(prod, cons, delay, src="a", dst="a"):
    g = SDFGraph("g")
    g.add_actor("a", exec=1)
    g.add_actor("b", exec=1)
    g.add_channel(src, dst, "c", prod=prod, cons=cons, delay=delay)
    return g.channels["c"]


def test_a_loop_lets_as_many_firings_run_as_it_holds_rates():
    assert concurrency(_loop(1, 1, 1), 1) == 1
    assert concurrency(_loop(2, 2, 5), 1) == 2           # 5 tokens, 2 a firing
    assert concurrency(_loop(Phases([3, 3]), 3, 9), 2) == 3
    assert concurrency(_loop(2, 2, 1), 1) == 0           # not one firing: a deadlock
    assert concurrency(_loop(Phases([1, 2]), Phases([1, 2]), 4), 2) is None
    assert concurrency(_loop(1, 1, 1, dst="b"), 1) is None


def _two(tokens_on_a):
    """a (phases of times 2 and 3) and b (time 1) in a ring with ample tokens, each with
    a self-loop; a's holds ``tokens_on_a`` tokens, b's one."""
    g = SDFGraph("two")
    g.add_actor("a", exec=Phases([2, 3]))
    g.add_actor("b", exec=1)
    g.add_channel("a", "b", "ab", prod=1, cons=1, delay=10)
    g.add_channel("b", "a", "ba", prod=1, cons=1, delay=10)
    g.add_channel("a", "a", "aa", prod=1, cons=1, delay=tokens_on_a)
    g.add_channel("b", "b", "bb", prod=1, cons=1, delay=1)
    return g


def test_the_busiest_actor_by_hand():
    """q = (2, 2): a's firings of one iteration take 2 + 3 = 5, b's 1 + 1 = 2.  One
    at a time, a bounds the period at 5.  With two tokens on its loop two of its
    firings run at once, but firing ν + 2 waits for ν: the firings of phase 1 (time
    3) follow one another, one an iteration, so the floor is 3, not 5/2; with three
    tokens the chains of every third firing take 2 + 3 in three iterations, 5/3, below
    b's 2.  With the ring's 20 tokens no other circuit is slower, so each floor is the
    expansion's period."""
    for tokens, floor, actor in ((1, Fraction(5), "a"), (2, Fraction(3), "a"),
                                 (3, Fraction(2), "b")):
        bound, durations, q, _ = prepared(_two(tokens))
        found = busiest(list(bound.actors), list(bound.channels.values()), durations, q,
                        phase_counts(bound))
        assert found == (floor, actor, actor * 2)
        assert expanded_throughput(bound, durations, q).period == floor


def test_no_loop_no_floor():
    g = SDFGraph("ring")
    g.add_actor("a", exec=2)
    g.add_actor("b", exec=1)
    g.add_channel("a", "b", "ab", delay=1)
    g.add_channel("b", "a", "ba", delay=1)
    bound, durations, q, _ = prepared(g)
    assert busiest(["a", "b"], list(bound.channels.values()), durations, q,
                   phase_counts(bound)) is None


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(looped_phased_graphs(most=4, every=False))
def test_no_execution_beats_the_busiest_actor(graph):
    """The floor never passes the period of the expansion of one iteration's firings,
    under either order of an actor's firings."""
    bound, durations, q, _ = prepared(graph)
    try:
        check_deadlock(bound, q)
    except DeadlockError:
        return
    found = busiest(list(bound.actors), list(bound.channels.values()), durations, q,
                    phase_counts(bound))
    if found is None:
        return
    for order in ("ends", "starts"):
        assert found[0] <= expanded_throughput(bound, durations, q, order=order).period


def test_past_the_limit_a_schedule_as_fast_as_the_busiest_actor_is_optimal(monkeypatch):
    """q = (7, 6); a's seven firings take 3 each, one at a time, and b's take 0, so
    running the firings of one iteration one after another (21) is as fast as the
    busiest actor allows.  Under a limit of 15 the 1-periodic schedule (K = 1, not
    covering: a's circuit with b is not a repeating chain there) is all there is, and
    21 beats it: that period is proven, with a's loop as the critical circuit, and it
    is the expansion's."""
    from moc import limits
    g = SDFGraph("busy")
    g.add_actor("a", exec=3)
    g.add_actor("b", exec=Phases([0, 0, 0]))
    g.add_channel("a", "b", "ab", prod=2, cons=Phases([1, 4, 2]), delay=2)
    g.add_channel("b", "a", "ba", prod=Phases([3, 0, 4]), cons=2, delay=3)
    g.add_channel("a", "a", "aa", prod=1, cons=1, delay=1)
    g.add_channel("b", "b", "bb", prod=1, cons=1, delay=1)
    bound, durations, q, _ = prepared(g)
    assert q == {"a": 7, "b": 6}
    assert expanded_throughput(bound, durations, q).period == 21
    monkeypatch.setattr(limits, "MAX_FIRINGS", 15)
    found = self_timed_period(bound, durations, q)
    assert dict(found.periodicity) == {"a": 1, "b": 1}
    assert (found.period, found.critical_cycle, found.optimal, found.floor) == \
        (21, ("a",), True, 21)
    assert found.critical_channels == {"aa"}
