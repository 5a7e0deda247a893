"""Tabu search (Glover): the best non-tabu single-actor move at every step.

The whole neighbourhood is evaluated in one batch.  Moving an actor away from a PE makes
moving it back tabu for a seeded random tenure around half the number of free actors;
a tabu move is taken anyway if it beats the best mapping seen (aspiration).  Without
improvement for a while, the search restarts from a random mapping.
"""
from __future__ import annotations

import numpy as np

from mapping.search.common import Tracker, shard_result


def run(task, tracker: Tracker, rng: np.random.Generator):
    space = task.space
    A, P = space.allowed.shape
    if not len(space.free):
        tracker.evaluate(space.random(rng, 1))
        return shard_result(tracker)
    base = max(2, len(space.free) // 2)
    patience = max(20, 4 * len(space.free))
    while not tracker.exhausted:
        x = space.random(rng, 1)[0]
        f = tracker.evaluate(x[None])
        if not len(f):
            break
        fx = best = f[0]
        tabu = np.zeros((A, P), dtype=np.int64)
        it = stale = 0
        while not tracker.exhausted and stale < patience:
            it += 1
            Y, actors, pes = space.neighbours(x)
            f = tracker.evaluate(Y)
            if not len(f):
                break
            actors, pes = actors[:len(f)], pes[:len(f)]
            ok = (tabu[actors, pes] < it) | (f < best)
            cand = np.flatnonzero(ok) if ok.any() else np.arange(len(f))
            i = cand[int(np.argmin(f[cand]))]
            a = actors[i]
            tabu[a, x[a]] = it + base + int(rng.integers(0, base + 1))
            x, fx = Y[i], f[i]
            if fx < best:
                best, stale = fx, 0
            else:
                stale += 1
    return shard_result(tracker)
