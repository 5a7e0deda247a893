"""The buffer maxima and first iteration from the firings' precedences (moc.occupancy,
issue 42) against the state space of moc.self_timed and the precedences of one
iteration (moc.self_timed.first_iteration, moc.csdf.first_iteration), on random SDF
graphs (several paces, self-loops, channels that grow without bound) and random
cyclo-static rings, every firing taking at least one time unit."""
from __future__ import annotations

import math
from contextlib import contextmanager
from fractions import Fraction

from hypothesis import HealthCheck, assume, event, given, settings, strategies as st

from moc import SDFGraph
from moc.csdf import first_iteration as phased_first
from moc.errors import DeadlockError
from moc import howard_exact, iteration_program, occupancy
from moc.occupancy import self_timed_occupancy
from moc.phases import Phases, cyclo_static
from moc.self_timed import first_iteration, simulate
from moc.timing import analyse, prepared, self_timed_period
from tests.test_csdf_buffers import crowded_rings, rings
from tests.dataflow_graphs import cyclo_static_ring
from tests.test_moc_timing import live_graphs


def _at_least_one(t):
    """A firing time raised to at least 1 (a zero time is the state space's)."""
    return Phases(max(1, x) for x in t) if isinstance(t, tuple) else max(1, t)


@contextmanager
def on_arrays():
    """Every graph's iterations on numpy arrays, however small (``small`` graphs are
    otherwise on Python lists: ``moc.howard_exact.on_lists``)."""
    saved = howard_exact.SMALL_LISTS, howard_exact.LOADED_LISTS
    howard_exact.SMALL_LISTS = howard_exact.LOADED_LISTS = -1
    try:
        yield
    finally:
        howard_exact.SMALL_LISTS, howard_exact.LOADED_LISTS = saved


def _compare(g, zero_times=False):
    """The occupancy's maxima, first iteration and repetition against the state space
    and the precedences; without ``zero_times`` every firing time raised to 1."""
    g, durations, q, _ = prepared(g)
    if not zero_times:
        durations = {a: _at_least_one(t) for a, t in durations.items()}
    try:
        pace = self_timed_period(g, durations, q).actor_periods
    except DeadlockError:
        assume(False)
    assume(all(pace[a] > 0 for a in g.actors))
    growing = {ch.name for ch in g.channels.values() if pace[ch.src] < pace[ch.dst]}
    event(f"growing channels: {bool(growing)}")
    found = self_timed_occupancy(g, durations, q, pace, growing)
    assert found is not None
    run = simulate(g, durations, q, growing, record=False)
    assert dict(found.buffers) == dict(run.buffers)
    assert {c for c, n in found.buffers.items() if n == math.inf} == growing
    precedences = {} if cyclo_static(g) else first_iteration(g, durations, q)
    expected = phased_first(g, durations, q) if cyclo_static(g) else \
        {a: tuple((f.start, f.end) for f in fs) for a, fs in precedences.items()}
    assert dict(found.first) == expected
    # the same firings on numpy arrays (a small graph's are on Python lists): as the
    # program gives them, computed a level of precedences at a time, an actor's blocks
    # of firings as chains of running maxima wherever they may be, and those computed
    # one by one listed a firing at a time
    with on_arrays():
        assert _summary(self_timed_occupancy(g, durations, q, pace, growing)) == \
            _summary(found)
        if not cyclo_static(g):
            assert first_iteration(g, durations, q) == precedences
        for name in ("WIDE_LEVELS", "CHAIN", "LISTED"):
            before = getattr(iteration_program, name)
            setattr(iteration_program, name, 0 if name == "WIDE_LEVELS" else 1)
            try:
                other = self_timed_occupancy(g, durations, q, pace, growing)
            finally:
                setattr(iteration_program, name, before)
            assert _summary(other) == _summary(found)
    # the execution repeats after a whole number of time units: the cyclicity is a
    # multiple of the paces' denominators (the times are whole numbers here), so it is
    # refused at once where that needs more than the limit firings, as the computed
    # iterations would have been
    least = math.lcm(*(Fraction(pace[a]).denominator for a in g.actors))
    event(f"least cyclicity > 1: {least > 1}")
    assert found.cyclicity % least == 0
    total = sum(q.values())
    for iterations in range(3, 12, 2):
        limited = self_timed_occupancy(g, durations, q, pace, growing,
                                       max_firings=iterations * total)
        least, occupancy._least_cyclicity = occupancy._least_cyclicity, lambda *_: 0
        try:
            computed = self_timed_occupancy(g, durations, q, pace, growing,
                                            max_firings=iterations * total)
        finally:
            occupancy._least_cyclicity = least
        assert _summary(limited) == _summary(computed)


