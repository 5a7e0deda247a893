"""The program of one iteration of the self-timed execution (:mod:`moc.occupancy`): its
firings in an order that their precedences allow, and that program run iteration after
iteration.

Firing ``ν`` of ``b`` starts at the latest end of the producer firings ``w(ν)`` that
write the tokens it reads (``w`` the least with ``M0 + P(w + 1) ≥ C(ν + 1)``,
:mod:`moc.csdf`), of its own earlier firings on a self-loop, and not before its previous
firing; it ends its firing time later, and not before its previous firing ends where
firings end in order (Sriram & Bhattacharyya, *Embedded Multiprocessors*, ch. 3).  An
iteration's firings wait only for firings of the same or earlier iterations, so one
order serves every iteration.  Where the precedences form wide levels (each firing one
level above the highest of the same iteration it waits for; Kahn, 1962), an iteration
is computed a level at a time (:func:`run_levels`); elsewhere the firings follow the
blocks that the tokens allow (:func:`moc.occupancy_lists.blocks`), an actor's block that waits for none of
its own, or each firing for the one before only (a self-loop of one token), computed at
once as running maxima (:func:`_chain`) and the others one by one (:func:`run_program`).
"""
from __future__ import annotations

from itertools import chain

import numpy as np

from moc.occupancy_lists import blocks, ended, grow, offsets, one_by_one, served, \
    writers_read


#: firings per level of one iteration's precedences (on average) from which its
#: firings are computed a level at a time (numpy) rather than one by one: Kiter's
#: autogen5 has 312,485 firings in 470 levels, autogen1 250,992 in 26,045
WIDE_LEVELS = 32
#: the offset that pads a level's table of offsets: any iteration's place for it is
#: negative, clipped to place 0
_PAD = -(2 ** 62)
#: levels found before their average width may decide that they are narrow
FIRST_LEVELS = 64
#: firings computed one by one whose Python lists are made at once (a program run
#: once makes them a chunk at a time and drops each after it)
LISTED = 1 << 16
#: firings of a block of one actor from which, where none waits for another of the
#: block, they are computed as one chain (numpy running maxima) rather than one by one
CHAIN = 32


def iteration_program(actors, total, low=0):
    """``(program, levels, back)``: the firings of one iteration by levels where they
    are wide (:func:`_levels`; ``program`` None), else (``levels`` None) in an order
    that follows their precedences (the blocks that the tokens allow, actor after
    actor), as runs of firings read as lists of ``(index, time, inputs, faster,
    previous)`` (five lists, read zipped: faster made so; :class:`_Firings`) and chains
    (:func:`run_program`): a firing's place in an iteration's times, the offsets (from
    the iteration's first place) of the ends it waits for on ordinary channels and on
    growing ones, and that of its previous firing (every actor's firings start and end
    in order: cyclo-static ones by the rule, SDF ones because their inputs arrive in
    order and their firings all take one time); ``back``: how many iterations back the
    offsets reach.  ``low``: as :func:`moc.occupancy_lists.ended` takes it (then no
    looped chain: a running maximum over prefix sums needs ends that move with their
    starts).  None where one iteration cannot complete."""
    waits_of = {}
    back = 1
    kinds = {}
    for x in actors.values():
        parts = {False: ([], []), True: ([], [])}
        for i in x.ins:
            a = actors[i.src]
            # channels alike (the same counts, tokens and firings) wait alike
            key = (id(i.made), id(i.read), i.delay, x.q, a.q)
            if key not in kinds:
                kinds[key] = _waits(i, x.q, a.q, total)
            found = kinds[key]
            if found is None:
                continue
            waiting, offsets, reach = found
            back = max(back, reach)
            firings, places = parts[i.growing]
            firings.append(waiting)
            places.append(offsets + a.pos)
        waits_of[x.name] = parts
    del kinds
    levels = _levels(actors, waits_of, total)
    if levels is not None:
        return None, levels, back
    # per firing the places it waits for: one table for all actors (an actor's rows a
    # view of it), int32 where the places fit
    xs = list(actors.values())
    waits = [_narrow(*_table([x.pos + f for x in xs for f in waits_of[x.name][g][0]],
                             [o for x in xs for o in waits_of[x.name][g][1]], total))
             for g in (False, True)]
    del waits_of
    serve, tables = {}, {}
    for x in actors.values():
        for i in x.ins:
            if i.src != x.name:
                key = (id(i.made), id(i.read), i.delay, x.q, actors[i.src].q)
                if key not in tables:
                    made = i.made.over(np.arange(actors[i.src].q + 1, dtype=np.int64))
                    # Python integers: :func:`blocks` reads them one at a time
                    tables[key] = np.minimum(served(i, made), x.q).tolist()
                serve[id(i)] = tables[key]
    where = {x.name: k for k, x in enumerate(xs)}
    feeds = [[(serve[id(i)], where[i.src]) for i in x.ins if i.src != x.name] for x in xs]
    order = blocks([x.q for x in xs], feeds)
    del serve, tables, feeds
    if order is None:
        return None                       # not live: the caller's checks say why
    # a tuple a block: ten times the bytes (read flat, half the time of np.array)
    order = np.fromiter(chain.from_iterable(order), dtype=np.int64,
                        count=3 * len(order)).reshape(-1, 3).T
    return _listed(xs, waits, total, *order, looping=not low), None, back


