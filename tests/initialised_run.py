"""The self-timed execution of a graph whose actors may have initialisation phases,
event by event, written for the tests as an oracle independent of ``moc``'s analyses:
an actor's firing ``ν`` is initialisation phase ``ν`` while ``ν < m`` (its rates and
time from :class:`moc.initial_phases.InitialPhases`), then periodic phase
``(ν − m) mod n``.  A firing starts as soon as its actor's previous one has started and
its phase's tokens are on every input (it takes them then, any number of firings at
once); it ends ``d`` later, but not before the actor's previous one (firings end in
order; with ``ends_in_order`` false, Kiter's rule, only their starts are in order), and
writes its tokens then.  At an instant every firing that ends there
writes its tokens, then every enabled firing starts, round after round while firings
of time 0 end there (those started in one round all end in the next: SDF3's rule).  The period is read off the first state that
recurs once every initialisation firing has ended: tokens, each actor's phase, the
times left of its running firings.  With ``record`` (a dict) it also gives the
firings of the first iteration (each actor's ``m`` initialisation firings and ``q(a)``
periodic ones: ``record["firings"][a]``, their ``(start, end)``) and the most tokens
each channel holds at an instant once the firings ending then have written theirs and
before any starts (``record["buffers"]``), up to the recurrence, past which the
execution repeats: over the whole execution, transient included.  With
``capacities`` (per channel, the most tokens it may hold) a firing also needs, as it
starts, room on each output for what its phase writes, which it claims then; the room
for what it reads is freed as it ends.  With ``cap`` an actor starts at most that
many firings, so that one that fires without bound (no cycle limits it) stops: the
first iteration's firings are still those of the execution while none of them waits
for a firing past the cap; the execution then ends as a deadlock, with ``record``
filled all the same.  Past ``max_events`` instants (``"long"``) ``record`` holds the
firings and maxima up to there."""
from __future__ import annotations

import math
from fractions import Fraction

from stepped import phase as _phase, phase_counts as _counts


def run(graph, q, max_events=20_000, record=None, capacities=None, cap=None,
        ends_in_order=True):
    """``("period", Fraction)`` per iteration (``q``: the firings of one; the slowest
    actor's where components run apart), ``("deadlock", None)`` where nothing runs and
    nothing can start, or where the state recurs with an actor that did not start
    since its last visit (it never starts again: a part of the graph stops while the
    rest fires on), ``("initialisation unfinished", actors)`` past ``max_events``
    instants with the actors whose initialisation phases have not all started (others
    fire on, these wait: a deadlock of part of the graph), or ``("long", {"stalled":
    actors, "pace": period})`` past them otherwise: the actors that did not start a
    firing in the second half, and the slowest pace over it (an estimate of the period
    where tokens pile up for ever and no state recurs)."""
    n = _counts(graph)
    init = {a: actor.initial_phases for a, actor in graph.actors.items()}
    m = {a: 0 if i is None else i.count for a, i in init.items()}

    def rate(a, kind, ch, k):
        if k < m[a]:
            values = getattr(init[a], kind).get(ch.name)
            return 0 if values is None else values[k]
        return _phase(getattr(ch, kind), k - m[a])

    def time(a, k):
        if k < m[a]:
            return init[a].attrs["exec"][k]
        return _phase(graph.actors[a].attrs["exec"], k - m[a])

    ins = {a: [c for c in graph.channels.values() if c.dst == a] for a in graph.actors}
    outs = {a: [c for c in graph.channels.values() if c.src == a] for a in graph.actors}
    tokens = {c: ch.delay for c, ch in graph.channels.items()}
    room = {c: math.inf if capacities is None else capacities[c] - ch.delay
            for c, ch in graph.channels.items()}
    started = dict.fromkeys(graph.actors, 0)
    running = {a: [] for a in graph.actors}      # (end, firing) in order
    last_end = dict.fromkeys(graph.actors, 0)
    seen = {}
    t = 0
    half = {}
    firings = {a: [] for a in graph.actors}
    peak = dict(tokens)
    for event in range(max_events):
        if event == max_events // 2:
            half = (t, dict(started))
        moved = True
        while moved:                            # ends at t, then starts, to a fixpoint
            moved = False
            for a in graph.actors:
                for ended in [r for r in running[a] if r[0] <= t]:
                    running[a].remove(ended)
                    k = ended[1]
                    for ch in outs[a]:
                        tokens[ch.name] += rate(a, "prod", ch, k)
                    for ch in ins[a]:
                        room[ch.name] += rate(a, "cons", ch, k)
                    moved = True
            for c, n_tokens in tokens.items():
                peak[c] = max(peak[c], n_tokens)
            for a in graph.actors:
                while cap is None or started[a] < cap:
                    k = started[a]
                    if any(tokens[ch.name] < rate(a, "cons", ch, k) for ch in ins[a]) or \
                            any(room[ch.name] < rate(a, "prod", ch, k) for ch in outs[a]):
                        break
                    for ch in ins[a]:
                        tokens[ch.name] -= rate(a, "cons", ch, k)
                    for ch in outs[a]:
                        room[ch.name] -= rate(a, "prod", ch, k)
                    end = max(t + time(a, k), last_end[a]) if ends_in_order else \
                        t + time(a, k)
                    last_end[a] = end
                    running[a].append((end, k))
                    if k < m[a] + q[a]:
                        firings[a].append((t, end))
                    started[a] = k + 1
                    moved = True                # one of time 0 writes in the next round
        # a running initialisation firing writes its own rates: the state is the
        # periodic graph's only once every initialisation firing has ended
        if all(started[a] >= m[a] and all(k >= m[a] for _, k in running[a])
               for a in graph.actors):
            key = (tuple(tokens.values()), tuple(room.values()),
                   tuple((started[a] - m[a]) % n[a] for a in graph.actors),
                   tuple(tuple(sorted((e - t, (k - m[a]) % n[a]) for e, k in running[a]))
                         for a in graph.actors))
            if key in seen:             # the slowest actor's pace (components apart)
                t0, s0 = seen[key]
                if record is not None:
                    record.update(firings=firings, buffers=peak)
                if any(started[a] == s0[a] for a in graph.actors):
                    return "deadlock", None     # it never starts again: a part stops
                return "period", max(Fraction(t - t0) * q[a] / (started[a] - s0[a])
                                     for a in graph.actors if started[a] > s0[a])
            seen[key] = (t, dict(started))
        pending = [e for r in running.values() for e, _ in r]
        if not pending:
            if record is not None and cap is not None:
                record.update(firings=firings, buffers=peak)
            return "deadlock", None
        t = min(pending)
    waiting = [a for a in graph.actors if started[a] < m[a]]
    if waiting:
        return "initialisation unfinished", waiting
    t0, s0 = half
    if record is not None:
        record.update(firings=firings, buffers=peak)
    return "long", {"stalled": [a for a in graph.actors if started[a] == s0[a]],
                    "pace": max((Fraction(t - t0) * q[a] / (started[a] - s0[a])
                                 for a in graph.actors if started[a] > s0[a]), default=None)}
