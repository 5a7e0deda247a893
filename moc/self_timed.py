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

import math
from collections import deque
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Collection, Mapping

from moc import limits
from moc.errors import LimitError, SDFError
from moc.graph import SDFGraph


@dataclass(frozen=True)
class Firing:
    """Firing ``index`` (from 0) of ``actor``, from ``start`` to ``end``."""

    actor: str
    index: int
    start: Fraction | float
    end: Fraction | float

    @property
    def name(self) -> str:
        return f"{self.actor}#{self.index}"


@dataclass(frozen=True)
class SelfTimed:
    """What one state-space exploration shows: ``throughput`` (iterations per time unit
    of the periodic phase) and ``period``, ``latency`` (the end of the last firing of
    the first iteration), ``buffers`` (per channel, the most tokens it ever holds),
    ``schedule`` (per actor, its firings of the first iteration) and ``states`` (the
    number of states visited)."""

    throughput: Fraction | float
    period: Fraction | float
    latency: Fraction | float
    buffers: Mapping[str, int]
    schedule: Mapping[str, tuple]
    states: int

# a call per state would cost more than the state itself
PROGRESS_STEP = 1024


def first_iteration(graph: SDFGraph, durations: Mapping[str, object],
                    q: Mapping[str, int]) -> dict[str, tuple[Firing, ...]]:
    """The firings of the first iteration of the self-timed execution (the first
    ``q(a)`` of each actor ``a``), from the precedences alone.

    Firing ``ν`` (from 0) of ``b`` reads tokens up to number ``c·(ν+1) − 1`` of each input
    channel; the last of them is an initial token or was produced by firing
    ``⌊(c·(ν+1) − 1 − M0)/p⌋`` of ``a``, so ``b`` starts at the latest end of those
    (Sriram & Bhattacharyya, *Embedded Multiprocessors*, ch. 3).  Refuses with
    :class:`LimitError` past ``moc.limits.MAX_FIRINGS`` firings.
    """
    total = sum(q.values())
    if total > limits.MAX_FIRINGS:
        raise LimitError(
            f"the first iteration of '{graph.name}' has {total} firings, more than the "
            f"limit firings = {limits.MAX_FIRINGS}; raise it with --limit firings=N",
            "firings", limits.MAX_FIRINGS, graph.origin)
    inputs = {a: [] for a in graph.actors}
    consumers = {a: [] for a in graph.actors}
    for ch in graph.channels.values():
        inputs[ch.dst].append(ch)
        consumers[ch.src].append(ch.dst)
    ends: dict[str, list] = {a: [] for a in graph.actors}
    queue, queued = deque(graph.actors), set(graph.actors)
    while queue:
        b = queue.popleft()
        queued.discard(b)
        done = ends[b]
        before = len(done)
        while len(done) < q[b]:
            nu, start = len(done), 0
            for ch in inputs[b]:
                writer = (ch.cons * (nu + 1) - 1 - ch.delay) // ch.prod
                if writer >= len(ends[ch.src]):
                    break
                if writer >= 0:
                    start = max(start, ends[ch.src][writer])
            else:
                done.append(start + durations[b])
                continue
            break
        if len(done) > before:
            for c in consumers[b]:
                if c not in queued:
                    queue.append(c)
                    queued.add(c)
    return {a: tuple(Firing(a, k, end - durations[a], end) for k, end in enumerate(ends[a]))
            for a in graph.actors}