def _waits(i, q, q_src, total):
    """The firings of the consumer (``q`` an iteration) of the input ``i`` that wait
    on it, the offsets of the producer firings they wait for (less the producer's first
    place) and how many iterations back those reach; None where none waits."""
    nu = np.arange(q, dtype=np.int64)
    waits = np.asarray(i.cons, dtype=np.int64)[nu % len(i.cons)] > 0
    if not waits.any():
        return None
    w = writers_read(i, nu)
    # firings start in order: one that waits for the same producer firing as an
    # earlier one of the iteration waits for nothing more
    seen = np.maximum.accumulate(np.where(waits, w, w.min() - 1))
    keep = waits & (w > np.concatenate([[w.min() - 1], seen[:-1]]))
    places, cycles = offsets(w[keep], q_src, total)
    return np.flatnonzero(keep), places, -int(cycles.min())


def _listed(xs, waits, total, blocks, los, his, looping=True):
    """The program of the blocks ``(xs[blocks], los, his)`` in order (see
    :func:`iteration_program`; ``waits``: the :func:`_table` of the places each firing
    waits for on ordinary channels and on growing ones): chains where
    :func:`run_program` may compute them at once, between them runs of firings computed
    one by one (:class:`_Firings`), their arrays made for all firings at once and cut
    between the chains; without ``looping`` no looped chain."""
    pos = np.array([x.pos for x in xs], dtype=np.int64)
    q = np.array([x.q for x in xs], dtype=np.int64)
    first = np.repeat(pos, q)
    place = np.arange(total, dtype=np.int64)
    # the previous firing of an actor's first: the last of the iteration before
    previous = np.where(place > first, place - 1, np.repeat(pos + q - 1 - total, q))
    times = np.concatenate([_times(x) for x in xs])
    sizes = his - los
    ends = np.cumsum(sizes)
    at = np.repeat(pos[blocks] + los - ends + sizes, sizes) + np.arange(total)
    del first, place
    program, done = [], 0
    for k in np.flatnonzero(sizes >= CHAIN).tolist():
        b, lo, hi = xs[blocks[k]], int(los[k]), int(his[k])
        rows = np.arange(b.pos + lo, b.pos + hi)
        slow, fast = (_padded(*table, rows) for table in waits)
        rows -= b.pos
        inside = [t is not None and (t >= b.pos + lo) & (t < b.pos + hi)
                  for t in (slow, fast)]
        looped = inside[0] is not False and bool(inside[0].any())
        if inside[1] is not False and inside[1].any():
            continue
        if looped and not looping:
            continue
        if looped:
            # a self-loop of one token: each firing but the first waits for the one
            # before it and for no other of the block
            prior = (slow == b.pos + rows - 1) & inside[0]
            if not (np.array_equal(inside[0], prior) and prior[:, 1:].any(axis=0).all()):
                continue
            slow = np.where(prior, _PAD, slow)
        if done < ends[k] - sizes[k]:
            program.append(slice(done, int(ends[k] - sizes[k])))
        # a copy: a view would keep all firings' times
        program.append((b.pos + lo, times[b.pos + lo:b.pos + hi].copy(),
                        int(previous[b.pos + lo]),
                        slow, fast, looped))
        done = int(ends[k])
    if done < total:
        program.append(slice(done, total))
    if not any(type(part) is slice for part in program):
        return program
    at, times, previous = _narrow(at, times, previous)
    listed = sum(part.stop - part.start for part in program if type(part) is slice)
    return [_Firings(at[part], times[at[part]], previous[at[part]], *waits)
            if type(part) is slice else part for part in program] + \
        ([_Whole(times, previous, *waits)] if listed >= GUESSED else [])


