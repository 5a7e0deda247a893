"""The first iteration of a cyclo-static graph's self-timed execution by the occupancy
program (``moc.occupancy.first_iteration``) against the longest paths over the
expansion of its firings (``moc.csdf.first_iteration``), firings of time 0 included."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from dataflow_graphs import cyclo_static_ring
from moc.csdf import first_iteration as expanded_first
from moc.deadlock import check_deadlock
from moc.errors import DeadlockError
from moc.occupancy import first_iteration
from moc.phases import Phases
from moc.timing import prepared
from moc import SDFGraph


@st.composite
def rings_with_instant_phases(draw):
    """Cyclo-static rings of 2-4 actors with chords, phase times 0-3 (some firings end
    as they start), initial tokens at random."""
    return cyclo_static_ring(draw, st, lambda i, j, wi, wj: draw(st.integers(0, 6)),
                             min_time=0, max_time=3)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rings_with_instant_phases(), st.sampled_from(["ends", "starts"]))
def test_the_occupancy_program_gives_the_expansion_s_first_iteration(graph, order):
    bound, durations, q, _ = prepared(graph)
    try:
        check_deadlock(bound, q)
    except DeadlockError:
        return
    quick = first_iteration(bound, durations, q, order)
    expected = expanded_first(bound, durations, q, order)
    assert quick is not None
    assert {a: tuple(quick[a]) for a in bound.actors} == expected


def test_firings_of_time_zero_by_hand():
    """a (phases of times 0 and 2) writes a token in each phase for b (time 0), which
    writes one back; one token starts on the way back.  a's first firing starts and
    ends at 0, b's first at 0; a's second starts at 0 (the token b gave back at 0) and
    ends at 2, and b's second follows it at 2."""
    g = SDFGraph("instant")
    g.add_actor("a", exec=Phases([0, 2]))
    g.add_actor("b", exec=0)
    g.add_channel("a", "b", "ab", prod=1, cons=1)
    g.add_channel("b", "a", "ba", prod=1, cons=1, delay=1)
    bound, durations, q, _ = prepared(g)
    assert q == {"a": 2, "b": 2}
    found = first_iteration(bound, durations, q)
    assert {a: tuple(found[a]) for a in bound.actors} == {
        "a": ((0, 0), (0, 2)), "b": ((0, 0), (2, 2))}
