"""Gather tables per group of actors: the search's hot path (:mod:`mapping.evaluation.batch`).

Where every rule is additive and there is no memory traffic (the search's hot path),
aggregations that declare themselves *separable* (``sum``) or *bottleneck* (``max``)
compile further, to tables per *group* of up to 4 (separable) or 3 (bottleneck: paths
of two channels) actors, chosen so that both ends of every channel lie in one group:
the row ``Σ_j X[a_j]·P^(k-1-j)`` of a group's table holds everything the group owns for
that joint placement (its actors' processing, its channels' communication, ``lambda``
folded in), a scalar for separable, a row of 4 element values for bottleneck (CNs over
the channel groups, PEs by halves over groups of consecutive actors).  A mapping then
costs one gather per group (11 scalars for ``sum``, 29 rows for ``max`` on the
20-actor, 30-channel benchmark, instead of 50 and 110), computed in reused buffers
(fresh large temporaries cost page faults) with a narrow-integer Horner index.  For
bottleneck aggregations the group tables are used below :data:`mapping.evaluation.batch.MAX_PLAN_PES` PEs only,
where they are the faster path (:attr:`mapping.evaluation.batch.BatchEvaluator.plan`).
"""
from __future__ import annotations

import heapq
from typing import Iterable

import numpy as np

from mapping.semantics.traffic import charged_paid

#: rows (joint placements) of one group's table: for ``sum`` (scalars) and ``max``
#: (``WIDTH`` element values per row); groups have as many actors as fits
SUM_GROUP_ROWS = 4096
MAX_GROUP_ROWS = 512
PE_GROUP_ROWS = 512
#: at most this many table entries (float64) for the group tables
MAX_TABLE = 1 << 22

WIDTH = 4              # at most this many element values per gathered row for max


def cover(n_actors: int, pairs: Iterable[tuple[int, int]], arity: int) -> list[tuple[int, ...]]:
    """Groups of at most ``arity`` actors such that both ends of every pair lie in one
    group and every actor lies in some group: the fewer of :func:`_grow` and (three
    actors) :func:`_paths`."""
    pairs = list(pairs)
    best = _grow(n_actors, pairs, arity)
    if arity == 3:
        paths = _paths(n_actors, pairs)
        if len(paths) < len(best):
            best = paths
    return best


def _rest(n_actors: int, groups: list[tuple[int, ...]], arity: int) -> list[tuple[int, ...]]:
    covered = {a for g in groups for a in g}
    rest = [a for a in range(n_actors) if a not in covered]
    return groups + [tuple(rest[i:i + arity]) for i in range(0, len(rest), arity)]


def _paths(n_actors: int, pairs: list[tuple[int, int]]) -> list[tuple[int, ...]]:
    """Paths of two pairs (three actors), and at most one lone pair per connected
    component: every connected graph with an even number of edges splits into such
    paths.  Depth-first, children before parents, each actor pairs up its free edges
    and hands a leftover one over with the edge to its parent."""
    adj: dict[int, list[int]] = {}
    seen_edges = set()
    for s, d in pairs:
        e = (min(s, d), max(s, d))
        if s != d and e not in seen_edges:
            seen_edges.add(e)
            adj.setdefault(s, []).append(d)
            adj.setdefault(d, []).append(s)
    used: set[tuple[int, int]] = set()
    groups: list[tuple[int, ...]] = []
    visited: set[int] = set()
    for root in sorted(adj):
        if root in visited:
            continue
        order, parent, stack = [], {root: None}, [root]
        visited.add(root)
        while stack:                    # a node is listed before everything it discovers
            v = stack.pop()
            order.append(v)
            for w in adj[v]:
                if w not in visited:
                    visited.add(w)
                    parent[w] = v
                    stack.append(w)
        for v in reversed(order):
            up = parent[v]
            free = [w for w in adj[v] if w != up and (min(v, w), max(v, w)) not in used]
            while len(free) >= 2:
                a, z = free.pop(), free.pop()
                used.update(((min(v, a), max(v, a)), (min(v, z), max(v, z))))
                groups.append((a, v, z))
            if free:
                a = free.pop()
                used.add((min(v, a), max(v, a)))
                if up is not None:
                    used.add((min(v, up), max(v, up)))
                    groups.append((a, v, up))
                else:
                    groups.append((v, a))
    return _rest(n_actors, groups, 3)