def _narrow(*arrays):
    """The int64 ``arrays`` as int32 where all their values fit (half the memory)."""
    if all(not len(a) or -2 ** 31 <= int(a.min()) and int(a.max()) < 2 ** 31
           for a in arrays):
        return tuple(a.astype(np.int32) for a in arrays)
    return arrays


class _Firings:
    """Firings computed one by one (:func:`run_program`): their places, times and
    previous firings' places as arrays, and the :func:`_table` of the places each waits
    for on ordinary channels and on growing ones.  Read as :func:`iteration_program`'s
    five lists, made :data:`LISTED` firings at a time: as Python objects a firing takes
    some 200 bytes, as arrays some 50."""

    __slots__ = ("at", "times", "previous", "slow", "fast", "kept")

    def __init__(self, at, times, previous, slow, fast):
        self.at, self.times, self.previous = at, times, previous
        self.slow, self.fast, self.kept = slow, fast, None

    def lists(self, keep):
        """The five lists a chunk at a time; with ``keep`` (a program run for several
        iterations) made once and kept."""
        if self.kept is not None:
            yield from self.kept
            return
        made = []
        for lo in range(0, len(self.at), LISTED):
            at = self.at[lo:lo + LISTED]
            # the tuples made in the order they are read (read faster so)
            columns = (at.tolist(), self.times[lo:lo + LISTED].tolist(),
                       *(_grouped(count[at], flat, first[at])
                         for count, flat, first in (self.slow, self.fast)),
                       self.previous[lo:lo + LISTED].tolist())
            if keep:
                made.append(columns)
            yield columns
        if keep:
            self.kept, self.at, self.times, self.previous = made, None, None, None


