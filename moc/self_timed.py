"""The self-timed execution of an SDF graph: every actor fires as soon as it is enabled.

A firing consumes its input tokens at its start and produces its output tokens at its
end, ``d(a)`` later; several firings of one actor may overlap unless a self-loop
channel forbids it (a self-loop is an ordinary channel here).  The execution is
deterministic, so its state (tokens per channel and the remaining times of the ongoing
firings) eventually recurs and the execution is periodic from then on: the
state-space method of SDF3's throughput analysis (Ghamarian, Geilen, Stuijk, Basten,
Moonen, Bekooij, Theelen & Mousavi, "Throughput analysis of synchronous data flow
graphs", ACSD 2006).
"""
from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from itertools import repeat
from fractions import Fraction
from types import MappingProxyType

from moc import limits
from moc.errors import LimitError, SDFError
from moc.exact_times import throughput_of
from moc.graph import SDFGraph
from moc.howard_exact import on_lists
from moc.hsdf import firing_name, token_writer
from moc.phases import Cumulative, InitialCumulative, phase_counts, phase_value
from moc.record import record


@record
class Firing:
    """Firing ``index`` (from 0) of ``actor``, from ``start`` to ``end``."""

    actor: str
    index: int
    start: Fraction | float
    end: Fraction | float

    @property
    def name(self) -> str:
        return firing_name(self.actor, self.index)


class Firings(Sequence):
    """The firings ``0 .. n-1`` of ``actor`` as a sequence of :class:`Firing` s, kept
    as two lists (``starts``, ``ends``) and made into :class:`Firing` s only when read
    (a million firings of the first iteration would take seconds to make); a slice is a
    tuple, and it equals the tuple of the same firings."""

    __slots__ = ("actor", "starts", "ends")

    def __init__(self, actor: str, starts, ends):
        self.actor, self.starts, self.ends = actor, list(starts), list(ends)

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, k):
        if isinstance(k, slice):
            return tuple(map(Firing, repeat(self.actor), range(*k.indices(len(self))),
                             self.starts[k], self.ends[k]))
        k = range(len(self))[k]
        return Firing(self.actor, k, self.starts[k], self.ends[k])

    def __iter__(self):
        return map(Firing, repeat(self.actor), range(len(self)), self.starts, self.ends)

    def names(self) -> list[str]:
        """``"actor#k"`` of every firing, as :attr:`Firing.name` spells it."""
        return [firing_name(self.actor, k) for k in range(len(self))]

    def __eq__(self, other):
        if isinstance(other, Firings):
            return (self.actor, self.starts, self.ends) == \
                (other.actor, other.starts, other.ends) or \
                (not len(self) and not len(other))
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    def __hash__(self):
        return hash(tuple(self))

    def __repr__(self) -> str:
        return repr(tuple(self))


@record
class SelfTimed:
    """What one state-space exploration shows: ``throughput`` (iterations per time unit
    of the periodic phase) and ``period``, ``latency`` (the end of the last firing of
    the first iteration), ``buffers`` (per channel, the most tokens it ever holds),
    ``schedule`` (per actor, its firings of the first iteration, a :class:`Firings`),
    ``states`` (the number of instants explored: :func:`simulate`) and ``periods``
    (per actor, the period of its own firings: the period of its group)."""

    throughput: Fraction | float
    period: Fraction | float
    latency: Fraction | float | None
    buffers: Mapping[str, int]
    schedule: Mapping[str, tuple] | None
    states: int
    periods: Mapping[str, Fraction | float]

#: blocks of firings over which :func:`first_iteration` judges their width
NARROW_AFTER = 2048
# a call per state would cost more than the state itself
PROGRESS_STEP = 1024