def _grow(n_actors: int, pairs: list[tuple[int, int]], arity: int) -> list[tuple[int, ...]]:
    """Greedy cover: a group starts at the actor with the most pairs still uncovered and
    grows by the neighbour that closes the most."""
    nbrs: dict[int, set[int]] = {}
    for s, d in pairs:
        if s != d:
            nbrs.setdefault(s, set()).add(d)
            nbrs.setdefault(d, set()).add(s)
    heap = [(-len(v), a) for a, v in nbrs.items()]
    heapq.heapify(heap)
    groups: list[tuple[int, ...]] = []
    while heap:
        deg, seed = heapq.heappop(heap)
        if -deg != len(nbrs[seed]):             # stale entry
            if nbrs[seed]:
                heapq.heappush(heap, (-len(nbrs[seed]), seed))
            continue
        if not nbrs[seed]:
            continue
        group = [seed]
        while len(group) < arity:
            gain: dict[int, int] = {}
            for a in group:
                for w in nbrs[a]:
                    if w not in group:
                        gain[w] = gain.get(w, 0) + 1
            if not gain:
                break
            group.append(max(sorted(gain), key=lambda w: (gain[w], len(nbrs[w]))))
        for a in group:
            for b in group:
                nbrs[a].discard(b)
        for a in group:
            if nbrs[a]:
                heapq.heappush(heap, (-len(nbrs[a]), a))
        groups.append(tuple(group))
    return _rest(n_actors, groups, arity)


def arity(P: int, rows: int) -> int:
    """The most actors per group whose table of ``P^k`` rows stays within ``rows``."""
    k = 1
    while k < 4 and P ** (k + 1) <= rows:
        k += 1
    return k


class Part:
    """Tables gathered by one ``take``: ``members`` lists, per segment (summed apart, then
    max-reduced), the group of each of its tables (a group may serve several segments,
    each with its own table); ``columns`` the real columns of each segment (the others
    repeat its first).  Tables are scalars or rows of element values."""

    def __init__(self, tables: list[np.ndarray], members: list[list[int]], columns: list[int]):
        self.groups = np.array([i for m in members for i in m], dtype=np.intp)
        sizes = [len(t) for t in tables]
        self.offsets = np.cumsum([0] + sizes[:-1]).astype(np.intp)[:, None]
        # a one-column table stays 2-D: a scalar table would sum its segments, not take
        # their maximum (max with one PE and one CN)
        self.table = np.concatenate(tables)
        # rows of element values: gathered table by table into a small accumulator (in
        # cache) rather than all at once into a (tables, n, width) block
        self.split = [self.table[o:o + len(t)] for o, t in zip(self.offsets.ravel(), tables)] \
            if self.table.ndim == 2 else None
        self.columns = max(columns)
        bounds = np.cumsum([0] + [len(m) for m in members]).tolist()
        self.segments = list(zip(bounds[:-1], bounds[1:]))


