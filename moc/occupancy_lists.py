"""The rules of one iteration's firings of :mod:`moc.occupancy` on Python integers,
and a small graph's iterations on Python lists: numpy's import (some 50 ms) costs more
than such a graph's whole execution.

The rules (the producer firings a firing waits for, :func:`writers_read` and
:func:`offsets`; the firings that tokens allow, :func:`served`; the blocks of one
iteration, :func:`blocks`; a firing's start and end, :func:`one_by_one` and
:func:`ended`) take a Python
integer or a numpy array alike, and :mod:`moc.iteration_program` builds its arrays with
them.  A small graph's firings are all computed one by one (:func:`program`,
:func:`run`): the chains, levels and guesses there only save numpy calls.  What exists
in both forms is the walk over the matrix of computed times (here a list of rows,
there a numpy matrix), as :func:`moc.occupancy._repetition` and
:func:`moc.occupancy._maxima` call it.
"""
from __future__ import annotations

from functools import partial


def reads(i, nu):
    """``C(ν + 1) − M0`` for the consumer firings ``nu`` (a numpy array, or one Python
    integer) of the input ``i`` (a channel with its
    consumer's ``read`` and its ``delay``)."""
    return i.read.over(nu + 1) - i.delay


def served(i, made):
    """How many consumer firings the tokens ``made`` (after ``k`` producer firings;
    an array or one integer) let read from the input ``i``: the least ``w`` with
    ``M0 + made < C(w + 1)``."""
    return i.read.writers(i.delay + made + 1)


def offsets(w, q_src, total):
    """Where the producer firings ``w`` (an array or one integer; of ``q_src`` an
    iteration) lie from the first place of their actor in the consumer's iteration
    (``cycles·total + r``, iterations of ``total`` places), and the ``cycles``."""
    cycles, r = divmod(w, q_src)
    return cycles * total + r, cycles


def writers_read(i, nu):
    """The producer firings whose tokens the consumer firings ``nu`` (an array or one
    integer) of the input ``i`` wait for: the least ``w`` with ``M0 + P(w + 1) ≥
    C(ν + 1)``."""
    return i.made.writers(reads(i, nu))


def blocks(need, feeds):
    """The blocks of firings ``(actor, first, end)`` of one iteration in an order that
    the tokens allow, each actor's as many firings as its producers have written for;
    None where an actor cannot fire its ``need`` firings.  ``feeds``: per actor its
    producers and how many of its firings ``k`` firings of each allow (tables indexed
    by ``k``); an actor waits for the producer that allows it the fewest firings."""
    count = [0] * len(need)
    waiting = [[] for _ in need]          # the actors each one holds back
    order = []
    pending = list(range(len(need)))
    while pending:
        b = pending.pop()
        upto, blocker = need[b], None
        for table, a in feeds[b]:
            u = table[count[a]]
            if u < upto:
                upto, blocker = u, a
        if upto > count[b]:
            order.append((b, count[b], upto))
            count[b] = upto
            pending += waiting[b]
            waiting[b] = []
        if blocker is not None:
            waiting[blocker].append(b)
    return order if count == need else None


def ended(s, d, low):
    """The end of firings started at ``s`` that take ``d`` (arrays or Python integers).
    Where some firing takes time 0, times are keys ``t·(low + 1) + k``: ``k`` is the
    step within the instant ``t`` at which the state space of :mod:`moc.self_timed`
    sees the event (there an instant's firings that end produce their tokens, then the
    enabled ones start, and one of time 0 ends at the next step).  A firing of time 0
    (``d`` 1) then ends at the step after its start; one of positive time ``t`` (``d``
    ``t·(low + 1)``) at step 0 of its end's instant.  ``low`` 0: plain times."""
    if not low:
        return s + d
    return s + d - (s & low) * (d > 1)


def one_by_one(lists, S, E, base, in_order, held, low=0):
    """Compute the firings ``lists`` (the five of
    :func:`moc.iteration_program.iteration_program`) of the iteration at ``base`` one
    by one; the places whose start a growing channel's producer set appended to
    ``held``.  ``low``: as :func:`ended` takes it."""
    for place, d, slow, fast, previous in zip(*lists):
        at, before = base + place, base + previous
        s = S[before]                 # in order, and at 0 at the earliest
        for o in slow:
            e = E[base + o]
            if e > s:
                s = e
        if fast:
            up = False
            for o in fast:
                e = E[base + o]
                if e > s:
                    s, up = e, True
            if up:
                held.append(at)
        S[at] = s
        e, p = s + d, E[before]
        if low and d > 1:
            e -= s & low
        E[at] = e if e > p or not in_order else p


def grow(S, E, places):
    """``S`` and ``E`` (``array("q")``) grown by ``places`` times 0."""
    S.frombytes(bytes(8 * places))
    E.frombytes(bytes(8 * places))


