"""Simulated annealing (Kirkpatrick et al.) with parallel chains.

``chains`` Markov chains run side by side: at every step each proposes one random
single-actor move, all proposals are evaluated in one batch, and each chain accepts its
own by the Metropolis rule.  The temperature falls geometrically from one that accepts
a typical uphill move half of the time to a thousandth of it over the chain's share of
the budget.
"""
from __future__ import annotations

import numpy as np

from mapping.search.common import Tracker, shard_result

CHAINS = 16


def run(task, tracker: Tracker, rng: np.random.Generator):
    space = task.space
    # more chains for larger budgets: bigger batches, same number of steps per chain
    K = int(task.params.get("chains", max(CHAINS, min(512, tracker.remaining // 400))))
    K = max(1, min(K, tracker.remaining // 8 or 1))
    X = space.random(rng, K)
    fX = tracker.evaluate(X)
    if len(fX) < K or not len(space.free):
        return shard_result(tracker)
    # initial temperature from the uphill moves of one probing step
    Y = space.random_move(rng, X)
    fY = tracker.evaluate(Y)
    with np.errstate(invalid="ignore"):
        up = (fY - fX[:len(fY)])
    up = up[np.isfinite(up) & (up > 0)]
    finite = fX[np.isfinite(fX)]
    scale = float(np.median(np.abs(finite))) if len(finite) else 1.0
    T0 = float(np.mean(up)) / np.log(2) if len(up) else max(scale, 1e-300) * 0.1
    steps = max(1, tracker.remaining // K)
    cooling = (1e-3) ** (1.0 / steps)
    T = T0
    while not tracker.exhausted:
        Y = space.random_move(rng, X)
        fY = tracker.evaluate(Y)
        n = len(fY)
        if not n:
            break
        with np.errstate(invalid="ignore", over="ignore"):
            delta = fY - fX[:n]
            accept = (delta <= 0) | (rng.random(n) < np.exp(-np.where(np.isnan(delta), 0.0, delta)
                                                              / T))
        accept |= ~np.isfinite(fX[:n])
        idx = np.flatnonzero(accept)
        X[idx], fX[idx] = Y[idx], fY[idx]
        T *= cooling
    return shard_result(tracker)