class Plan:
    """Gather tables of groups of actors, evaluated without a Python loop over mappings.

    For a group ``(a_0, …, a_{k-1})`` the row ``Σ_j X[a_j]·P^(k-1-j)`` of its table holds
    the summed cost of everything the group owns for that joint placement, so a mapping's
    value is a sum of one gather per group instead of one per actor and one per channel
    (``sum``: one scalar part; ``max``: the maximum over the columns of every part)."""

    def __init__(self, groups: list[tuple[int, ...]], parts: list[Part], n_actors: int,
                 P: int):
        self.n_actors, self.n_pes, self.parts = n_actors, P, parts
        k = max(len(g) for g in groups)
        # one index row per table of every part (a group serving several segments is
        # recomputed: cheaper than a gather of its row), Horner over right-aligned slots;
        # row n_actors of the transposed X is zeros
        rows = [i for part in parts for i in part.groups]
        self.slots = np.full((k, len(rows)), n_actors, dtype=np.intp)
        self.spans, lo = [], 0
        for part in parts:
            self.spans.append(slice(lo, lo + len(part.groups)))
            lo += len(part.groups)
        for r, i in enumerate(rows):
            g = groups[i]
            self.slots[k - len(g):, r] = g
        top = max(len(part.table) for part in parts)        # table rows, offsets included
        self.itype = np.int16 if top < 2 ** 15 else np.int32 if top < 2 ** 31 else np.intp
        for part in parts:
            part.offsets = part.offsets.astype(self.itype)

    def _buffers(self, n: int) -> dict:
        G = self.slots.shape[1]
        xt = np.empty((self.n_actors + 1, n), dtype=self.itype)
        xt[-1] = 0
        parts = []
        for part in self.parts:
            F, width = len(part.groups), part.table.shape[1:]
            # an intp index: ndarray.take converts any other type into a fresh copy
            parts.append((np.empty((F, n), dtype=np.intp),
                          np.empty((F, n) + width if part.split is None else (n,) + width),
                          np.empty((n,) + width), np.empty((n,) + width)))
        return {"x": np.empty((n, self.n_actors), dtype=self.itype), "xt": xt,
                "idx": np.empty((G, n), dtype=self.itype),
                "tmp": np.empty((G, n), dtype=self.itype), "parts": parts}

    def run(self, X: np.ndarray, out: np.ndarray, chunk: int) -> None:
        """Values of the ``(N, actors)`` rows ``X`` into ``out``, chunk by chunk, in
        buffers allocated once (fresh large temporaries cost page faults)."""
        N, A, P = X.shape[0], self.n_actors, self.n_pes
        slots = self.slots
        unsigned = np.dtype(f"u{X.dtype.itemsize}") if X.dtype.kind == "i" else None
        b = None
        for start in range(0, N, chunk):
            Xc = X[start:start + chunk]
            n = Xc.shape[0]
            if b is None or b["xt"].shape[1] != n:
                b = self._buffers(n)
            xt, idx, tmp = b["xt"], b["idx"], b["tmp"]
            # one pass checks both ends: negative indices are huge once unsigned
            if (Xc.view(unsigned) if unsigned is not None else Xc).max() >= P:
                raise ValueError(f"PE indices must lie in [0, {P})")
            np.copyto(b["x"], Xc, casting="unsafe")         # narrow first, then transpose
            np.copyto(xt[:A], b["x"].T)
            # ndarray.take with positional arguments: numpy's Python wrappers cost µs
            xt.take(slots[0], 0, idx, "clip")
            for row in slots[1:]:
                np.multiply(idx, P, out=idx)
                xt.take(row, 0, tmp, "clip")
                np.add(idx, tmp, out=idx)
            res = out[start:start + n]
            first = True
            for part, span, (flat, vals, top, other) in zip(self.parts, self.spans, b["parts"]):
                sub = idx[span]
                if part.split is None:                              # scalar tables: sum
                    np.add(sub, part.offsets, out=sub)  # narrow, then widen: mixed adds are slow
                    np.copyto(flat, sub)
                    part.table.take(flat, None, vals, "clip")
                    np.add.reduce(vals, 0, out=res)
                    continue
                np.copyto(flat, sub)
                tables = part.split
                for s, (lo, hi) in enumerate(part.segments):
                    acc = top if s == 0 else other
                    tables[lo].take(flat[lo], 0, acc, "clip")
                    for r in range(lo + 1, hi):
                        tables[r].take(flat[r], 0, vals, "clip")
                        np.add(acc, vals, out=acc)
                    if s:
                        np.maximum(top, other, out=top)
                # column by column: 1-D strided maxima are far faster than (n, 2) ones
                for j in range(part.columns):
                    if first:
                        res[:] = top[:, j]
                        first = False
                    else:
                        np.maximum(res, top[:, j], out=res)


def owners(groups, n_actors: int, src: list[int], dst: list[int]):
    """The first group holding each actor and each channel (both ends)."""
    actor_owner, chan_owner = [None] * n_actors, [None] * len(src)
    where: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        for a in g:
            where.setdefault(a, []).append(i)
            if actor_owner[a] is None:
                actor_owner[a] = i
    for c, (s, d) in enumerate(zip(src, dst)):
        chan_owner[c] = next(i for i in where[s] if d in groups[i])
    return actor_owner, chan_owner

