"""A genetic algorithm: tournament selection, uniform crossover, per-gene mutation to
another allowed PE, and elitism; each generation is evaluated in one batch."""
from __future__ import annotations

import numpy as np

from mapping.search.common import Tracker, shard_result

POPULATION = 64
ELITE = 2


def run(task, tracker: Tracker, rng: np.random.Generator):
    space = task.space
    A = len(space.actors)
    N = int(task.params.get("population", max(POPULATION, min(1024, tracker.remaining // 100))))
    N = max(4, min(N, tracker.remaining // 4 or 4))
    pop = space.random(rng, N)
    fit = tracker.evaluate(pop)
    if len(fit) < N or not len(space.free):
        return shard_result(tracker)
    p_mut = 1.0 / max(1, len(space.free))
    while not tracker.exhausted:
        n_child = N - ELITE
        # binary tournaments
        a, b = rng.integers(0, N, (2, 2, n_child))
        ma = np.where(fit[a[0]] <= fit[b[0]], a[0], b[0])
        pa = np.where(fit[a[1]] <= fit[b[1]], a[1], b[1])
        mask = rng.random((n_child, A)) < 0.5
        children = np.where(mask, pop[ma], pop[pa])
        mutate = (rng.random((n_child, A)) < p_mut) & (space.n_choices > 1)
        if mutate.any():
            fresh = space.random(rng, n_child)
            children = np.where(mutate, fresh, children)
        # avoid wasting evaluations on exact copies of the parents
        same = np.all(children == pop[ma], axis=1)
        if same.any():
            children[same] = space.random_move(rng, children[same])
        f = tracker.evaluate(children)
        if not len(f):
            break
        children = children[:len(f)]
        elite = np.argsort(fit, kind="stable")[:ELITE]
        pop = np.vstack([pop[elite], children, pop[:N - ELITE - len(children)]])[:N]
        fit = np.concatenate([fit[elite], f, fit[:N - ELITE - len(f)]])[:N]
    return shard_result(tracker)
