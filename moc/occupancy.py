"""Buffer maxima of the self-timed execution from the times of its firings, computed
iteration after iteration from the precedences until the execution repeats.

The execution is that of :mod:`moc.self_timed` (a firing consumes at its start and
produces at its end; a cyclo-static actor's firings start and end in order).  Firing
``ν`` of ``b`` starts at the latest end of the producer firings ``w(ν)`` that write the
tokens it reads (``w`` the least with ``M0 + P(w + 1) ≥ C(ν + 1)``, :mod:`moc.csdf`),
of its own earlier firings on a self-loop, and not before its previous firing (Sriram
& Bhattacharyya, *Embedded Multiprocessors*, ch. 3, for the precedences).  The firings
of one iteration are put once in an order that the tokens allow (an actor's firings a
block at a time, as many as its producers have written for), with the places of the
firings each waits for; every iteration replays that order, since an iteration's
firings wait only for firings of the same or earlier iterations.  Where that order's
precedences form wide levels (each firing one level above the highest of the same
iteration it waits for), an iteration is computed a level at a time; elsewhere an
actor's block of firings that waits for none of its own (or each for the one before
only) is computed at once, its starts and ends running maxima, and the others one by one
(:mod:`moc.iteration_program`).

The execution of a live graph becomes periodic (max-plus cyclicity: Baccelli, Cohen,
Olsder & Quadrat, *Synchronization and Linearity*, 1992, ch. 3): from some iteration
``m`` on, firing ``ν + c·q(a)`` of every actor ``a`` starts and ends ``c·λ(a)`` after
firing ``ν``, with ``λ(a)`` the period of ``a`` (its K-periodic pace).  Once the firings
that the later ones depend on (``L(a)`` firings back from iteration ``m``) repeat so,
and in the first period no faster producer of a growing channel was the one a firing
waited for, every later firing repeats (induction over the precedences), so the
tokens a channel holds at ``t + c·λ`` equal those at ``t`` past the transient.  A
channel's maximum is then its largest value at the ends of its producer's firings up
to one period past the transient: the same numbers as the state space of
:func:`moc.self_timed.simulate`, without visiting every instant.
"""
from __future__ import annotations

import math
from fractions import Fraction
from array import array
from functools import partial
from math import lcm
from bisect import bisect_left
from collections.abc import Collection, Mapping

from moc import limits
from moc import occupancy_lists as lists
from moc.exact_times import ticks
from moc.graph import SDFGraph
from moc.howard_exact import on_lists
from moc.phases import Cumulative, phase_counts, phase_value
from moc.record import record
from moc.self_timed import PROGRESS_STEP

#: iterations computed at first; doubled until the execution repeats
FIRST_ITERATIONS = 3


@record
class Occupancy:
    """``buffers``: per channel the most tokens it holds (``math.inf`` on a growing
    channel); ``first``: per actor the ``(start, end)`` of its firings of the first
    iteration; ``transient`` and ``cyclicity``: the execution repeats every
    ``cyclicity`` iterations from iteration ``transient`` on; ``iterations``: how many
    were computed."""

    buffers: Mapping[str, object]
    first: Mapping[str, tuple]
    transient: int
    cyclicity: int
    iterations: int


class _Actor:
    __slots__ = ("name", "q", "n", "d", "phased", "ins", "outs", "pos", "reach")


class _Input:
    __slots__ = ("src", "delay", "made", "read", "cons", "growing", "name")