def separable_plan(proc: np.ndarray, pair: np.ndarray, src: list[int], dst: list[int]
             ) -> "Plan | None":
    """``sum``: one scalar table per group of actors, holding the processing cost of
    the actors it owns and the (lambda-scaled) cost of the channels it owns."""
    A, P = proc.shape
    k = arity(P, SUM_GROUP_ROWS)
    if k < 2 and len(src):
        return None
    groups = cover(A, zip(src, dst), k)
    if sum(P ** len(g) for g in groups) > MAX_TABLE:
        return None
    grids = [np.indices((P,) * len(g)).reshape(len(g), -1) for g in groups]
    actor_owner, chan_owner = owners(groups, A, src, dst)
    tables = [np.zeros(P ** len(g)) for g in groups]
    slots = [{a: j for j, a in enumerate(g)} for g in groups]
    for a, i in enumerate(actor_owner):
        tables[i] += proc[a][grids[i][slots[i][a]]]
    for c, i in enumerate(chan_owner):
        grid, slot = grids[i], slots[i]
        tables[i] += pair[c][grid[slot[src[c]]] * P + grid[slot[dst[c]]]]
    return Plan(groups, [Part(tables, [list(range(len(groups)))], [1])], A, P)

def bottleneck_plan(proc: np.ndarray, comm: np.ndarray, route: np.ndarray, src: list[int],
             dst: list[int], lam: float, penalty: np.ndarray | None,
             charged: np.ndarray | None) -> "Plan | None":
    """``max``: rows of element values, CNs (scaled by lambda) summed over groups that
    cover the channels, PEs over groups of consecutive actors (and over the channel
    groups too when these charge communication to the end PEs), each in blocks of at
    most ``WIDTH`` columns."""
    (A, P), C = proc.shape, comm.shape[1]
    k = arity(P, PE_GROUP_ROWS)
    cn_groups = cover(A, zip(src, dst),
                       max(arity(P, MAX_GROUP_ROWS), 2)) if C else []
    actor_owner, chan_owner = owners(cn_groups, A, src, dst) if C else ([], [])
    cn_groups = cn_groups[:max(chan_owner, default=-1) + 1]    # those with channels
    pe_groups = [tuple(range(i, min(i + k, A))) for i in range(0, A, k)]
    groups = cn_groups + pe_groups
    charging = charged is not None and bool(cn_groups)
    cn_rows = sum(P ** len(g) for g in cn_groups)
    if cn_rows * (C + WIDTH + (P + WIDTH if charging else 0)) \
            + sum(P ** len(g) for g in pe_groups) * (P + WIDTH) > MAX_TABLE:
        return None
    full = []                                       # (rows, P + C) per group
    for i, g in enumerate(groups):
        grid = np.indices((P,) * len(g)).reshape(len(g), -1)
        slot = {a: j for j, a in enumerate(g)}
        t = np.zeros((P ** len(g), P + C))
        if i < len(cn_groups):
            for c in (c for c, o in enumerate(chan_owner) if o == i):
                pr = grid[slot[src[c]]] * P + grid[slot[dst[c]]]
                t[:, P:] += lam * (route[pr] * comm[c])
                if penalty is not None:
                    t[:, P:] += penalty[pr][:, None]
                if charging:        # each end PE pays its copy
                    rows = np.arange(len(pr))
                    for end in (src[c], dst[c]):
                        np.add.at(t, (rows, grid[slot[end]]),
                                  charged_paid(lam, charged[c][pr]))
        else:
            rows = np.arange(P ** len(g))
            for j, a in enumerate(g):
                np.add.at(t, (rows, grid[j]), proc[a][grid[j]])
        full.append(t)
    # one take for all: blocks of `width` columns (PEs by halves when P > width)
    width = 1 << (min(max(P, C), WIDTH) - 1).bit_length()     # 1, 2, 4 or 8 columns
    tables, members, columns = [], [], []
    # PEs sum the channel groups too when those hold charged communication
    for which, first, count in ((range(len(cn_groups)), P, C),
                                (range(0 if charging else len(cn_groups), len(groups)),
                                 0, P)):
        for lo in range(first, first + count, width):
            cols = list(range(lo, min(lo + width, first + count)))
            columns.append(len(cols))
            cols += [cols[0]] * (width - len(cols))            # pads repeat a column
            members.append(list(which))
            tables += [full[i][:, cols] for i in which]
    return Plan(groups, [Part(tables, members, columns)], A, P)
