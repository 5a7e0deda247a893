"""Min-cut partitioning of a weighted graph into parts of bounded load: the multilevel
scheme (Hendrickson & Leland 1995; Karypis & Kumar's METIS, 1998) with k-way
Fiduccia-Mattheyses refinement (1982).

Each vertex weighs ``load[v, p]`` in part ``p`` (an actor's time on one kind of core or
another) and may take only its ``allowed`` parts; every part's load must stay within
one ``capacity``.  An edge of weight ``w`` between parts ``p`` and ``q`` costs ``w ·
cost[p, q]`` (the plain cut: 1 across, 0 within), and the partition minimizes the total.

The graph is coarsened by matching (:func:`matching`, edges rated ``w² / (|u|·|v|)``
after Holtgrewe, Sanders & Schulz 2010, so that coarse vertices stay alike in weight)
until at most :data:`COARSEST` vertices remain.  The coarsest graph is partitioned
from :data:`INITIAL_TRIES` starts (every vertex in one part, or a random part each),
each refined, the best kept; then it is projected level by level, each refined by FM
passes: move the unlocked vertex (to the part) of highest gain whose move keeps every
part within capacity (or lowers the overflow), lock it, stop after :data:`PATIENCE`
moves without a better prefix, and roll back to the best prefix; passes repeat while
they improve, at most :data:`PASSES`.

Measured on the benchmark's 300 actors × 32 PEs (two classes of cores, capacity the
best known mapping's bottleneck, 40 partitions): heavy-edge matching gave a median cut
of 1.78e-4 s, the rating 1.52e-4; coarsening to 80 vertices rather than 40, 1.46-1.49e-4
(the best known mapping's cut is 1.34e-4; METIS, through pymetis outside the product,
gave a median of 1.66e-4 on the same problem).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

#: coarsen until at most this many vertices remain
COARSEST = 80
#: or until a round of matching leaves more than this share of the vertices
MIN_SHRINK = 0.95
#: starts of the coarsest partition; the best after refinement is kept
INITIAL_TRIES = 2
#: an FM pass stops after this many moves without a better prefix (on the coarsest
#: graph, whose starts are far from balanced, after INITIAL_PATIENCE)
PATIENCE = 15
INITIAL_PATIENCE = 40
#: at most this many FM passes per level
PASSES = 4


def matching(src: np.ndarray, dst: np.ndarray, weight: np.ndarray, allowed: np.ndarray,
             rng: np.random.Generator, same=None) -> np.ndarray:
    """One round of heavy-edge matching: ``(n,)`` the coarse vertex of each of ``n``
    vertices.  Edges are taken heaviest first (random order among equal weights); an
    edge joins its two ends when neither is matched yet, their ``allowed`` rows (the
    parts or PEs each may take) share one and, with ``same`` (a part of each vertex),
    they are in the same part."""
    n = len(allowed)
    order = rng.permutation(len(src))
    order = order[np.argsort(-weight[order], kind="stable")]
    mate = np.full(n, -1, dtype=np.intp)
    for c in order:
        a, b = src[c], dst[c]
        if a == b or mate[a] >= 0 or mate[b] >= 0:
            continue
        if same is not None and same[a] != same[b]:
            continue
        if not (allowed[a] & allowed[b]).any():
            continue
        mate[a], mate[b] = b, a
    lead = np.where(mate >= 0, np.minimum(np.arange(n), mate), np.arange(n))
    _, node = np.unique(lead, return_inverse=True)
    return node.astype(np.intp)


def adjacency(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray
              ) -> sp.csr_matrix:
    """The symmetric ``(n, n)`` adjacency of the edges, parallel edges summed and
    self-loops dropped."""
    keep = src != dst
    a = sp.coo_matrix((weight[keep], (src[keep], dst[keep])), shape=(n, n)).tocsr()
    a = (a + a.T).tocsr()
    a.sum_duplicates()
    return a


def cut(adj: sp.csr_matrix, part: np.ndarray, cost: np.ndarray | None = None) -> float:
    """What the edges cost between (and within) the parts: each edge's weight times
    ``cost[part of one end, part of the other]`` (default: 1 across, 0 within)."""
    coo = adj.tocoo()
    a, b = part[coo.row], part[coo.col]
    factor = (a != b) if cost is None else cost[a, b]
    return float((coo.data * factor).sum()) / 2


class _Level:
    """k-way FM refinement of a partition of one graph under one ``capacity`` per
    part: ``cost (k, k)`` the factor of an edge's weight between two parts."""

    def __init__(self, adj: sp.csr_matrix, load: np.ndarray, allowed: np.ndarray,
                 cost: np.ndarray, capacity: float, tolerance: float, patience: int):
        self.adj, self.load, self.allowed, self.cost = adj, load, allowed, cost
        self.patience = patience
        self.limit = capacity * (1 + tolerance)
        self.xadj, self.adjncy, self.eweight = adj.indptr, adj.indices, adj.data
        # what counts as a better cut or overflow, above rounding
        self.eps = (1e-9 * float(adj.data.sum()) * float(cost.max(initial=0)),
                    1e-12 * capacity)

    def loads(self, part: np.ndarray) -> np.ndarray:
        k = self.load.shape[1]
        return np.bincount(part, self.load[np.arange(len(part)), part], minlength=k)

    def score(self, part: np.ndarray) -> tuple:
        """Lower is better: every part within capacity first, then the cut (else the
        overflow)."""
        over = np.maximum(self.loads(part) - self.limit, 0).sum()
        return (0, cut(self.adj, part, self.cost)) if over <= 0 else (1, over)

    def refine(self, part: np.ndarray) -> np.ndarray:
        part = part.copy()
        for _ in range(PASSES):
            if not self._pass(part):
                break
        return part

    def _pass(self, part: np.ndarray) -> bool:
        """One FM pass on ``part`` (in place, rolled back to its best prefix); whether
        it improved."""
        load, limit, cost = self.load, self.limit, self.cost
        n, k = load.shape
        rows = np.arange(n)
        # each vertex's edge weight into each part, what its edges cost with it in each
        # part, and what moving it to each part gains
        connected = self.adj @ np.eye(k)[part]
        placed = connected @ cost.T
        gain = placed[rows, part][:, None] - placed
        L = self.loads(part)
        free = self.allowed.copy()
        free[rows, part] = False
        cut_now = 0.0
        over = np.maximum(L - limit, 0).sum()
        best = (0, 0.0) if over <= 0 else (1, over)
        moves, best_len, since = [], 0, 0
        while since < self.patience:
            if over <= 0:
                new_over = None
                ok = free & (load <= limit - L)
            else:
                left = np.maximum(L[part] - load[rows, part] - limit, 0) \
                    - np.maximum(L[part] - limit, 0)
                joined = np.maximum(L + load - limit, 0) - np.maximum(L - limit, 0)
                new_over = over + left[:, None] + joined
                ok = free & ((new_over <= 0) | (new_over < over))
            masked = np.where(ok, gain, -np.inf)
            v, j = divmod(int(masked.argmax()), k)
            if not ok[v, j]:
                break
            i = part[v]
            cut_now -= gain[v, j]
            L[i] -= load[v, i]
            L[j] += load[v, j]
            over = 0.0 if new_over is None else max(new_over[v, j], 0.0)
            lo, hi = self.xadj[v], self.xadj[v + 1]
            nb, w = self.adjncy[lo:hi], self.eweight[lo:hi]
            connected[nb, i] -= w
            connected[nb, j] += w
            placed[nb] = connected[nb] @ cost.T
            part[v] = j
            gain[nb] = placed[nb, part[nb]][:, None] - placed[nb]
            gain[v] = placed[v, j] - placed[v]
            free[v] = False
            moves.append((v, i))
            now = (0, cut_now) if over <= 0 else (1, over)
            if now[0] < best[0] or now[0] == best[0] and now[1] < best[1] - self.eps[now[0]]:
                best, best_len, since = now, len(moves), 0
            else:
                since += 1
        for v, i in reversed(moves[best_len:]):
            part[v] = i
        return best_len > 0