def self_timed_occupancy(graph: SDFGraph, durations: Mapping[str, object],
                         q: Mapping[str, int], pace: Mapping[str, object],
                         growing: Collection[str] = (), max_firings: int | None = None,
                         progress=None, far: int | None = None) -> Occupancy | None:
    """The buffer maxima of the self-timed execution of the bound, consistent, live
    ``graph`` (see the module docstring), or None where this method does not apply:
    times too large for 64-bit integers, or no repetition within ``max_firings``
    (``moc.limits.MAX_FIRINGS``) computed firings (known before computing any where
    the least cyclicity that the paces allow, :func:`_least_cyclicity`, needs more).
    ``pace``: per actor its period per iteration (positive);
    ``growing``: the channels whose producer is faster than their consumer.
    ``progress(n)``: n more firings computed, in steps of ``PROGRESS_STEP``.
    ``far``: None also where a firing waits for more than ``FIRST_ITERATIONS``
    iterations back (a channel with room for many iterations' tokens), so many that the
    iterations to compute before the
    repetition can be proven (the firings from the transient on must repeat over that
    many iterations) pass ``far`` firings, where a state space may see it sooner.
    Where firings take time 0 the times carry the step of their instant
    (:func:`moc.occupancy_lists.ended`), as the state space orders an instant's
    events: a channel's tokens are then read between those steps."""
    max_firings = limits.MAX_FIRINGS if max_firings is None else max_firings
    if any(pace[a] <= 0 for a in graph.actors):
        return None
    unit = None
    while True:
        found = _setup(graph, durations, q, growing, unit)
        if found is None:
            return None
        result = _occupancy(graph, q, pace, found, max_firings, progress, far)
        if result is not _CROWDED:
            return result
        unit = found[3] ** 2


#: the steps an instant holds at first where some firing takes time 0
#: (:func:`moc.occupancy_lists.ended`); squared while an instant holds more
STEPS = 1 << 8
#: what :func:`_occupancy` returns where an instant held more steps than its keys
_CROWDED = object()