def _times(x):
    """The time of each of ``x``'s firings of one iteration: its phases' in turn."""
    return np.tile(x.d, -(-x.q // x.n))[:x.q]


def _table(firings, places, q):
    """The ``places`` listed with ``firings`` (lists of arrays) by firing ``0 .. q-1``:
    ``(count, flat, first)``, firing ``j``'s places being ``flat[first[j]:first[j] +
    count[j]]``."""
    k = np.concatenate(firings) if firings else np.zeros(0, dtype=np.int64)
    p = np.concatenate(places) if places else k
    count = np.bincount(k, minlength=q)
    by = np.argsort(k, kind="stable")
    del k
    return count, p[by], np.cumsum(count) - count


def _grouped(count, flat, first):
    """Per firing the tuple of its places in a :func:`_table`: those of the firings
    with ``k`` places made at once for each ``k`` (zipped, much faster than a slice
    per firing), then put in the firings' order."""
    if not len(flat):
        return [()] * len(count)
    tuples, rows = [], []
    for k in range(int(count.max()) + 1):
        of = np.flatnonzero(count == k)
        tuples += zip(*(flat[first[of] + r].tolist() for r in range(k))) if k else \
            [()] * len(of)
        rows.append(of)
    where = np.empty(len(count), dtype=np.int64)
    where[np.concatenate(rows)] = np.arange(len(count))
    return list(map(tuples.__getitem__, where.tolist()))


def _padded(count, flat, first, rows):
    """The places of a :func:`_table` of the firings ``rows`` as a table, a column per
    firing padded with :data:`_PAD` (a row per rank: the largest over a column is then
    an elementwise maximum of rows, much faster in numpy than along short rows); None
    where none has a place."""
    width = int(count[rows].max()) if len(rows) else 0
    if not width:
        return None
    real = np.arange(width)[:, None] < count[rows]
    table = np.full(real.shape, _PAD, dtype=np.int64)
    table[real] = flat[(first[rows] + np.arange(width)[:, None])[real]]
    return table


def run_program(program, S, E, first, last, total, in_order=True, shift=None,
                since=None, low=0):
    """The starts and ends of iterations ``first .. last-1`` (places counted from the
    iterations before the first firing, all of time 0), appended to ``S`` and ``E``;
    the places whose start a growing channel's producer set.  A program's part is a
    run of firings computed one by one (:func:`iteration_program`'s five lists), or a
    chain: firings ``j = 0 .. n-1`` of one actor that wait for no other of the chain,
    ``s_j = max(s_{j-1}, w_j)`` and ``e_j = max(s_j + d_j, e_{j-1})`` (``w_j`` the
    latest end it waits for, ``s_{-1}`` and ``e_{-1}`` those of the firing before the
    first): running maxima; or (``looped``) each but the first waiting for the one
    before only, ``s_j = max(w_j, e_{j-1})``, ``e_j = s_j + d_j``: a running maximum
    over prefix sums.  Without ``in_order`` (Kiter's order of a cyclo-static actor's
    firings) ``e_j = s_j + d_j``.  ``low``: the ends as
    :func:`moc.occupancy_lists.ended` takes them (``s_j + d_j`` where 0).

    After iteration ``since`` (None: never) an iteration is first guessed
    (:meth:`_Whole.guessed`) from the ones before it and kept where it meets every
    firing's precedences."""
    held = []
    starts, ends = _grown(S, E, (last - first) * total)
    whole = program[-1] if program and type(program[-1]) is _Whole else None
    for it in range(first, last):
        base = it * total
        if whole is not None and since is not None:
            found = whole.guessed(starts, ends, base, total, in_order, shift, it - since,
                                  low)
            if found is not None:
                held += found
                continue
        for part in program:
            if type(part) is _Whole:
                continue
            if type(part) is tuple:
                held += _chain(part, starts, ends, base, in_order, low)
                continue
            for lists in part.lists(last - first > 1):
                one_by_one(lists, S, E, base, in_order, held, low)
    del starts, ends                  # S and E grow again on the next call
    return held


def _grown(S, E, places):
    """``S`` and ``E`` grown by ``places`` times 0, and numpy views of them (to be
    dropped before they grow again)."""
    grow(S, E, places)
    return np.frombuffer(S, dtype=np.int64), np.frombuffer(E, dtype=np.int64)


def _chain(part, starts, ends, base, in_order=True, low=0):
    """Compute the chain ``part`` (see :func:`run_program`) of the iteration at
    ``base``; the places whose start a growing channel's producer set."""
    place, d, previous, slow, fast, looped = part
    at, before = base + place, base + previous
    s0 = starts[before]
    # padding reads place 0 (clipped): an end at time 0, before the first iteration
    w = None if slow is None else _latest(np.take(ends, slow + base, mode="clip"))
    f = None if fast is None else _latest(np.take(ends, fast + base, mode="clip"))
    s = w if f is None else f if w is None else np.maximum(w, f)
    if s is None:
        s = np.full(len(d), s0, dtype=np.int64)
    elif s[0] < s0:
        s[0] = s0
    if looped:
        # e_j = max(s_j, e_{j-1}) + d_j: e_j = Q_j + max(e_0, max_{0<k<=j} s_k - Q_{k-1}),
        # Q_j = d_1 + ... + d_j
        e0 = s[0] + d[0]
        if in_order and e0 < ends[before]:
            e0 = ends[before]
        q = np.cumsum(d) - d[0]
        e = np.concatenate([[e0], s[1:] - q[:-1]])
        np.maximum.accumulate(e, out=e)
        e += q
        s = np.concatenate([s[:1], e[1:] - d[1:]])
    else:
        np.maximum.accumulate(s, out=s)
    held = []
    if f is not None:
        # held where the growing channel's end is later than the start without it (on
        # a self-loop the end before is the start without it)
        without = np.concatenate([[s0], e[:-1] if looped else s[:-1]])
        if w is not None:
            np.maximum(without, w, out=without)
        held = (np.flatnonzero(f > without) + at).tolist()
    if not looped:
        e = ended(s, d, low)
        if in_order:
            if e[0] < ends[before]:
                e[0] = ends[before]
            np.maximum.accumulate(e, out=e)
    starts[at:at + len(d)] = s
    ends[at:at + len(d)] = e
    return held


def _latest(table):
    """Per column the largest of a table's ends (a fresh array)."""
    return table[0] if len(table) == 1 else table.max(axis=0)


def _levels(actors, waits_of, total):
    """The firings of one iteration grouped by level (one more than the highest of the
    firings of the same iteration each waits for), found a level at a time (Kahn's
    topological order, 1962), each level as arrays ``(places, times, previous, slow,
    fast)``, ``slow`` and ``fast`` as a table of the offsets each firing waits for
    (:func:`_padded`; None where no firing has one); None where the levels
    hold fewer than :data:`WIDE_LEVELS` firings on average, known as soon as the levels
    found and the longest chain of an actor's firings still to place make too many, or
    where the first :data:`FIRST_LEVELS` or more levels found hold fewer on average.
    ``waits_of``: per actor, for ordinary and growing channels, the firings that wait
    and the offsets they wait for."""
    xs = list(actors.values())
    q = np.array([x.q for x in xs], dtype=np.int64)
    if WIDE_LEVELS * int(q.max()) > total:
        return None                   # a level holds one firing of an actor at most
    pos = np.array([x.pos for x in xs], dtype=np.int64)
    actor = np.repeat(np.arange(len(xs)), q)
    place = np.arange(total, dtype=np.int64)
    later = place > np.repeat(pos, q)                  # not an actor's first firing
    previous = np.where(later, place - 1, np.repeat(pos + q - 1 - total, q))
    waits, src, dst = [], [previous[later]], [place[later]]
    for growing in (False, True):
        parts = [(x.pos + f, o) for x in xs
                 for f, o in zip(*waits_of[x.name][growing])]
        firing = np.concatenate([f for f, _ in parts] or [place[:0]])
        offset = np.concatenate([o for _, o in parts] or [place[:0]])
        waits.append((firing, offset))
        inside = offset >= 0                           # of the same iteration
        src.append(offset[inside])
        dst.append(firing[inside])
    src, dst = np.concatenate(src), np.concatenate(dst)
    waiting = np.bincount(dst, minlength=total)
    after = dst[np.argsort(src, kind="stable")]
    first = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=total))])
    level = np.zeros(total, dtype=np.int64)
    left = q.copy()
    ready = np.flatnonzero(waiting == 0)
    depth = placed = 0
    while len(ready):
        depth += 1
        placed += len(ready)
        level[ready] = depth
        left -= np.bincount(actor[ready], minlength=len(xs))
        # an actor's firings still to place wait each for the one before
        if WIDE_LEVELS * (depth + int(left.max())) > total or \
                (depth >= FIRST_LEVELS and placed < WIDE_LEVELS * depth):
            return None
        lo, n = first[ready], first[ready + 1] - first[ready]
        reached = after[_spans(lo, n)]
        reached, hits = np.unique(reached, return_counts=True)
        waiting[reached] -= hits
        ready = reached[waiting[reached] == 0]
    if left.any():
        return None
    tables = [_table([firing], [offset], total) for firing, offset in waits]
    times = np.concatenate([_times(x) for x in xs])
    order = np.argsort(level, kind="stable")
    cuts = np.searchsorted(level[order], np.arange(1, depth + 2))
    levels = []
    for lo, hi in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
        rows = order[lo:hi]
        levels.append((rows, times[rows], previous[rows],
                       *(_padded(*table, rows) for table in tables)))
    return levels


