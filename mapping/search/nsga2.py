"""NSGA-II (Deb, Pratap, Agarwal & Meyarivan 2002): the Pareto front of several
objectives, non-convex parts included, in numpy over the batch evaluator.

A population of ``N`` mappings evolves by binary tournaments on (non-domination rank,
crowding distance), uniform crossover and per-gene mutation to another allowed PE; each
generation's children are evaluated in one batch, and the next population is the best
``N`` of parents and children (duplicates dropped): whole fronts by rank, the last one
cut by crowding distance.  Selection never adds objectives up, so it keeps mappings that
no weighted sum of the objectives would ever pick (those inside the dents of a
non-convex front), which the other heuristics, each steered by one weighted sum, miss.
The front reported is the archive of every non-dominated mapping evaluated.
"""
from __future__ import annotations

import numpy as np

from mapping.search.common import Tracker, shard_result

POPULATION = 100
MAX_POPULATION = 400


def ranks(F: np.ndarray, enough: int | None = None) -> np.ndarray:
    """Non-domination rank of each row of ``F`` (0: the non-dominated ones; rows with a
    non-finite value rank after all others): the fast non-dominated sort of Deb et al.
    2002 §III-A, with the domination counts as one matrix.  With ``enough``, sorting
    stops once that many rows are ranked (the others share the next rank)."""
    n = len(F)
    finite = np.all(np.isfinite(F), axis=1)
    out = np.full(n, n, dtype=np.int64)
    idx = np.flatnonzero(finite)
    G = F[idx]
    if F.shape[1] == 1:                                  # one objective: ranks of values
        out[idx] = np.unique(G[:, 0], return_inverse=True)[1]
        return out
    le = np.all(G[:, None, :] <= G[None, :, :], axis=2)
    lt = np.any(G[:, None, :] < G[None, :, :], axis=2)
    dominates = (le & lt).astype(np.float64)            # [i, j]: i dominates j
    count = dominates.sum(axis=0)
    left = np.ones(len(idx), dtype=bool)
    r = done = 0
    while left.any():
        if enough is not None and done >= enough:
            out[idx[left]] = r
            break
        front = left & (count == 0)
        done += int(front.sum())
        out[idx[front]] = r
        left &= ~front
        count -= front @ dominates
        r += 1
    return out


def crowding(F: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """Crowding distance of each row within its front (Deb et al. 2002 §III-B): the sum
    over objectives of the gap between its two neighbours, divided by the front's range;
    the ends of each front get ``inf``, rows with non-finite values 0."""
    out = np.zeros(len(F))
    idx = np.flatnonzero(np.all(np.isfinite(F), axis=1))
    if not len(idx):
        return out
    G, R = F[idx], rank[idx]
    total = np.zeros(len(idx))
    for j in range(F.shape[1]):
        order = np.lexsort((G[:, j], R))                 # by front, then by objective j
        v, r = G[order, j], R[order]
        first = np.concatenate([[True], r[1:] != r[:-1]])
        last = np.concatenate([r[1:] != r[:-1], [True]])
        seg = np.cumsum(first) - 1
        span = (v[last] - v[first])[seg]
        inner = ~first & ~last & (span > 0)
        gap = np.zeros(len(v))
        k = np.flatnonzero(inner)
        gap[k] = (v[k + 1] - v[k - 1]) / span[k]
        gap[first | last] = np.inf
        total[order] += gap
    out[idx] = total
    return out


def survivors(F: np.ndarray, N: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The ``N`` best rows of ``F`` by (rank, crowding distance): (indices, their ranks,
    their crowding distances)."""
    rank = ranks(F, N)
    crowd = crowding(F, rank)
    keep = np.lexsort((-crowd, rank))[:N]
    return keep, rank[keep], crowd[keep]


def run(task, tracker: Tracker, rng: np.random.Generator):
    space = task.space
    A = len(space.actors)
    N = int(task.params.get("population",
                            max(POPULATION, min(MAX_POPULATION, tracker.remaining // 100))))
    N = max(4, min(N, tracker.remaining // 4 or 4))
    pop = space.random(rng, N)
    _, F = tracker.evaluate_all(pop)
    if len(F) < N or not len(space.free):
        return shard_result(tracker)
    keep, rank, crowd = survivors(F, N)
    pop, F = pop[keep], F[keep]
    p_mut = 1.0 / len(space.free)
    while not tracker.exhausted:
        # binary tournaments: lower rank, then larger crowding distance
        i, j = rng.integers(0, len(pop), (2, 2, N))
        better = (rank[i] < rank[j]) | ((rank[i] == rank[j]) & (crowd[i] > crowd[j]))
        mothers, fathers = np.where(better, i, j)
        children = np.where(rng.random((N, A)) < 0.5, pop[mothers], pop[fathers])
        mutate = (rng.random((N, A)) < p_mut) & (space.n_choices > 1)
        if mutate.any():
            children = np.where(mutate, space.random(rng, N), children)
        same = np.all(children == pop[mothers], axis=1)
        if same.any():
            children[same] = space.random_move(rng, children[same])
        _, Fc = tracker.evaluate_all(children)
        if not len(Fc):
            break
        X = np.vstack([pop, children[:len(Fc)]])
        FF = np.vstack([F, Fc])
        _, first = np.unique(X, axis=0, return_index=True)
        first.sort()
        keep, rank, crowd = survivors(FF[first], N)
        pop, F = X[first][keep], FF[first][keep]
    return shard_result(tracker)