def _starts(load: np.ndarray, allowed: np.ndarray, rng: np.random.Generator,
            count: int) -> list[np.ndarray]:
    """Initial partitions of the coarsest graph, alternately every vertex in one random
    part (FM then grows the others out of it) and a random part per vertex."""
    n, k = load.shape
    out = []
    for t in range(count):
        if t % 2 == 0:
            first = rng.permutation(k)
            rank = np.where(allowed[:, first], np.arange(k), k).argmin(axis=1)
            out.append(first[rank])
        else:
            out.append(np.where(allowed, rng.random((n, k)), -1.0).argmax(axis=1))
    return out


def partition(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray,
              load: np.ndarray, allowed: np.ndarray, capacity: float,
              rng: np.random.Generator, cost: np.ndarray | None = None,
              tolerance: float = 0.003, start: np.ndarray | None = None) -> np.ndarray:
    """``(n,)`` the part of each vertex: a multilevel partition (see the module) of the
    graph of ``n`` vertices and the edges ``src``-``dst`` of ``weight`` into ``k``
    parts, each part's load within ``capacity``: ``load (n, k)`` a vertex's weight in
    each part, ``allowed (n, k)`` the parts it may take (at least one), ``cost (k,
    k)`` what an edge of weight 1 costs between two parts (default: 1 across, 0
    within, the plain cut).  With ``start`` (a partition) this is a V-cycle: vertices
    are joined only within its parts, and its projection is the coarsest partition."""
    load = np.asarray(load, dtype=float)
    allowed = np.asarray(allowed, dtype=bool)
    k = load.shape[1]
    cost = _symmetric(cost, k)
    levels = []         # (adjacency, load, allowed, coarse vertex of each finer vertex)
    s, d, w, ld, al = src, dst, np.asarray(weight, dtype=float), load, allowed
    size = n
    same = None if start is None else np.asarray(start, dtype=np.intp)
    while size > COARSEST:
        node = matching(s, d, _rating(w, ld, s, d), al, rng, same)
        m = int(node.max()) + 1
        if m > MIN_SHRINK * size:
            break
        levels.append((adjacency(size, s, d, w), ld, al, node))
        coarse_load = np.zeros((m, k))
        np.add.at(coarse_load, node, ld)
        coarse_allowed = np.ones((m, k), dtype=bool)
        np.logical_and.at(coarse_allowed, node, al)
        s, d, ld, al, size = node[s], node[d], coarse_load, coarse_allowed, m
        if same is not None:
            coarse = np.empty(m, dtype=np.intp)
            coarse[node] = same
            same = coarse
    level = _Level(adjacency(size, s, d, w), ld, al, cost, capacity,
                   _tolerance(ld, capacity, tolerance), INITIAL_PATIENCE)
    initial = _starts(ld, al, rng, INITIAL_TRIES) if same is None else [same]
    part = min((level.refine(p) for p in initial), key=level.score)
    for adj, ld, al, node in reversed(levels):
        part = part[node]
        level = _Level(adj, ld, al, cost, capacity, _tolerance(ld, capacity, tolerance),
                       PATIENCE)
        part = level.refine(part)
    return part.astype(np.intp)


