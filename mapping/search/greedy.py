"""Greedy: steepest descent on single-actor moves, restarted until the budget is spent.

Each step evaluates the whole neighbourhood of the current mapping (every actor moved to
every other allowed PE) in one batch and takes the best move; at a local minimum it
restarts from a seeded random mapping.  The first start is the best of a random sample.
"""
from __future__ import annotations

import numpy as np

from mapping.search.common import Tracker, shard_result


def run(task, tracker: Tracker, rng: np.random.Generator):
    space = task.space
    first = True
    while not tracker.exhausted:
        sample = space.random(rng, min(64, max(1, tracker.remaining // 8)) if first else 1)
        first = False
        f = tracker.evaluate(sample)
        if not len(f):
            break
        i = int(np.argmin(f))
        x, fx = sample[i], f[i]
        while not tracker.exhausted:
            Y, _, _ = space.neighbours(x)
            if not len(Y):
                break
            f = tracker.evaluate(Y)
            if not len(f):
                break
            i = int(np.argmin(f))
            if not f[i] < fx:
                break
            x, fx = Y[i], f[i]
        if not len(space.free):
            break
    return shard_result(tracker)
