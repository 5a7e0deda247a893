"""Greedy randomized construction of starting mappings (GRASP, Feo & Resende 1995).

Each mapping is built actor by actor in the order of a breadth-first walk over the
channels from a random actor (random neighbour order; then the next unvisited actor), so
an actor is placed after a neighbour it communicates with.  Each actor goes to a PE drawn
uniformly from the restricted candidate list: its allowed PEs whose system value over the
actors placed so far (:meth:`mapping.search.delta.Delta.placements`, the aggregation's
own ``combine``) is within :data:`ALPHA` of the best.  Every valued placement counts as
one evaluation.

Measured as the starts of the plateau greedy island (``max``, 2,000,000 evaluations,
``tests/perf/search_bench.py``'s instance 3 at 300 actors × 32 PEs, seeds 10-39): the
values averaged 1.305e-4 (1.234 to 1.383) against 1.370e-4 (1.295 to 1.414) from random
starts; candidate lists of PEs within 0 or 0.8% of the best gave 1.310e-4 and 1.314e-4,
5% 1.321e-4, 15% 1.342e-4: the starts need both balance and diversity.  At 100 × 16
(instance 0, seeds 0-23) they neither help nor hurt (0.908e-4 either way).
"""
from __future__ import annotations

import numpy as np

#: the restricted candidate list: PEs within this share of the best placement's value
ALPHA = 0.02


def walk_orders(adjacency, n_actors: int, rng: np.random.Generator, count: int
                ) -> np.ndarray:
    """``(count, n_actors)``: breadth-first orders of the actors over the channels, each
    from a random actor, neighbours in random order."""
    src, dst, incident, start, degree = adjacency
    out = np.empty((count, n_actors), dtype=np.intp)
    for k in range(count):
        seen = np.zeros(n_actors, dtype=bool)
        n = 0
        for root in rng.permutation(n_actors):
            if seen[root]:
                continue
            seen[root] = True
            out[k, n] = root
            head, n = n, n + 1
            while head < n:
                u = out[k, head]
                head += 1
                chans = incident[start[u]:start[u] + degree[u]]
                for v in rng.permutation(np.where(src[chans] == u, dst[chans], src[chans])):
                    if not seen[v]:
                        seen[v] = True
                        out[k, n] = v
                        n += 1
    return out


def cost(space, count: int) -> int:
    """Evaluations :func:`construct` spends on ``count`` mappings."""
    return count * int(space.n_choices.sum())


def construct(nb, rng: np.random.Generator, count: int, alpha: float | None = None
              ) -> np.ndarray | None:
    """``count`` mappings built by greedy randomized construction, their placements
    counted on ``nb``'s tracker; None without delta evaluation or within the budget."""
    d, sp, tracker = nb.delta, nb.space, nb.tracker
    if d is None or count < 1 or tracker.remaining < cost(sp, count):
        return None
    alpha = ALPHA if alpha is None else alpha
    A, P = d.n_actors, d.n_pes
    order = walk_orders(nb.adjacency(), A, rng, count)
    X = np.zeros((count, A), dtype=np.intp)
    placed = np.zeros((count, A), dtype=bool)
    pe = np.zeros((P, count))
    cn = np.zeros((d.n_cns, count))
    bad = np.zeros(count, dtype=np.int64)
    rows = np.arange(count)
    for t in range(A):
        a = order[:, t]
        pe_all, cn_all, bad_all = d.placements(pe, cn, bad, X, placed, a)
        v = d.values(pe_all, cn_all, bad_all).reshape(count, P)
        ok = sp.allowed[a]
        v = np.where(ok, v, np.inf)
        low = v.min(axis=1, keepdims=True)
        # the restricted candidate list; where every placement is unroutable, any
        # allowed PE
        rcl = np.where(np.isfinite(low), v <= low * (1 + alpha), ok)
        p = np.where(rcl, rng.random(v.shape), 2.0).argmin(axis=1)
        X[rows, a] = p
        placed[rows, a] = True
        col = rows * P + p
        pe, cn, bad = pe_all[:, col], cn_all[:, col], bad_all[col]
        tracker.count(int(ok.sum()))
    return X