def simulate(graph: SDFGraph, durations: Mapping[str, object], q: Mapping[str, int],
             growing: Collection[str] = (), progress=None) -> SelfTimed:
    """Explore the self-timed execution of the bound, consistent, live ``graph`` until
    its state recurs and its first iteration has started.

    At each instant the firings that end produce their tokens, then every enabled
    firing starts (zero-time firings end at once, and the instant goes on); the state is
    taken after the starts.  Every actor must fire at a bounded rate.  The channels
    ``growing`` (a producer faster than its consumer) pile tokens up without bound, so
    they are left out of the state, and a state counts as recurring only if none of
    them held a firing back since its last visit and none holds fewer tokens: more
    tokens on a channel that never limits anything change nothing, so the execution
    between the two visits repeats for ever.  Their buffers are ``math.inf``.  Raises
    :class:`LimitError` past ``moc.limits.MAX_STATES`` states.  ``progress(n)`` is told
    of every ``PROGRESS_STEP`` states visited.
    """
    actors = list(graph.actors)
    where = {a: i for i, a in enumerate(actors)}
    channels = list(graph.channels.values())
    grows = [ch.name in growing for ch in channels]
    ins = [[] for _ in actors]
    outs = [[] for _ in actors]
    for c, ch in enumerate(channels):
        ins[where[ch.dst]].append((c, ch.cons, grows[c]))
        outs[where[ch.src]].append((c, ch.prod))
    free = [a for a, i in where.items() if not ins[i]]
    if free:
        raise SDFError(f"the self-timed execution of '{graph.name}' is unbounded: actors "
                       f"{', '.join(map(repr, free))} have no input and fire without limit",
                       graph.origin)
    kept = [c for c, g in enumerate(grows) if not g]
    piled = [c for c, g in enumerate(grows) if g]
    d = [durations[a] for a in actors]
    tokens = [ch.delay for ch in channels]
    peak = list(tokens)
    started = [0] * len(actors)
    ending = [deque() for _ in actors]      # one duration per actor: ends come in order
    first = [[] for _ in actors]
    need = [q[a] for a in actors]
    seen: dict = {}
    visits = 0
    recurrence = None
    held_back = None                        # the last instant a growing channel limited
    now = 0
    limit = limits.MAX_STATES
    while True:
        steps = 0
        while True:
            for i, queue in enumerate(ending):
                while queue and queue[0] == now:
                    queue.popleft()
                    for c, p in outs[i]:
                        tokens[c] += p
                        peak[c] = max(peak[c], tokens[c])
            instant = False
            for i in range(len(actors)):
                n = min((tokens[c] // cons for c, cons, g in ins[i] if not g), default=None)
                piling = min((tokens[c] // cons for c, cons, g in ins[i] if g), default=None)
                if piling is not None and (n is None or piling < n):
                    n, held_back = piling, now
                if n <= 0:
                    continue
                for c, cons, _ in ins[i]:
                    tokens[c] -= n * cons
                for k in range(started[i], min(started[i] + n, need[i])):
                    first[i].append(Firing(actors[i], k, now, now + d[i]))
                started[i] += n
                ending[i].extend([now + d[i]] * n)
                instant = instant or d[i] == 0
            steps += 1
            if not instant:
                break
            if steps > limit:
                raise _too_many(graph, limit)
        if recurrence is None:
            state = (tuple(tokens[c] for c in kept),
                     tuple(tuple(t - now for t in queue) for queue in ending))
            visit = (now, tuple(started), tuple(tokens[c] for c in piled))
            before = seen.get(state)
            if before is not None and (held_back is None or held_back <= before[0]) and \
                    all(n >= m for n, m in zip(visit[2], before[2])):
                recurrence = before, visit
            else:
                seen[state] = visit
                visits += 1
                if progress is not None and visits % PROGRESS_STEP == 0:
                    progress(PROGRESS_STEP)
                if visits > limit:
                    raise _too_many(graph, limit)
        if recurrence is not None and all(s >= n for s, n in zip(started, need)):
            break
        upcoming = [queue[0] for queue in ending if queue]
        if not upcoming:
            raise SDFError(f"the self-timed execution of '{graph.name}' stops", graph.origin)
        now = min(upcoming)
    (t1, fired1, _), (t2, fired2, _) = recurrence
    if t2 == t1:
        raise SDFError(f"the self-timed execution of '{graph.name}' fires without bound "
                       f"in zero time", graph.origin)
    # the slowest actor sets the pace of graph iterations
    iterations = min(Fraction(fired2[i] - fired1[i], need[i]) for i in range(len(actors)))
    exact = isinstance(t2 - t1, (int, Fraction))
    throughput = iterations / (t2 - t1) if exact else float(iterations) / (t2 - t1)
    period = 1 / throughput
    latency = max(f.end for fs in first for f in fs)
    schedule = {a: tuple(first[i]) for i, a in enumerate(actors)}
    buffers = {ch.name: math.inf if grows[c] else peak[c] for c, ch in enumerate(channels)}
    return SelfTimed(throughput, period, latency, MappingProxyType(buffers),
                     MappingProxyType(schedule), visits)


def _too_many(graph, limit):
    return LimitError(
        f"the state space of the self-timed execution of '{graph.name}' has more than "
        f"{limit} states (the limit states); raise it with --limit states=N",
        "states", limit, graph.origin)