def _summary(found):
    return found and (dict(found.buffers), dict(found.first), found.transient,
                      found.cyclicity, found.iterations)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(live_graphs())
def test_sdf_maxima_and_first_iteration_equal_the_state_space(g):
    _compare(g)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rings())
def test_cyclo_static_maxima_and_first_iteration_equal_the_state_space(g):
    _compare(g)


@st.composite
def rings_of_instants(draw):
    """As :func:`tests.test_csdf_buffers.rings`, with phase times 0-2: firings of time
    0 in chains within an instant."""
    return cyclo_static_ring(draw, st, lambda i, j, wi, wj: wi * wj + draw(
        st.integers(0, 3)) if j <= i else 0, min_time=0, max_time=2)


@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(st.one_of(live_graphs(), rings_of_instants()))
def test_maxima_with_firings_of_time_0_equal_the_state_space(g):
    """Firings of time 0 end at the next step of their instant, where the state space
    sees them: the maxima read between the steps equal its peaks."""
    event(f"a time 0: {_has_zero_time(g)}")
    _compare(g, zero_times=True)


def test_a_token_read_at_step_0_of_an_instant_leaves_room_for_one_written_at_step_1():
    """``a`` (time 1) writes one token to ``b`` (time 0) and one to ``c`` (time 1);
    ``b`` writes to ``c`` on ``bc``, which holds 1 token at first; ``c`` writes back
    to ``a`` on ``ca`` (1 token).  At ``t = 1, 3, 5, ...``: step 0, ``a``'s firing
    ends and ``b`` and ``c`` start, ``c`` reading ``bc``'s token (``bc`` 0); step 1,
    ``b`` ends and writes one (``bc`` 1).  So ``bc`` never holds more than 1 token.
    Read at the instant as a whole (ends, then starts), ``b``'s end and ``c``'s start
    fall at one time and ``bc`` would show 2."""
    g = SDFGraph("instants")
    for name, t in (("a", 1), ("b", 0), ("c", 1)):
        g.add_actor(name, exec=t)
    g.add_channel("a", "b", "ab", prod=1, cons=1)
    g.add_channel("a", "c", "ac", prod=1, cons=1)
    g.add_channel("b", "c", "bc", prod=1, cons=1, delay=1)
    g.add_channel("c", "a", "ca", prod=1, cons=1, delay=1)
    g, durations, q, _ = prepared(g)
    pace = self_timed_period(g, durations, q).actor_periods
    assert dict(pace) == {"a": 2, "b": 2, "c": 2}
    found = self_timed_occupancy(g, durations, q, pace)
    assert dict(found.buffers) == {"ab": 1, "ac": 1, "bc": 1, "ca": 1}
    assert dict(found.buffers) == dict(simulate(g, durations, q, record=False).buffers)
    assert dict(found.first) == {"a": ((0, 1),), "b": ((1, 1),), "c": ((1, 2),)}