def run_levels(levels, S, E, first, last, total, in_order=True, low=0):
    """:func:`run_program` a level at a time: the firings of one level wait only for
    those of earlier levels and iterations."""
    held = []
    starts, ends = _grown(S, E, (last - first) * total)
    for it in range(first, last):
        base = it * total
        for places, d, previous, slow, fast in levels:
            at, before = places + base, previous + base
            s = starts[before]
            if slow is not None:
                # padding reads place 0 (clipped): an end at time 0, before the first
                # iteration
                np.maximum(s, _latest(np.take(ends, slow + base, mode="clip")), out=s)
            if fast is not None:
                f = _latest(np.take(ends, fast + base, mode="clip"))
                up = f > s
                if up.any():
                    held += at[up].tolist()
                    np.maximum(s, f, out=s)
            starts[at] = s
            e = ended(s, d, low)
            ends[at] = np.maximum(e, ends[before]) if in_order else e
    del starts, ends                  # S and E grow again on the next call
    return held


#: firings computed one by one an iteration from which later iterations are first
#: guessed (:class:`_Whole`): a guess costs some twenty numpy calls
GUESSED = 4096
#: rounds of corrections of a guessed iteration (each over the firings whose inputs
#: changed) before it is computed by its program instead: a correction that travels
#: far is a transient, faster one by one
ROUNDS = 16
#: a guess that misses more than one firing in this many is not corrected
MISSED = 64
#: the most iterations after which an execution is guessed to repeat
CYCLES = 4