def program(actors, total, low=0):
    """``(run, back)``: the firings of one iteration in an order that their
    precedences allow, as :func:`one_by_one`'s five lists, made into
    ``run(S, E, first, last, in_order=True)`` (:func:`run`; ``low`` as :func:`ended`
    takes it), and how many iterations back they reach (as
    :func:`moc.iteration_program.iteration_program`); None where one iteration cannot
    complete."""
    xs = list(actors.values())
    back = 1
    waits = {False: [[] for _ in range(total)], True: [[] for _ in range(total)]}
    for x in xs:
        for i in x.ins:
            a = actors[i.src]
            seen = None
            for nu in range(x.q):
                if i.cons[nu % len(i.cons)] <= 0:
                    continue
                w = writers_read(i, nu)
                # as in :func:`moc.iteration_program._waits`: firings start in order, so
                # one that waits for a producer firing an earlier one waited for
                # waits for nothing more
                if seen is not None and w <= seen:
                    continue
                seen = w
                place, cycles = offsets(w, a.q, total)
                back = max(back, -cycles)
                waits[i.growing][x.pos + nu].append(place + a.pos)
    where = {x.name: k for k, x in enumerate(xs)}
    feeds = [[([min(served(i, i.made(k)), x.q) for k in range(actors[i.src].q + 1)],
               where[i.src]) for i in x.ins if i.src != x.name] for x in xs]
    order = blocks([x.q for x in xs], feeds)
    if order is None:
        return None
    lists = ([], [], [], [], [])
    at, times, slow, fast, previous = lists
    for b, lo, hi in order:
        x = xs[b]
        for r in range(lo, hi):
            place = x.pos + r
            at.append(place)
            times.append(x.d[r % x.n])
            slow.append(tuple(waits[False][place]))
            fast.append(tuple(waits[True][place]))
            # an actor's first firing follows the last of the iteration before
            previous.append(place - 1 if r else x.pos + x.q - 1 - total)
    return partial(run, lists, total=total, low=low), back


def run(lists, S, E, first, last, total, in_order=True, low=0):
    """The starts and ends of iterations ``first .. last-1`` appended to ``S`` and
    ``E`` (as :func:`moc.iteration_program.run_program`); the places whose start a
    growing channel's producer set."""
    grow(S, E, (last - first) * total)
    held = []
    for it in range(first, last):
        one_by_one(lists, S, E, it * total, in_order, held, low)
    return held


def collect(S, E, held, back, iterations, total, layout):
    """The starts and ends of the computed iterations as lists of rows (row ``it``,
    column ``pos(a) + r``: firing ``it·q(a) + r`` of ``a``), and per actor the last of
    its firings whose start a growing channel set (-1 if none)."""
    rows = [(S[lo:lo + total].tolist(), E[lo:lo + total].tolist())
            for lo in range(back * total, (back + iterations) * total, total)]
    actor = [k for k, q in enumerate(layout.q) for _ in range(q)]
    last = [-1] * len(layout.q)
    for place in held:
        it, col = divmod(place - back * total, total)
        k = actor[col]
        last[k] = max(last[k], it * layout.q[k] + col - layout.pos[k])
    return [s for s, _ in rows], [e for _, e in rows], last


def ordered(S2, E2, layout):
    """Whether every actor's firings start and end in order."""
    for T in (S2, E2):
        for pos, q in zip(layout.pos, layout.q):
            before = None
            for row in T:
                for t in row[pos:pos + q]:
                    if before is not None and t < before:
                        return False
                    before = t
    return True


def steps(T, k):
    """Per column the time from row ``k`` to row ``k + 1``."""
    return [b - a for a, b in zip(T[k], T[k + 1])]


def late(S2, E2, layout, c, shift):
    """Per actor the last firing that does not start and end ``shift`` (its move
    over ``c`` iterations) after the one ``c`` iterations before it (-1 if none)."""
    found = []
    rows = len(S2) - c
    for pos, q, moved in zip(layout.pos, layout.q, shift):
        last = -1
        for r in range(rows - 1, -1, -1):
            for j in range(q - 1, -1, -1):
                col = pos + j
                if S2[r + c][col] - S2[r][col] != moved or \
                        E2[r + c][col] - E2[r][col] != moved:
                    last = r * q + j
                    break
            if last >= 0:
                break
        found.append(last)
    return found


def starts(S2, x):
    """The starts of ``x``'s firings of the computed iterations, in order."""
    return [t for row in S2 for t in row[x.pos:x.pos + x.q]]


def lasts(E2, a):
    """The last of each run of equal ends of ``a``'s firings, and those ends."""
    ends = [t for row in E2 for t in row[a.pos:a.pos + a.q]]
    last = [k for k in range(len(ends)) if k + 1 == len(ends) or ends[k + 1] != ends[k]]
    return last, [ends[k] for k in last]