def first_iteration(graph: SDFGraph, durations: Mapping[str, object],
                    q: Mapping[str, int], narrow: int | None = None, rows: bool = True
                    ) -> Mapping[str, Firings] | None:
    """The firings of the first iteration of the self-timed execution (the first
    ``q(a)`` of each actor ``a``), from the precedences alone.

    Firing ``ν`` (from 0) of ``b`` reads tokens up to number ``c·(ν+1) − 1`` of each input
    channel; the last of them is an initial token or was produced by firing
    ``⌊(c·(ν+1) − 1 − M0)/p⌋`` of ``a``, so ``b`` starts at the latest end of those
    (Sriram & Bhattacharyya, *Embedded Multiprocessors*, ch. 3).  Refuses with
    :class:`LimitError` past ``moc.limits.MAX_FIRINGS`` firings.  The firings are
    computed a block at a time, as many of an actor as its inputs allow; None where
    ``NARROW_AFTER`` blocks in a row hold fewer than ``narrow`` firings on average
    (a cycle of few tokens lets few through at a time, and each block costs as much as
    tens of firings of :func:`moc.occupancy.first_iteration`).  Without ``rows`` the
    firings are not made (a million of them take some 80 MB as Python lists): an
    :class:`Ends` gives the latest end.
    """
    total = sum(q.values())
    if total > limits.MAX_FIRINGS:
        raise LimitError(f"the first iteration of '{graph.name}' has {total} firings",
                         "firings", limits.MAX_FIRINGS, graph.origin)
    inputs = {a: [] for a in graph.actors}
    loops = {a: [] for a in graph.actors}
    consumers = {a: [] for a in graph.actors}
    for ch in graph.channels.values():
        (loops if ch.src == ch.dst else inputs)[ch.dst].append(ch)
        if ch.src != ch.dst:
            consumers[ch.src].append(ch.dst)
    whole = all(isinstance(d, int) for d in durations.values()) and \
        sum(durations[a] * q[a] for a in graph.actors) < 2 ** 62
    # a small iteration of whole times on Python lists (numpy's import would cost more
    # than the whole iteration); the block loop is one for both, and only a block's
    # starts and its firings' ends take the two forms
    small = whole and on_lists(total)
    if small:
        ends = {a: [0] * q[a] for a in graph.actors}
    else:
        import numpy as np
        kind = np.int64 if whole else object
        ends = {a: np.zeros(q[a], dtype=kind) for a in graph.actors}
    count = dict.fromkeys(graph.actors, 0)
    queue, queued = deque(graph.actors), set(graph.actors)
    blocks = done = judged = 0
    while queue:
        b = queue.popleft()
        queued.discard(b)
        # the firings whose tokens from other actors are all written (a block at once)
        upto = min([q[b]] + [(ch.delay + ch.prod * count[ch.src]) // ch.cons
                             for ch in inputs[b]])
        if upto <= count[b] or any(_lag(ch) <= 0 for ch in loops[b]):
            continue
        blocks, done = blocks + 1, done + upto - count[b]
        if blocks % NARROW_AFTER == 0 and narrow is not None:
            if done - judged < narrow * NARROW_AFTER:
                return None
            judged = done
        if small:
            _block_listed(count[b], upto, durations[b], ends, b, inputs[b], loops[b])
        else:
            nu = np.arange(count[b], upto)
            start = np.zeros(len(nu), dtype=kind)
            for ch in inputs[b]:
                writer = _writer(ch, nu)
                valid = writer >= 0
                start[valid] = np.maximum(start[valid], ends[ch.src][writer[valid]])
            ends[b][count[b]:upto] = _after_own(start, durations[b], ends[b], count[b],
                                                loops[b])
        count[b] = upto
        for c in consumers[b]:
            if c not in queued:
                queue.append(c)
                queued.add(c)
    if not rows:
        return Ends(ends)
    if small:
        return {a: Firings(a, [e - durations[a] for e in ends[a]], ends[a])
                for a in graph.actors}
    return {a: Firings(a, (ends[a] - durations[a]).tolist(), ends[a].tolist())
            for a in graph.actors}


class Ends(dict):
    """Per actor the ends of its firings of the first iteration (an array or a list
    each)."""

    def last_end(self):
        """The latest end (0 without any firing), as the firings' rows would give it."""
        return max((max(e) if type(e) is list else int(e.max()) if e.dtype != object
                    else max(e.tolist()) for e in self.values() if len(e)), default=0)


def _writer(ch, nu):
    """The producer firing that wrote the last token consumer firing ``nu`` (a Python
    integer or a numpy array of them) reads from ``ch``: ``⌊(c·(ν+1) − 1 − M0)/p⌋``, an
    initial token where negative."""
    return token_writer(ch.cons * (nu + 1) - 1, ch.prod, ch.delay)