class _Whole:
    """One iteration's firings all at once: their times, previous firings' places and
    the :func:`_table` of the places each waits for on ordinary and growing channels.
    Every firing's start is the latest of its previous firing's start and the ends it
    waits for, its end its start plus its time and not before its previous firing's
    end (:func:`moc.occupancy_lists.one_by_one`, which the chains compute as running maxima); the
    precedences within an iteration are acyclic (the program's order follows them),
    so the only times that meet all of them are the iteration's, whatever found them."""

    __slots__ = ("times", "previous", "tables", "after", "cycle")

    def __init__(self, times, previous, slow, fast):
        # the program's arrays (int32 where they fit), places made int64 as they are
        # read (base an int64 scalar)
        self.times, self.previous, self.tables = times, previous, (slow, fast)
        self.after = None
        self.cycle = 1

    def guessed(self, starts, ends, base, total, in_order, shift, computed, low=0):
        """The places whose start a growing channel's producer set, with the starts
        and ends of the iteration at ``base`` written, where a guess meets every
        precedence once corrected within :data:`ROUNDS` rounds; else None (its times
        then partly written).  The guess: the iteration ``c`` before moved by ``c``
        times ``shift`` (per place, its actor's period an iteration), or without
        ``shift`` by the difference of the iterations ``c`` and ``2c`` before (an
        execution that repeats every ``c`` iterations: Baccelli et al. 1992), ``c``
        up to :data:`CYCLES` and no further back than the ``computed`` iterations,
        the one that last held first."""
        # moved by ``shift`` from the first iteration computed, too (autogen1's second
        # iteration holds: 0.3 s one by one): a guess that misses much is refused
        # after one pass over the firings
        back = 1 if shift is not None else 2
        if computed < back:
            return None
        for c in sorted(range(1, CYCLES + 1), key=lambda c: c != self.cycle):
            if back * c <= computed:
                found = self._solved(starts, ends, base, total, in_order, shift, c, low)
                if found is not None:
                    self.cycle = c
                    return found
        return None

    def _solved(self, starts, ends, base, total, in_order, shift, c, low):
        """:meth:`guessed` for one ``c``; None also where the guess misses more than
        one firing in :data:`MISSED` (not worth correcting)."""
        now, one, two = (slice(base - k * c * total, base - k * c * total + total)
                         for k in range(3))
        for T in (starts, ends):
            T[now] = T[one] + c * shift if shift is not None else 2 * T[one] - T[two]
        base = np.int64(base)
        rows = None                       # all firings
        s, e, up = self._times(starts, ends, base, total, rows, in_order, low)
        for done in range(ROUNDS + 1):
            at = base + (np.arange(total) if rows is None else rows)
            wrong = (s != starts[at]) | (e != ends[at])
            if not wrong.any():
                break
            if done == ROUNDS or not done and MISSED * int(wrong.sum()) > total:
                return None
            starts[at[wrong]], ends[at[wrong]] = s[wrong], e[wrong]
            rows = self._after(at[wrong] - base, total)
            s, e, _up = self._times(starts, ends, base, total, rows, in_order, low)
        if rows is not None:
            up = self._times(starts, ends, base, total, None, in_order, low)[2]
        return (np.flatnonzero(up) + base).tolist()

    def _times(self, starts, ends, base, total, rows, in_order, low):
        """The starts and ends of firings ``rows`` (None: all) from the times written,
        and whether a growing channel set the start."""
        base = np.int64(base)
        before = base + (self.previous if rows is None else self.previous[rows])
        s = starts[before]
        up = np.zeros(len(s), dtype=bool)
        for (count, flat, first), growing in zip(self.tables, (False, True)):
            n = count if rows is None else count[rows]
            has = np.flatnonzero(n)
            if not len(has):
                continue
            n = n[has]
            lo = np.cumsum(n) - n
            if rows is None:
                at = flat               # a firing's places follow the one before's
            else:
                at = flat[_spans(first[rows[has]], n)]
            latest = np.maximum.reduceat(ends[at + base], lo)
            if growing:
                up[has] = latest > s[has]
            s[has] = np.maximum(s[has], latest)
        e = ended(s, self.times if rows is None else self.times[rows], low)
        return s, np.maximum(e, ends[before]) if in_order else e, up

    def _after(self, rows, total):
        """The firings of the same iteration that wait for one of ``rows`` (from a
        table of them sorted once)."""
        if self.after is None:
            place = np.arange(total, dtype=self.previous.dtype)
            src = [self.previous, *(flat for _, flat, _ in self.tables)]
            dst = [place, *(np.repeat(place, count) for count, _, _ in self.tables)]
            src, dst = np.concatenate(src), np.concatenate(dst)
            inside = src >= 0
            src, dst = src[inside], dst[inside]
            count = np.bincount(src, minlength=total)
            self.after = (count, np.cumsum(count) - count,
                          dst[np.argsort(src, kind="stable")])
        count, first, dst = self.after
        return np.unique(dst[_spans(first[rows], count[rows])])


def _spans(first, n):
    """The positions ``first[i] .. first[i] + n[i] - 1`` of every ``i``, one span after
    the other: the rows ``i`` of a table whose row ``i`` starts at ``first[i]``."""
    lo = np.cumsum(n) - n
    return np.repeat(first - lo, n) + np.arange(int(n.sum()))
