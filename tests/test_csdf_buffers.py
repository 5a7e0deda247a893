"""Buffer maxima of cyclo-static graphs (issue 42): ``analyse``'s ``buffers`` against a
step-by-step simulation written here, unit of time by unit of time, on small random
strongly connected CSDF graphs, and a hand-worked ring."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings, strategies as st

from dataflow_graphs import cyclo_static_ring
from stepped import end_firings, phase_counts, start_firings
from moc import SDFGraph
from moc.phases import Phases
from moc.self_timed import simulate
from moc.timing import analyse, prepared


def stepped_peaks(graph, horizon=None):
    """The most tokens each channel holds in the self-timed execution, by time steps of
    1 (integer phase times of at least 1): at each step the firings that end produce,
    then every actor starts the firings its phase's tokens allow, one after the other
    in phase order; an actor's firing ends at its phase time after its start, and not
    before the actor's previous firing.  Stops when the whole state (tokens, phases
    and remaining times) comes back: the execution repeats from there."""
    actors = list(graph.actors)
    chans = list(graph.channels.values())
    n = phase_counts(graph)
    tokens = {ch.name: ch.delay for ch in chans}
    peak = dict(tokens)
    started = dict.fromkeys(actors, 0)
    running = {a: [] for a in actors}            # (end, phase), in firing order
    seen = set()
    t = 0
    while True:
        end_firings(graph, t, tokens, running)
        peak = {c: max(peak[c], tokens[c]) for c in peak}
        start_firings(graph, n, t, tokens, started, running)
        state = (tuple(tokens.values()), tuple(started[a] % n[a] for a in actors),
                 tuple(tuple((e - t, k) for e, k in running[a]) for a in actors))
        if state in seen:
            return peak
        seen.add(state)
        t += 1


@st.composite
def rings(draw):
    """A cyclo-static ring with chords (times 1-4), one iteration's tokens or more on
    each channel that goes back: live."""
    return cyclo_static_ring(draw, st, lambda i, j, wi, wj: wi * wj + draw(
        st.integers(0, 3)) if j <= i else 0, min_time=1)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rings())
def test_buffer_maxima_equal_a_step_by_step_simulation(g):
    result = analyse(g)
    assert dict(result.buffers) == stepped_peaks(g)


@st.composite
def crowded_rings(draw):
    """As :func:`rings`, with 2-4 iterations' tokens on the channels that go back: many
    firings of an actor start at once, whole cycles of its phases among them."""
    return cyclo_static_ring(draw, st, lambda i, j, wi, wj: draw(st.integers(2, 4)) *
                             wi * wj if j <= i else 0, min_time=1)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(crowded_rings())
def test_many_firings_at_once_in_the_state_space(g):
    """The state space itself (``analyse`` takes it only where a firing waits for very
    many iterations back), whole cycles of phases started together."""
    g, durations, q, _ = prepared(g)
    assert dict(simulate(g, durations, q, record=False).buffers) == stepped_peaks(g) \
        == dict(analyse(g).buffers)


def test_a_hand_worked_ring():
    """a (phases 1, 2) writes one token in its second phase to b (time 3), which writes
    one back, read by a's first phase; two tokens start on the way back, and firings
    overlap (no self-loop).  At 0 a starts a0, a1 (reads nothing), a0, a1, ending at 1,
    2 and 2, 2 (not before the previous firing): at 2 two a1 write, so ab holds 2; b
    starts both at once and writes 2 back at 5, which a's two a0 read at once."""
    g = SDFGraph("ring")
    g.add_actor("a", exec=Phases([1, 2]))
    g.add_actor("b", exec=3)
    g.add_channel("a", "b", "ab", prod=Phases([0, 1]), cons=1)
    g.add_channel("b", "a", "ba", prod=1, cons=Phases([1, 0]), delay=2)
    result = analyse(g)
    assert dict(result.buffers) == {"ab": 2, "ba": 2} == stepped_peaks(g)


def test_a_self_loop_that_writes_before_it_reads_beside_a_source():
    """A source ``a`` fires without bound, so no state recurs and the buffers are not
    simulated.  ``b``'s self-loop writes 2 in its first phase and reads 2 in its second
    (1 initial token): by hand, ``b#0`` starts at 1 on ``a``'s token (reading none of
    the loop's), ends at 2 writing 2, and ``b#1``, which needs 2, could not start
    before: the loop holds 3 at 2, not its initial token (the value given before).
    Unknown without a simulation: ``None``, as a channel inside a component."""
    g = SDFGraph("loop")
    g.add_actor("a", exec=1)
    g.add_actor("b", exec=Phases([1, 1]))
    g.add_channel("a", "b", "ab", prod=1, cons=Phases([1, 1]))
    g.add_channel("b", "b", "bb", prod=Phases([2, 0]), cons=Phases([0, 2]), delay=1)
    result = analyse(g)
    assert result.period == 1 and dict(result.buffers) == {"ab": float("inf"), "bb": None}
    firings = {a: [(f.start, f.end) for f in fs] for a, fs in result.schedule.items()}
    assert firings["b"] == [(1, 2), (2, 3)]
    # a loop whose every phase gives back what it took holds its tokens at most
    h = SDFGraph("loop")
    h.add_actor("a", exec=1)
    h.add_actor("b", exec=Phases([1, 1]))
    h.add_channel("a", "b", "ab", prod=1, cons=Phases([1, 1]))
    h.add_channel("b", "b", "bb", prod=Phases([1, 2]), cons=Phases([1, 2]), delay=2)
    assert analyse(h).buffers["bb"] == 2