def _occupancy(graph, q, pace, found, max_firings, progress, far):
    """:func:`self_timed_occupancy` with its firings' times as :func:`_setup` ``found``
    them; :data:`_CROWDED` where an instant held more steps than their keys."""
    actors, scale, span, unit = found
    total = sum(q.values())
    least = max(-(-x.reach // x.q) for x in actors.values())
    reaching = least > FIRST_ITERATIONS and (2 * least + 2) * total > (far or math.inf)
    if FIRST_ITERATIONS * total > max_firings or reaching or \
            (_least_cyclicity(actors, pace, scale) + least + 1) * total > max_firings:
        return None
    layout = _Layout(actors, pace, scale, unit)
    # a small graph's iterations on Python lists (:mod:`moc.occupancy_lists`)
    small = on_lists(FIRST_ITERATIONS * total)
    found = lists.program(actors, total, unit - 1) if small else \
        _program(actors, total, layout.paces, unit)
    if found is None:
        return None
    run, back = found
    iterations, done = max(FIRST_ITERATIONS, 2 * least + 2), 0
    S, E = array("q", [0]) * (back * total), array("q", [0]) * (back * total)
    held, told = [], 0
    # an iteration moves a firing's time on by its actor's period: at least this much
    fastest = min(Fraction(pace[a]) for a in actors) * scale * unit
    while iterations * total <= max_firings and span * iterations < 2 ** 62:
        held += run(S, E, back + done, back + iterations)
        if _crowded(S, E, unit - 1, small):
            return _CROWDED
        if progress is not None:
            told = _tell(progress, (iterations - done) * total + told)
        S2, E2, last = lists.collect(S, E, held, back, iterations, total, layout) \
            if small else _collect(S, E, held, back, iterations, total, layout)
        done = iterations
        found = _repetition(S2, E2, last, layout, small)
        if found is not None:
            m, c, settled, shift = found
            buffers, short = _maxima(graph, actors, S2, E2, settled, shift, small)
            if buffers is not None:
                return _result(actors, S2, E2, buffers, scale, m, c, iterations, unit)
        del S2, E2                        # views of S and E, which grow next
        iterations += max(2, iterations // 2) if found is None else \
            int(math.ceil(short / fastest)) + 1
    return None


def _crowded(S, E, low, small):
    """Whether a key of ``S`` or ``E`` reached the last step its instant holds
    (:func:`moc.occupancy_lists.ended`; ``low`` 0: plain times): one step more would
    have carried into the time."""
    if not low:
        return False
    if small:
        return any(v & low == low for T in (S, E) for v in T)
    import numpy as np
    return any(bool(((np.frombuffer(T, dtype=np.int64) & low) == low).any())
               for T in (S, E))


def _program(actors, total, paces=None, unit=1):
    """``(run, back)``: :func:`moc.iteration_program.iteration_program`'s program of
    one iteration as ``run(S, E, first, last, in_order=True)`` (run by levels or by
    its program; the latter guesses iterations as the ones before moved by the
    ``paces``, per actor ``(n, d)`` in time ticks, where those are whole), its times
    keys of ``unit`` steps an instant (:func:`moc.occupancy_lists.ended`), and how
    many iterations back it reaches; None where one iteration cannot complete."""
    import numpy as np
    from moc.iteration_program import iteration_program, run_levels, run_program
    found = iteration_program(actors, total, unit - 1)
    if found is None:
        return None
    program, levels, back = found
    if levels is not None:
        return partial(run_levels, levels, total=total, low=unit - 1), back
    # past the transient an iteration is the one before moved by the periods
    moved = None if paces is None or any(d > 1 for _, d in paces) else np.repeat(
        np.array([n * unit for n, _ in paces], dtype=np.int64),
        [x.q for x in actors.values()])
    return partial(run_program, program, total=total, shift=moved, since=back,
                   low=unit - 1), back


def _setup(graph, durations, q, growing, unit=None):
    """``(actors, scale, span, unit)``: per actor its places, times and inputs, and a
    bound on one iteration's time (a firing ends by the sum of the firing times before
    it); None where a time is negative or a channel moves no tokens.  Times are in
    units of ``1/scale``, as keys of ``unit`` steps an instant where ``unit`` > 1
    (:func:`moc.occupancy_lists.ended`): ``unit`` None gives 1 where no firing takes
    time 0, else :data:`STEPS`; 1 with firings of time 0 (the first iteration alone)
    gives their plain times, which a buffer's maximum cannot be read from."""
    counts = phase_counts(graph)
    phase_times = {a: [phase_value(durations[a], k) for k in range(counts[a])]
                   for a in graph.actors}
    if any(t < 0 for ts in phase_times.values() for t in ts):
        return None
    scale, phase_ticks = ticks(phase_times)
    if unit is None:
        unit = STEPS if any(0 in ts for ts in phase_ticks.values()) else 1
    if unit > 1:
        phase_ticks = {a: [t * unit if t else 1 for t in ts]
                       for a, ts in phase_ticks.items()}
    actors, pos = {}, 0
    for a in graph.actors:
        x = _Actor()
        x.name, x.q, x.n = a, q[a], counts[a]
        x.d = tuple(phase_ticks[a])
        x.phased = x.n > 1
        x.ins, x.outs, x.pos, x.reach = [], [], pos, 1
        pos += x.q
        actors[a] = x
    # one object per distinct pattern: channels alike share their counts, and
    # :func:`moc.iteration_program.iteration_program` their waits
    shared = {}

    def pattern(value, n):
        key = (value, n)
        if key not in shared:
            shared[key] = (Cumulative(value, n),
                           tuple(phase_value(value, k) for k in range(n)))
        return shared[key]
    for ch in graph.channels.values():
        i = _Input()
        i.src, i.delay, i.name = ch.src, ch.delay, ch.name
        i.made = pattern(ch.prod, counts[ch.src])[0]
        i.read, i.cons = pattern(ch.cons, counts[ch.dst])
        i.growing = ch.name in growing
        if i.made.total <= 0 or i.read.total <= 0:
            return None
        actors[ch.dst].ins.append(i)
        if ch.src != ch.dst:
            actors[ch.src].outs.append(ch.dst)
        consuming = [k for k, c in enumerate(i.cons) if c]
        if consuming:
            # the earliest producer firing that firings of the consumer wait for
            first = consuming[0]
            back = -i.made.writer(i.read(first + 1) - ch.delay)
            actors[ch.src].reach = max(actors[ch.src].reach, back)
    return actors, scale, sum(sum(x.d) * (x.q // x.n + 1) for x in actors.values()), unit


def first_iteration(graph: SDFGraph, durations: Mapping[str, object],
                    q: Mapping[str, int], order: str = "ends") -> Mapping | None:
    """Per actor the ``(start, end)`` of its firings of the first iteration of the
    self-timed execution of the live ``graph``, its firings in ``order``
    (:data:`moc.csdf_kperiodic.ORDERS`): :func:`self_timed_occupancy`'s program run
    once, firings of time 0 included (one iteration needs no pace; seed 46's g0025 of
    SDF3's generator, 738,399 firings: 0.6 s where the expansion took 34 s).  None where
    times pass 64-bit integers."""
    found = _setup(graph, durations, q, (), unit=1)
    if found is None:
        return None
    actors, scale, span, _ = found
    if span >= 2 ** 62:
        return None
    total = sum(q.values())
    small = on_lists(total)
    found = lists.program(actors, total) if small else _program(actors, total)
    if found is None:
        return None
    run, back = found
    S, E = array("q", [0]) * (back * total), array("q", [0]) * (back * total)
    run(S, E, back, back + 1, in_order=order == "ends")
    starts, ends = (T[back * total:].tolist() for T in (S, E)) if small else \
        (_view(T, back * total).copy() for T in (S, E))
    return _First({a: (x.pos, x.pos + x.q) for a, x in actors.items()}, starts, ends, scale)


def _least_cyclicity(actors, pace, scale):
    """The least cyclicity the execution can show: in integer time a repetition every
    ``c`` iterations moves firing ``ν`` of ``a`` by ``c·λ(a)·scale``, a whole number,
    so ``c`` is a multiple of the lcm of the denominators of ``λ(a)·scale``; seeing it
    from iteration ``m ≥ least`` on takes ``c + least + 1`` iterations
    (:func:`_repetition`)."""
    return lcm(*((Fraction(pace[a]) * scale).denominator for a in actors))


def _tell(progress, firings):
    """Report ``firings`` in steps of ``PROGRESS_STEP``; what is left to report."""
    for _ in range(firings // PROGRESS_STEP):
        progress(PROGRESS_STEP)
    return firings % PROGRESS_STEP


def _collect(S, E, held, back, iterations, total, layout):
    """The starts and ends of the computed iterations as ``(iterations, total)``
    matrices (row ``it``, column ``pos(a) + r``: firing ``it·q(a) + r`` of ``a``), views
    of ``S`` and ``E`` to be dropped before those grow, and per actor the last of its
    firings whose start a growing channel set (-1 if none)."""
    import numpy as np
    times, ends = (_view(T, back * total).reshape(iterations, total) for T in (S, E))
    flags = np.zeros(iterations * total, dtype=bool)
    flags[np.asarray(held, dtype=np.int64) - back * total] = True
    return times, ends, _last(flags.reshape(iterations, total), layout).tolist()


def _view(T, first):
    """A numpy view of ``T`` (``array("q")``) from place ``first`` on."""
    import numpy as np
    return np.frombuffer(T, dtype=np.int64)[first:]


class _Layout:
    """Per actor (in order) its first column, firings per iteration, reach and period
    in the integer time (``(numerator, denominator)``), as lists; the least iteration
    from which a repetition may be seen; and for the arrays (:meth:`arrays`) per
    column its actor's values."""

    def __init__(self, actors, pace, scale, unit=1):
        xs = list(actors.values())
        self.unit = unit
        self.paces = [(p.numerator, p.denominator)
                      for p in (Fraction(pace[x.name]) * scale for x in xs)]
        self.pos = [x.pos for x in xs]
        self.q = [x.q for x in xs]
        self.reach = [x.reach for x in xs]
        self.least = max(-(-r // q) for r, q in zip(self.reach, self.q))
        self._arrays = None

    def arrays(self):
        """``(pos, q, col_q, col_r)`` as numpy arrays: per actor its first column and
        firings per iteration, per column its actor's firings per iteration and its
        firing's rank in the iteration."""
        if self._arrays is None:
            import numpy as np
            pos, q = (np.array(v, dtype=np.int64) for v in (self.pos, self.q))
            self._arrays = (pos, q, np.repeat(q, q),
                            np.arange(int(q.sum()), dtype=np.int64) - np.repeat(pos, q))
        return self._arrays


def _last(flags, layout):
    """Per actor the last firing (``it·q + r``) whose flag is set, -1 if none."""
    import numpy as np
    pos, _, col_q, col_r = layout.arrays()
    rows = flags.shape[0]
    anywhere = flags.any(axis=0)
    row = rows - 1 - np.argmax(flags[::-1], axis=0)
    nu = np.where(anywhere, row * col_q + col_r, -1)
    return np.maximum.reduceat(nu, pos)


def _repetition(S2, E2, held, layout, small=False):
    """``(m, c, settled, shift)``: the least cyclicity ``c`` for which the computed
    firings show the execution repeating every ``c`` iterations from iteration ``m`` on
    (see the module docstring), per actor the time from which its firings repeat and
    the time ``c·λ`` they repeat after; None if none shows.  ``held``: per actor the
    last firing whose start a growing channel set.  ``S2`` and ``E2``: numpy matrices,
    or with ``small`` lists of rows (:mod:`moc.occupancy_lists`)."""
    if not small:
        import numpy as np
    iterations = len(S2)
    if not (lists.ordered(S2, E2, layout) if small else _ordered(S2, E2, layout)):
        return None
    # a cyclicity c repeats the last iteration's steps c iterations earlier: comparing
    # those two rows rules the other c out before the exact test
    last = [lists.steps(T, iterations - 2) if small else T[-1] - T[-2] for T in (S2, E2)]
    for c in range(1, min(iterations - layout.least, iterations - 1)):
        k = iterations - 2 - c
        if any(c * n % d for n, d in layout.paces):
            continue
        if small:
            if lists.steps(S2, k) != last[0] or lists.steps(E2, k) != last[1]:
                continue
        elif not all(np.array_equal(T[k + 1] - T[k], step)
                     for T, step in zip((S2, E2), last)):
            continue
        shift = [c * n // d * layout.unit for n, d in layout.paces]
        late = lists.late(S2, E2, layout, c, shift) if small else \
            _late(S2, E2, layout, c, shift)
        m = max(layout.least, *(-(-(v + 1 + r) // q) for v, r, q in
                                zip(late, layout.reach, layout.q)),
                *(h // q + 1 for h, q in zip(held, layout.q)))
        if m + c > iterations:
            continue
        return m, c, _settled(S2, E2, layout, m, c, shift), shift
    return None


def _settled(S2, E2, layout, m, c, shift):
    """Per actor the time from which its firings repeat (:func:`_repetition`): past
    the end of the last firing of a period from iteration ``m`` (less the move) and the
    start of the one after it, and past those of the last firing before the ones
    the later firings depend on (``L(a)`` back from iteration ``m``); ``T[row][col]``
    reads a list of rows and a numpy matrix alike."""
    settled = []
    for a, (pos, q, r) in enumerate(zip(layout.pos, layout.q, layout.reach)):
        v, at = m * q - r, 0
        for T, strict in ((E2, 0), (S2, 1)):
            later = v + c * q - 1
            at = max(at, int(T[later // q][pos + later % q]) + strict - shift[a])
            if v > 0:
                at = max(at, int(T[(v - 1) // q][pos + (v - 1) % q]) + strict)
        settled.append(at)
    return settled


def _ordered(S2, E2, layout):
    """Whether every actor's firings start and end in order (numpy matrices)."""
    import numpy as np
    pos, q, _, _ = layout.arrays()
    inner = np.ones(S2.shape[1] - 1, dtype=bool)
    inner[pos[1:] - 1] = False
    firsts, lasts = pos, pos + q - 1
    return not any(np.any((T[:, 1:] < T[:, :-1]) & inner) or
                   np.any(T[1:, firsts] < T[:-1, lasts]) for T in (S2, E2))


def _late(S2, E2, layout, c, shift):
    """Per actor the last firing that does not start and end ``shift`` (its move
    over ``c`` iterations) after the one ``c`` iterations before it (-1 if none)."""
    import numpy as np
    lam = np.repeat(np.array(shift, dtype=np.int64), layout.q)
    wrong = (S2[c:] - S2[:-c] != lam) | (E2[c:] - E2[:-c] != lam)
    return _last(wrong, layout).tolist()


def _maxima(graph, actors, S2, E2, settled, shift, small=False):
    """Per channel the most tokens it holds up to one period past the time its
    producer and consumer repeat from (at the ends of its producer's firings),
    ``math.inf`` on a growing channel; or the firings still missing to see that far:
    ``(None, shortfall)``, the most time a consumer's firings fall short.  ``S2`` and
    ``E2`` as :func:`_repetition` takes them."""
    index = {a: k for k, a in enumerate(actors)}
    starts_of, lasts_of = {}, {}

    def starts(x):
        """The starts of ``x``'s firings (sorted, as the caller checked)."""
        if x.name not in starts_of:
            starts_of[x.name] = lists.starts(S2, x) if small else \
                S2[:, x.pos:x.pos + x.q].reshape(-1)
        return starts_of[x.name]

    def lasts(a):
        """The last of each run of equal ends of ``a``'s firings, and those ends: the
        tokens are largest there (the others leave fewer; on long runs of equal ends
        the search is much shorter)."""
        if a.name not in lasts_of:
            lasts_of[a.name] = lists.lasts(E2, a) if small else _lasts(E2, a)
        return lasts_of[a.name]
    buffers, short = {}, 0
    for x in actors.values():
        for i in x.ins:
            if i.growing:
                buffers[i.name] = math.inf
                continue
            a = actors[i.src]
            horizon = max(settled[index[a.name]], settled[index[x.name]]) + \
                shift[index[a.name]]
            last, ends = lasts(a)
            latest, ended = int(starts(x)[-1]), int(ends[-1])
            if latest < horizon or ended <= horizon:
                short = max(short, horizon - latest, horizon + 1 - ended)
                continue
            # the tokens after the last of the ends at one time before the horizon:
            # there ``last + 1`` firings have ended and ``consumed`` started
            k = bisect_left(ends, horizon)
            buffers[i.name] = i.delay + max(0, _most(i, last[:k], ends[:k], starts(x))
                                            if k else 0)
    if short:
        return None, short
    return {ch: buffers[ch] for ch in graph.channels}, 0


def _lasts(E2, a):
    """:func:`moc.occupancy_lists.lasts` of a numpy matrix."""
    import numpy as np
    ends = E2[:, a.pos:a.pos + a.q].reshape(-1)
    last = np.flatnonzero(np.append(ends[1:] != ends[:-1], True))
    return last, ends[last]


def _most(i, last, ends, starts):
    """The most tokens on the input ``i`` after firings ``last`` of its producer (0
    up) have ended, at their ``ends``, less those read by the consumer's firings
    started by then (of its ``starts``): ``P(w + 1) − C(started)``."""
    if type(last) is list:
        return max(i.made(w + 1) - i.read(bisect_left(starts, e))
                   for w, e in zip(last, ends))
    import numpy as np
    consumed = np.searchsorted(starts, ends, "left")
    return int((i.made.over(last + 1) - i.read.over(consumed)).max())


def _result(actors, S2, E2, buffers, scale, m, c, iterations, unit):
    rows = {a: (x.pos, x.pos + x.q) for a, x in actors.items()}
    starts, ends = ((T[0] // unit if type(T) is not list else [v // unit for v in T[0]])
                    for T in (S2, E2))
    return Occupancy(buffers, _First(rows, starts, ends, scale), m, c,
                     iterations)


class _First(Mapping):
    """Per actor the ``(start, end)`` of its firings of the first iteration, made when
    read (the times in units of ``1/scale``; an SDF graph's schedule comes from
    :func:`moc.self_timed.first_iteration`, which makes these unread)."""

    def __init__(self, rows, starts, ends, scale):
        self._rows, self._starts, self._ends, self._scale = rows, starts, ends, scale

    def _times(self, T, a):
        lo, hi = self._rows[a]
        row = T[lo:hi] if type(T) is list else T[lo:hi].tolist()
        if self._scale == 1:
            return row
        return [v // self._scale if v % self._scale == 0 else Fraction(v, self._scale)
                for v in row]

    def __getitem__(self, a):
        return tuple(zip(self._times(self._starts, a), self._times(self._ends, a)))

    def last_end(self):
        """The end of the last firing (0 without any), as the firings give it."""
        if not len(self._ends):
            return 0
        v = max(self._ends) if type(self._ends) is list else int(self._ends.max())
        return v // self._scale if v % self._scale == 0 else Fraction(v, self._scale)

    def __iter__(self):
        return iter(self._rows)

    def __len__(self):
        return len(self._rows)