def refine(n: int, src: np.ndarray, dst: np.ndarray, weight: np.ndarray,
           load: np.ndarray, allowed: np.ndarray, capacity: float, part: np.ndarray,
           cost: np.ndarray | None = None) -> np.ndarray:
    """``part`` after FM passes on the graph itself (no coarsening): a partition whose
    parts stay within ``capacity`` (or overflow less) and whose cut is at most
    ``part``'s (the arguments as for :func:`partition`)."""
    load = np.asarray(load, dtype=float)
    level = _Level(adjacency(n, src, dst, np.asarray(weight, dtype=float)), load,
                   np.asarray(allowed, dtype=bool), _symmetric(cost, load.shape[1]),
                   capacity, 0.0, PATIENCE)
    return level.refine(np.asarray(part, dtype=np.intp))


def _symmetric(cost, k: int) -> np.ndarray:
    """The ``(k, k)`` cost per pair of parts, averaged over both directions (an edge has
    no direction); None: the plain cut."""
    cost = 1.0 - np.eye(k) if cost is None else np.asarray(cost, dtype=float)
    return (cost + cost.T) / 2


def _rating(weight, load, src, dst):
    """Edge ratings for matching: ``w² / (|u|·|v|)`` with ``|u|`` a vertex's mean load
    (Holtgrewe, Sanders & Schulz 2010's expansion*²), which favours joining light
    vertices, so that coarse vertices stay alike in weight."""
    size = load.mean(axis=1)
    size = np.where(size > 0, size, size[size > 0].min() if (size > 0).any() else 1.0)
    return weight * weight / (size[src] * size[dst])


def _tolerance(load: np.ndarray, capacity: float, tolerance: float) -> float:
    """The tolerance on a coarse graph: at least half the capacity share of its
    heaviest vertex (each vertex weighed in its lightest part), which one move may need
    to shift."""
    if capacity <= 0:
        return tolerance
    return max(tolerance, float(load.min(axis=1).max() / capacity) / 2)