def test_an_instant_of_more_steps_than_its_keys_hold_is_computed_again(monkeypatch):
    """A ring of ``a`` (time 1) and five actors of time 0: each instant holds six
    steps.  Keys of two steps an instant are crowded at once, then of four; sixteen
    hold them, and the maxima are the state space's.  ``skip`` goes from ``a`` to the
    last of them."""
    g = SDFGraph("cascade")
    names = ["a", "z1", "z2", "z3", "z4", "z5"]
    for name in names:
        g.add_actor(name, exec=1 if name == "a" else 0)
    for k, (x, y) in enumerate(zip(names, names[1:] + names[:1])):
        g.add_channel(x, y, f"c{k}", prod=1, cons=1, delay=2 if y == "a" else 0)
    g.add_channel("a", "z5", "skip", prod=1, cons=1, delay=1)
    g, durations, q, _ = prepared(g)
    pace = self_timed_period(g, durations, q).actor_periods
    units, setup = [], occupancy._setup

    def spied(*args):
        found = setup(*args)
        units.append(found[3])
        return found
    monkeypatch.setattr(occupancy, "STEPS", 2)
    monkeypatch.setattr(occupancy, "_setup", spied)
    found = self_timed_occupancy(g, durations, q, pace)
    assert units == [2, 4, 16]
    assert dict(found.buffers) == dict(simulate(g, durations, q, record=False).buffers)
    # two firings of ``a`` (the ring's two tokens) end at step 0 of instant 1, beside
    # ``skip``'s token; ``z5`` reads them at step 4
    assert found.buffers["skip"] == 3


def _has_zero_time(g):
    return any(0 in (t if isinstance(t, tuple) else (t,))
               for t in prepared(g)[1].values())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rings())
def test_channels_alike_share_their_waits_and_hold_alike(g):
    """Every channel doubled by a copy of the same rates and tokens: the program computes
    the waits once per kind of channel, and each copy holds what its original holds (the
    maxima still those of the state space)."""
    for ch in list(g.channels.values()):
        g.add_channel(ch.src, ch.dst, ch.name + "_copy", prod=ch.prod, cons=ch.cons,
                      delay=ch.delay)
    _compare(g)
    g, durations, q, _ = prepared(g)
    durations = {a: _at_least_one(t) for a, t in durations.items()}
    pace = self_timed_period(g, durations, q).actor_periods
    found = self_timed_occupancy(g, durations, q, pace)
    assume(found is not None)
    assert all(found.buffers[c + "_copy"] == found.buffers[c]
               for c in g.channels if not c.endswith("_copy"))


@given(st.integers(2, 9))
@settings(max_examples=8, deadline=None)
def test_a_slow_consumer_holds_the_tokens_of_a_fast_producer(n):
    """a (time 1, one at a time) feeds b (time n, one at a time): ``ab`` grows without
    bound, ``inf``; the self-loops hold their one token."""
    g = SDFGraph("pair")
    g.add_actor("a", exec=1)
    g.add_actor("b", exec=n)
    g.add_channel("a", "a", "aa", delay=1)
    g.add_channel("b", "b", "bb", delay=1)
    g.add_channel("a", "b", "ab")
    result = analyse(g)
    assert "precedences" in result.method
    assert dict(result.buffers) == {"aa": 1, "bb": 1, "ab": math.inf}


def test_a_hand_worked_cycle():
    """a (time 2) writes 2 tokens per firing to b (time 3), which reads 3 and writes 3
    back; 6 tokens start on the way back.  a fires at 0, 0, 0 (3·2 = 6 read), ends at 2
    and writes 6; b fires twice at 2, ends at 5 and writes 6 back; a fires thrice at 5:
    the execution repeats every 5 with ``ab`` holding at most 6 and ``ba`` 6."""
    g = SDFGraph("cycle")
    g.add_actor("a", exec=2)
    g.add_actor("b", exec=3)
    g.add_channel("a", "b", "ab", prod=2, cons=3)
    g.add_channel("b", "a", "ba", prod=3, cons=2, delay=6)
    result = analyse(g)
    assert result.period == 5 and "precedences" in result.method
    assert dict(result.buffers) == {"ab": 6, "ba": 6}


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rings(), st.sampled_from(["ends", "starts"]),
       st.sampled_from([{}, {"WIDE_LEVELS": 0}, {"CHAIN": 1}, {"LISTED": 1}]))
def test_the_first_iteration_in_either_order_equals_its_precedences(g, order, forced):
    """The program run once (firing by firing, a level at a time, or an actor's blocks
    as chains), under either order of a cyclo-static actor's firings, gives the longest
    paths over one iteration's precedences (moc.csdf.first_iteration)."""
    g, durations, q, _ = prepared(g)
    try:
        self_timed_period(g, durations, q)
    except DeadlockError:
        assume(False)
    saved = {name: getattr(iteration_program, name) for name in forced}
    for name, value in forced.items():
        setattr(iteration_program, name, value)
    try:
        with on_arrays():
            found = occupancy.first_iteration(g, durations, q, order)
    finally:
        for name, value in saved.items():
            setattr(iteration_program, name, value)
    expected = phased_first(g, durations, q, order)
    assert dict(found) == expected
    # a small graph's on Python lists
    assert dict(occupancy.first_iteration(g, durations, q, order)) == expected


