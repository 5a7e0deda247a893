"""Items of integer sizes into identical bins of one capacity, by heuristics: the
checks of :func:`mapping.search.packing.pack_bins` before its exact program."""
from __future__ import annotations

import numpy as np


def first_fit_decreasing(w, m: int, C: int):
    loads = np.zeros(m, dtype=np.int64)
    bins = np.empty(len(w), dtype=np.intp)
    for i in np.argsort(-w, kind="stable"):
        room = np.flatnonzero(loads + w[i] <= C)
        if not len(room):
            return None
        bins[i] = room[0]
        loads[room[0]] += w[i]
    return bins


def local_packing(w, m: int, C: int, steps: int, seed: int = 0):
    """A packing by descent on the total overflow: from the items spread largest
    first onto the least loaded bin, the best move or exchange out of the most
    overflowing bin, a random exchange where none improves; None after
    ``steps``."""
    rng = np.random.default_rng(seed)
    bins = np.empty(len(w), dtype=np.intp)
    loads = np.zeros(m, dtype=np.int64)
    for i in np.argsort(-w, kind="stable"):
        b = int(np.argmin(loads))
        bins[i] = b
        loads[b] += w[i]
    for _ in range(steps):
        over = np.maximum(loads - C, 0)
        if not over.any():
            return bins
        src = int(np.argmax(over + rng.random(m) * (over > 0)))
        I, J = np.flatnonzero(bins == src), np.flatnonzero(bins != src)
        if not len(J):
            return None

        def gain(leave, to):
            return (over[src] + over[to] - np.maximum(loads[src] - leave - C, 0)
                    - np.maximum(loads[to] + leave - C, 0)).astype(float)

        swap = gain(w[I][:, None] - w[J][None, :], bins[J][None, :])
        move = gain(w[I][:, None], np.arange(m)[None, :])
        move[:, src] = -np.inf
        swap += rng.random(swap.shape) * 1e-3
        move += rng.random(move.shape) * 1e-3
        s = np.unravel_index(np.argmax(swap), swap.shape)
        v = np.unravel_index(np.argmax(move), move.shape)
        if swap[s] >= move[v] and swap[s] > 0.5:
            i, j = I[s[0]], J[s[1]]
        elif move[v] > 0.5:
            i, to = I[v[0]], int(v[1])
            loads[src] -= w[i]
            loads[to] += w[i]
            bins[i] = to
            continue
        else:
            i, j = rng.choice(I), rng.choice(J)
        to = bins[j]
        loads[src] += w[j] - w[i]
        loads[to] += w[i] - w[j]
        bins[i], bins[j] = to, src
    return None