def _lag(loop):
    """How many firings back a self-loop reaches: ``ν − writer(ν)``; 0 or less is a
    firing that waits for itself."""
    return -((loop.cons - 1 - loop.delay) // loop.cons)


def _block_listed(first, upto, d, ends, b, inputs, loops):
    """:func:`first_iteration`'s block of firings ``first .. upto-1`` of ``b`` (time
    ``d``) on Python lists: each starts at the latest end of the firings it reads from
    (:func:`_writer`) and ends ``d`` after that and after the end of its own firing
    ``k`` back on a self-loop (:func:`_after_own`'s recurrence, one firing at a time)."""
    own = ends[b]
    k = min((_lag(ch) for ch in loops), default=None)
    for nu in range(first, upto):
        s = 0
        for ch in inputs:
            w = _writer(ch, nu)
            if w >= 0 and ends[ch.src][w] > s:
                s = ends[ch.src][w]
        if k is not None and nu >= k and own[nu - k] > s:
            s = own[nu - k]
        own[nu] = s + d


def _after_own(start, d, ends, first, loops):
    """The ends of firings ``first, first+1, ...`` of an actor of time ``d`` whose other
    inputs allow them to start at ``start``: a self-loop (``p = c``) makes firing ``ν``
    also wait for firing ``ν − k`` of its own, ``k = ν − ⌊(c·(ν+1) − 1 − M0)/c⌋``, so
    along each class ``ν ≡ r (mod k)`` ``e_j = d + max(s_j, e_{j−1})``, that is
    ``e_j = (j+1)·d + max(e_{−1}, max_{t≤j}(s_t − t·d))``: a running maximum."""
    if not loops:
        return start + d
    import numpy as np
    k = min(_lag(ch) for ch in loops)
    out = np.empty(len(start), dtype=start.dtype)
    for r in range(min(k, len(start))):
        s = start[r::k]
        steps = np.arange(len(s))
        before = first + r - k
        # no earlier firing of the class: its first one waits for nothing of its own
        floor = ends[before] if before >= 0 else 0
        best = np.maximum.accumulate(np.maximum(s - steps * d, floor))
        out[r::k] = best + (steps + 1) * d
    return out


def simulate(graph: SDFGraph, durations: Mapping[str, object], q: Mapping[str, int],
             growing: Collection[str] = (), progress=None, record=True,
             initial_times: Mapping[str, tuple] | None = None) -> SelfTimed:
    """Explore the self-timed execution of the bound, consistent, live ``graph`` until
    the state of each of its groups recurs and its first iteration has started.

    An actor with initialisation phases (:mod:`moc.initial_phases`; their times
    ``initial_times``, per such actor one per phase) fires them first, once each, in
    order, then its periodic phases: its first iteration is its ``m`` initialisation
    firings and ``q(a)`` periodic ones, and its buffers' maxima count the transient.
    A group's state is stored only once each of its actors has ended its
    initialisation firings (the periodic graph's state from then on).

    At each instant the firings that end produce their tokens, then every enabled
    firing starts (zero-time firings end at once, and the instant goes on).  Every actor
    must fire at a bounded rate.  The channels ``growing`` (a producer faster than its
    consumer) pile tokens up without bound, so they are left out of the state, and a
    state counts as recurring only if none of them held a firing back since its last
    visit and none holds fewer tokens: more tokens on a channel that never limits
    anything change nothing, so the execution between the two visits repeats for ever.
    Their buffers are ``math.inf``.

    The actors joined by the other channels form groups that only growing channels
    connect; each group's state (its tokens and the remaining times of its firings)
    recurs on its own, so a group is never made to wait for the common multiple of
    unrelated periods.  As in SDF3's throughput analysis (Ghamarian et al. 2006), a
    group's state is stored only when its reference actor (the one with the fewest
    firings per iteration) completes an iteration's worth of firings: the states at
    those instants recur with the execution, at most one period later.  A group whose
    state has recurred is no longer explored (:func:`_freeze`): its maxima are known,
    and only its completions on growing channels into groups still explored are
    replayed (:func:`_replay`), so the fast groups of a graph are not stepped through
    the slowest one's long period.

    Raises :class:`LimitError` past ``moc.limits.MAX_STATES`` instants explored, before
    simulating any where a reference's own firings would pass it
    (:func:`least_instants`).
    ``progress(n)`` is told of every ``PROGRESS_STEP`` instants.  Without ``record``
    the first iteration is not kept (``latency`` and ``schedule`` are None; the
    precedences give them: :func:`first_iteration`).
    """
    actors = list(graph.actors)
    where = {a: i for i, a in enumerate(actors)}
    channels = list(graph.channels.values())
    grows = [ch.name in growing for ch in channels]
    ins = [[] for _ in actors]
    outs = [[] for _ in actors]
    counts = phase_counts(graph)
    phases = [counts[a] for a in actors]
    init = [graph.actors[a].initial_phases for a in actors]
    m = [0 if x is None else x.count for x in init]
    # an actor with initialisation phases goes phase by phase: its phase table is its
    # m initialisation phases, then its n periodic ones
    phased = [n > 1 or k > 0 for n, k in zip(phases, m)]
    for c, ch in enumerate(channels):
        i, j = where[ch.src], where[ch.dst]
        cons = tuple(phase_value(ch.cons, k) for k in range(phases[j]))
        if m[j]:
            cons = init[j].rates("cons", ch.name) + cons
        ins[j].append((c, cons if phased[j] else cons[0], grows[c]))
        made = Cumulative(ch.prod, phases[i]) if not m[i] else \
            InitialCumulative(ch.prod, phases[i], init[i].rates("prod", ch.name))
        outs[i].append((c, made if phased[i] else phase_value(ch.prod, 0), j))
    free = [a for a, i in where.items() if not ins[i]]
    if free:
        raise SDFError(f"the self-timed execution of '{graph.name}' is unbounded: actors "
                       f"{', '.join(map(repr, free))} have no input and fire without limit",
                       graph.origin)
    groups = _groups(len(actors), [(where[ch.src], where[ch.dst])
                                   for c, ch in enumerate(channels) if not grows[c]])
    group_of = [0] * len(actors)
    for g, members in enumerate(groups):
        for i in members:
            group_of[i] = g
    kept = [[c for c, ch in enumerate(channels) if not grows[c]
             and group_of[where[ch.dst]] == g] for g in range(len(groups))]
    piled = [[c for c, ch in enumerate(channels) if grows[c]
              and group_of[where[ch.dst]] == g] for g in range(len(groups))]
    per = [q[a] for a in actors]
    need = [k + n for k, n in zip(m, per)]      # the firings of the first iteration
    reference = [min(members, key=lambda i: per[i]) for members in groups]
    d = [tuple((initial_times or {}).get(a, ())) +
         tuple(phase_value(durations[a], k) for k in range(n)) if p else
         phase_value(durations[a], 0) for a, n, p in zip(actors, phases, phased)]
    if any(len(t) != k + n for t, k, n, p in zip(d, m, phases, phased) if p):
        raise ValueError("simulate: initial_times must give a time per initialisation "
                         "phase of every actor that has some")
    limit = limits.MAX_STATES
    if least_instants(graph, durations, q, growing) > limit:
        raise _too_many(graph, limit)
    tokens = [ch.delay for ch in channels]
    peak = list(tokens)
    started = [0] * len(actors)
    completed = [0] * len(actors)
    ending = [deque() for _ in actors]      # [end, firings]: one duration, ends in order
    events: list = []                       # (end, actor), one per distinct end
    first = [([], []) for _ in actors]      # starts and ends of the first iteration
    seen = [{} for _ in groups]
    marks = [0] * len(groups)
    recurrence = [None] * len(groups)
    held = [set() for _ in groups]          # actors a growing channel holds back
    held_back = [None] * len(groups)        # the last instant it did
    waiting = len(groups)
    unstarted = sum(1 for n in need if n > 0) if record else 0
    dirty = set(range(len(actors)))
    finished = set()                        # phased actors whose first iteration started
    # a group whose state has recurred (and whose first iteration has started) is
    # frozen: its execution repeats from then on, so its channels' maxima are known and
    # only its completions on growing channels to groups still explored are replayed,
    # from those between the two visits (``logs``, kept from the group's first stored
    # state), one period later each time
    frozen = [False] * len(groups)
    still = [False] * len(actors)           # an actor of a frozen group
    feeds = [any(grows[c] for c, _, _ in outs[i]) for i in range(len(actors))]
    logs: list = [None] * len(actors)
    replays: list = [None] * len(actors)
    instants = 0
    now = 0
    while True:
        steps = 0
        while True:
            while events and events[0][0] == now:
                i = heapq.heappop(events)[1]
                if i < 0:
                    _replay(~i, replays[~i], completed, outs, phased, tokens, dirty,
                            still, events)
                    continue
                n = ending[i].popleft()[1]
                done = completed[i]
                completed[i] += n
                for c, p, j in outs[i]:
                    tokens[c] += p(done + n) - p(done) if phased[i] else p * n
                    if tokens[c] > peak[c]:
                        peak[c] = tokens[c]
                    dirty.add(j)
                if logs[i] is not None:
                    logs[i].append((now, completed[i]))
            instant = False
            for i in dirty:
                if still[i]:
                    continue
                if phased[i]:
                    instant = _start_phased(i, now, phases[i], m[i], ins[i], d[i], tokens,
                                            started, ending[i], events, held[group_of[i]],
                                            first[i] if record else None,
                                            need[i]) or instant
                    if record and started[i] >= need[i] and i not in finished:
                        finished.add(i)
                        unstarted -= 1
                    continue
                n = piling = None
                for c, cons, g in ins[i]:
                    k = tokens[c] // cons
                    if g:
                        piling = k if piling is None or k < piling else piling
                    elif n is None or k < n:
                        n = k
                if piling is not None and (n is None or piling < n):
                    n = piling
                    held[group_of[i]].add(i)
                else:
                    held[group_of[i]].discard(i)
                if n <= 0:
                    continue
                for c, cons, _ in ins[i]:
                    tokens[c] -= n * cons
                if record and started[i] < need[i]:
                    more = min(started[i] + n, need[i]) - started[i]
                    first[i][0].extend(repeat(now, more))
                    first[i][1].extend(repeat(now + d[i], more))
                    if started[i] + n >= need[i]:
                        unstarted -= 1
                started[i] += n
                end = now + d[i]
                queue = ending[i]
                if queue and queue[-1][0] == end:
                    queue[-1][1] += n
                else:
                    queue.append([end, n])
                    heapq.heappush(events, (end, i))
                instant = instant or d[i] == 0
            dirty = set()
            steps += 1
            if not instant:
                break
            if steps > limit:
                raise _too_many(graph, limit)
        instants += 1
        if progress is not None and instants % PROGRESS_STEP == 0:
            progress(PROGRESS_STEP)
        if instants > limit:
            raise _too_many(graph, limit)
        for g, members in enumerate(groups):
            if frozen[g]:
                continue
            if recurrence[g] is None:
                if held[g]:
                    held_back[g] = now
                ref = reference[g]
                if completed[ref] // per[ref] <= marks[g] or \
                        any(completed[i] < m[i] for i in members):
                    continue
                marks[g] = completed[ref] // per[ref]
                state = (tuple(tokens[c] for c in kept[g]),
                         tuple(tuple((e - now, k) for e, k in ending[i]) for i in members),
                         tuple(started[i] % phases[i] for i in members))
                visit = (now, tuple(started[i] for i in members),
                         tuple(tokens[c] for c in piled[g]))
                before = seen[g].get(state)
                if before is None or any(n < m for n, m in zip(visit[2], before[2])) \
                        or (held_back[g] is not None and held_back[g] > before[0]):
                    if not seen[g]:
                        for i in members:
                            if feeds[i]:
                                logs[i] = [(now, completed[i])]
                    seen[g][state] = visit
                    continue
                recurrence[g] = before, visit
                waiting -= 1
                seen[g] = None
            if not record or all(started[i] >= need[i] for i in members):
                events = _freeze(g, members, recurrence[g], now, frozen, still, logs,
                                 replays, ending, events, outs, grows, group_of)
        if not waiting and not unstarted:
            break
        if not events:
            raise SDFError(f"the self-timed execution of '{graph.name}' stops", graph.origin)
        now = events[0][0]
    periods = {}
    for g, members in enumerate(groups):
        (t1, fired1, _), (t2, fired2, _) = recurrence[g]
        if t2 == t1:
            raise SDFError(f"the self-timed execution of '{graph.name}' fires without "
                           f"bound in zero time", graph.origin)
        # the slowest actor sets the pace of graph iterations
        iterations = min(Fraction(f2 - f1, per[i])
                         for i, f1, f2 in zip(members, fired1, fired2))
        exact = isinstance(t2 - t1, (int, Fraction))
        period = (t2 - t1) / iterations if exact else (t2 - t1) / float(iterations)
        periods.update((actors[i], period) for i in members)
    period = max(periods.values())
    throughput = throughput_of(period)
    latency = max((max(ends) for _, ends in first if ends), default=0) if record else None
    schedule = {a: Firings(a, *first[i]) for i, a in enumerate(actors)} if record else None
    buffers = {ch.name: math.inf if grows[c] else peak[c] for c, ch in enumerate(channels)}
    return SelfTimed(throughput, period, latency, MappingProxyType(buffers),
                     schedule and MappingProxyType(schedule), instants,
                     MappingProxyType(periods))


def least_instants(graph: SDFGraph, durations: Mapping[str, object],
                   q: Mapping[str, int], growing: Collection[str] = ()) -> int:
    """A lower bound on the instants that :func:`simulate` visits (its ``states``): a
    group's state is first stored once its reference (the member with the fewest
    firings per iteration) has completed ``q`` firings, and recurs at a later store,
    so the reference completes ``2·q`` firings first; where a self-loop of ``M`` tokens
    gives and takes ``r_k ≥ 1`` in its phase ``k``, at most ``⌊M / min r⌋`` of its
    firings are under way at once (they end in order), so as many end at one instant,
    and where they all take time they end at ``⌈2·q / that⌉`` instants at least.  An
    actor with initialisation phases is given no such bound: they may write more
    tokens to its self-loop, letting more of its firings run at once."""
    counts = phase_counts(graph)
    actors = list(graph.actors)
    where = {a: i for i, a in enumerate(actors)}
    under_way = {}
    for ch in graph.channels.values():
        if ch.src == ch.dst and graph.actors[ch.src].initial_phases is None:
            n = counts[ch.src]
            gives = [phase_value(ch.prod, k) for k in range(n)]
            if gives == [phase_value(ch.cons, k) for k in range(n)] and min(gives) >= 1:
                most = ch.delay // min(gives)
                under_way[ch.src] = min(most, under_way.get(ch.src, most))
    groups = _groups(len(actors), [(where[ch.src], where[ch.dst])
                                   for ch in graph.channels.values()
                                   if ch.name not in growing])
    least = 0
    for members in groups:
        a = actors[min(members, key=lambda i: q[actors[i]])]
        if under_way.get(a, 0) >= 1 and all(phase_value(durations[a], k) > 0
                                            for k in range(counts[a])):
            least = max(least, -(-2 * q[a] // under_way[a]))
    return least


def _start_phased(i, now, n, m, ins, d, tokens, started, queue, events, held, first,
                  need):
    """Start every enabled firing of the cyclo-static actor ``i`` (``m`` initialisation
    phases then ``n`` periodic ones, phase times ``d`` and rates of its inputs in that
    order), one by one in phase order: each ends at its phase time after ``now``, and
    not before the actor's previous firing (firings end in order); the first ``need``
    of its firings go to ``first`` (its lists of starts and ends; None: not kept).
    Whether one ended at once (zero time).

    Once a whole cycle of periodic phases has started at ``now``, every later firing
    ends with the last one (its end is at least ``now`` plus the longest phase), so
    the whole cycles the tokens still allow join it at once, past the first
    iteration."""
    instant = False
    cycle = max(started[i], m) + n
    while True:
        if started[i] >= cycle and (first is None or started[i] >= need):
            cycle = math.inf
            whole = min((tokens[c] // total for c, cons, _ in ins
                         if (total := sum(cons[m:])) > 0), default=0)
            if whole > 0:
                for c, cons, _ in ins:
                    tokens[c] -= whole * sum(cons[m:])
                queue[-1][1] += whole * n
                started[i] += whole * n
        k = started[i] if started[i] < m else m + (started[i] - m) % n
        blocked = [g for c, cons, g in ins if tokens[c] < cons[k]]
        if blocked:
            if all(blocked):
                held.add(i)
            else:
                held.discard(i)
            return instant
        for c, cons, _ in ins:
            tokens[c] -= cons[k]
        end = now + d[k]
        if queue and queue[-1][0] >= end:
            end = queue[-1][0]
            queue[-1][1] += 1
        else:
            queue.append([end, 1])
            heapq.heappush(events, (end, i))
        if first is not None and started[i] < need:
            first[0].append(now)
            first[1].append(end)
        started[i] += 1
        instant = instant or end == now


def _freeze(g, members, recurrence, now, frozen, still, logs, replays, ending, events,
            outs, grows, group_of):
    """Freeze group ``g`` at ``now``, its state having recurred (``recurrence``: its
    two visits): its actors start nothing more, their pending ends leave ``events``,
    and each that writes to a growing channel is given its replay (:func:`_replay`):
    its completions after the first visit up to the second, each ``T`` (the time
    between the visits) and ``F`` firings (its firings between them) later once more
    per period, the first of them after ``now``.  The events without those ends."""
    (t1, fired1, _), (t2, fired2, _) = recurrence
    frozen[g] = True
    for i in members:
        still[i] = True
        ending[i].clear()
    events = [e for e in events if e[1] < 0 or not still[e[1]]]
    heapq.heapify(events)
    if t2 == t1:
        return events       # fires without bound in zero time: the caller refuses it
    period = t2 - t1
    for i, f1, f2 in zip(members, fired1, fired2):
        log, logs[i] = logs[i], None
        if log is None or not any(grows[c] and not frozen[group_of[j]]
                                  for c, _, j in outs[i]):
            continue
        segment = [(t - t1, n) for t, n in log if t1 < t <= t2]
        if not segment:
            continue
        # the first repetition whose completions pass ``now`` (each lies within
        # ``(t1, t2]`` plus its multiple of the period)
        k, place = max(1, (now - t1) // period), 0
        while t1 + segment[place][0] + k * period <= now:
            place += 1
            if place == len(segment):
                place, k = 0, k + 1
        replays[i] = [segment, place, k, t1, period, f2 - f1]
        heapq.heappush(events, (t1 + segment[place][0] + k * period, ~i))
    return events


def _replay(i, replay, completed, outs, phased, tokens, dirty, still, events):
    """The next completion of frozen actor ``i`` from its ``replay`` (see
    :func:`_freeze`): its count of completed firings, the tokens it writes on its
    channels to actors still explored; then the one after it is put in ``events``,
    unless every such channel's consumer is frozen."""
    segment, place, k, t1, period, fired = replay
    n = segment[place][1] + k * fired
    done = completed[i]
    completed[i] = n
    live = False
    for c, p, j in outs[i]:
        if still[j]:
            continue
        live = True
        tokens[c] += p(n) - p(done) if phased[i] else p * (n - done)
        dirty.add(j)
    if not live:
        return
    place += 1
    if place == len(segment):
        place, k = 0, k + 1
    replay[1], replay[2] = place, k
    heapq.heappush(events, (t1 + segment[place][0] + k * period, ~i))


def _groups(n, pairs):
    """The connected components of ``n`` nodes joined by ``pairs``, in node order (each
    listed at its least node, its nodes ascending): a union-find, linear in Python (the
    state space that follows visits every instant in Python anyway)."""
    root = list(range(n))

    def find(i):
        while root[i] != i:
            root[i] = i = root[root[i]]
        return i
    for i, j in pairs:
        i, j = find(i), find(j)
        if i != j:
            root[max(i, j)] = min(i, j)
    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(find(i), []).append(i)
    return list(members.values())


def _too_many(graph, limit):
    return LimitError(f"the state space of the self-timed execution of '{graph.name}' has "
                      f"at least {limit + 1} states", "states", limit, graph.origin)