def test_the_first_iteration_under_kiter_s_order():
    """examples/csdf/orders.sdf: a's phases (5, 1) start together at 0, the second ends
    at 1 (Kiter's order) and b runs 1 - 2; in SDF3's order the second ends with the
    first at 5 and b runs 5 - 6."""
    g = SDFGraph("orders")
    g.add_actor("a", exec=Phases([5, 1]))
    g.add_actor("b", exec=1)
    g.add_channel("a", "b", "ab", prod=Phases([0, 1]), cons=1)
    g.add_channel("b", "a", "ba", prod=1, cons=Phases([1, 0]), delay=1)
    g, durations, q, _ = prepared(g)
    assert dict(occupancy.first_iteration(g, durations, q, "starts")) == \
        {"a": ((0, 5), (0, 1)), "b": ((1, 2),)}
    assert dict(occupancy.first_iteration(g, durations, q, "ends")) == \
        {"a": ((0, 5), (0, 5)), "b": ((5, 6),)}


def test_a_block_on_a_self_loop_of_one_token_is_computed_at_once(monkeypatch):
    """a (phases 1, 3) fires 40 times an iteration, each firing after the one before
    (a self-loop of one token), the first after c's (time 30, all at once): firing
    j < 19 starts at 30 + 4·(j // 2) + j % 2; a#19 waits for d#19 (time 100, all of d
    start at 0), and from there j starts at 100 + 4·((j - 19) // 2) + 3·((j - 19) % 2);
    b (40 tokens from a) runs 143 - 144, after a#39 (140 - 143).  a's block is one
    chain (as c's and d's, which wait for none of their own), a running maximum over
    its prefix sums."""
    g = SDFGraph("looped")
    g.add_actor("a", exec=Phases([1, 3]))
    g.add_actor("b", exec=1)
    g.add_actor("c", exec=30)
    g.add_actor("d", exec=Phases([1] * 19 + [100]))
    g.add_channel("a", "a", "aa", delay=1)
    g.add_channel("c", "a", "ca")
    g.add_channel("a", "b", "ab", cons=40)
    g.add_channel("d", "a", "da", prod=Phases([1] * 20), cons=Phases([1, 1]))
    g, durations, q, _ = prepared(g)
    assert q == {"a": 40, "b": 1, "c": 40, "d": 40}
    chains = []
    chain = iteration_program._chain
    monkeypatch.setattr(iteration_program, "_chain",
                        lambda part, *a, **k: chains.append(part[5]) or chain(part, *a, **k))
    with on_arrays():
        found = occupancy.first_iteration(g, durations, q)
    assert chains == [False, False, True]          # c's and d's, then a's
    starts = [s for s, _ in found["a"]]
    assert starts == [30 + 4 * (j // 2) + j % 2 for j in range(19)] + \
        [100 + 4 * ((j - 19) // 2) + 3 * ((j - 19) % 2) for j in range(19, 40)]
    assert found["b"] == ((143, 144),)
    assert dict(found) == phased_first(g, durations, q)


def _guessed(g, shift, rounds):
    """Starts, ends and growing-set places of iterations 0-4 of ``g`` from the
    program with iterations 1-4 guessed (``shift`` per place), corrected within
    ``rounds`` rounds, and how many guesses were kept."""
    g, durations, q, _ = prepared(g)
    growing = {"ab"}
    actors, _, _, _ = occupancy._setup(g, durations, q, growing)
    total = sum(q.values())
    guessed, iteration_program.GUESSED = iteration_program.GUESSED, 0
    try:
        program, levels, back = iteration_program.iteration_program(actors, total)
    finally:
        iteration_program.GUESSED = guessed
    assert levels is None and type(program[-1]) is iteration_program._Whole
    S, E = (occupancy.array("q", [0]) * (back * total) for _ in range(2))
    kept = []
    solved = iteration_program._Whole.guessed
    before = iteration_program.ROUNDS, iteration_program.MISSED
    # any share of the firings missed is corrected
    iteration_program.ROUNDS, iteration_program.MISSED = rounds, 1
    iteration_program._Whole.guessed = lambda *a: kept.append(solved(*a)) or kept[-1]
    try:
        held = iteration_program.run_program(program, S, E, back, back + 5, total,
                                             shift=shift, since=back)
    finally:
        iteration_program.ROUNDS, iteration_program.MISSED = before
        iteration_program._Whole.guessed = solved
    return list(S)[back * total:], list(E)[back * total:], sorted(held), \
        sum(k is not None for k in kept)


def test_a_guessed_iteration_is_corrected_to_the_precedences():
    """a (time 1) feeds b (time 3), each one firing at a time (self-loops of one
    token): a#k runs k to k + 1, b#k from 3k + 1 (a#0's end, then b's own) to
    3k + 4, b#0's start set by the growing channel ab.  Iterations 1-4 guessed as the
    one before moved by the paces (1, 3) meet their precedences at once; moved by
    (1, 1), b's firing is wrong and corrected in one round (nothing of its iteration
    waits for it), or, without a round, computed by the program."""
    g = SDFGraph("guessed")
    g.add_actor("a", exec=1)
    g.add_actor("b", exec=3)
    g.add_channel("a", "a", "aa", delay=1)
    g.add_channel("b", "b", "bb", delay=1)
    g.add_channel("a", "b", "ab")
    starts = [x for k in range(5) for x in (k, 3 * k + 1)]
    ends = [x for k in range(5) for x in (k + 1, 3 * k + 4)]
    import numpy as np
    for shift, rounds, kept in (((1, 3), 0, 4), ((1, 1), 1, 4), ((1, 1), 0, 0)):
        S, E, held, n = _guessed(g, np.array(shift), rounds)
        assert (S, E, n) == (starts, ends, kept)
        assert held == [1 + 2]                  # b#0, after the iteration of zeros


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rings(), st.sampled_from([0, 2, 16]), st.sampled_from([1, 64]))
def test_guessed_iterations_equal_the_state_space(g, rounds, missed):
    """Iterations guessed from the ones before (moved by the paces) and corrected
    within ``rounds`` rounds (where they miss at most one firing in ``missed``), else
    computed by the program: the same maxima and first iteration as the state space."""
    solved = iteration_program._Whole.guessed
    outcomes = []

    def counted(self, *a):
        found = solved(self, *a)
        outcomes.append(found is not None)
        return found
    before = iteration_program.ROUNDS, iteration_program.GUESSED, iteration_program.MISSED
    iteration_program.ROUNDS, iteration_program.GUESSED = rounds, 0
    iteration_program.MISSED = missed
    iteration_program._Whole.guessed = counted
    try:
        _compare(g)
    finally:
        iteration_program.ROUNDS, iteration_program.GUESSED, \
            iteration_program.MISSED = before
        iteration_program._Whole.guessed = solved
    event(f"guesses kept: {any(outcomes)}, refused: {not all(outcomes)}")


def _analysed(g):
    """What ``analyse`` gives of ``g``: throughput, latency, buffers, the first
    iteration's firings and the method."""
    try:
        result = analyse(g)
    except DeadlockError:
        return "deadlock"
    return (result.period, result.latency, result.buffers and dict(result.buffers),
            result.schedule and {a: tuple(fs) for a, fs in result.schedule.items()},
            result.method)


@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(st.one_of(live_graphs(), rings(), crowded_rings()))
def test_a_small_graph_on_lists_is_analysed_as_on_arrays(g):
    """The default analysis (K-periodic throughput, the first iteration's schedule and
    latency, the buffer maxima) of a small SDF or cyclo-static graph on Python lists
    (``moc.occupancy_lists``, ``moc.self_timed``'s block on lists) equals that of the
    same graph on numpy arrays, zero firing times (the state space) included."""
    found = _analysed(g)
    with on_arrays():
        assert _analysed(g) == found
