"""Tabu search (Glover): the best non-tabu single-actor move at every step, several walks
side by side.

``K`` walks run together; the whole neighbourhood of each (a random sample of
``greedy.SAMPLE`` moves when it is larger) is valued in one call, by delta evaluation
where the tables allow it (:mod:`mapping.search.delta`). Moving an actor away from a PE
makes moving it back tabu for a seeded random tenure around half the number of free
actors; a tabu move is taken anyway if it beats the walk's best (aspiration); ties
between the best moves are drawn at random. Without improvement for a while a walk
restarts: for a bottleneck aggregation (``max``) by a large-neighbourhood kick from its
best mapping (a connected group of actors from the bottleneck element moved to one
PE, or a PE with room filled with a grown region: :meth:`Neighbourhood.kick`), after
:data:`KICKS` fruitless kicks (and for other
aggregations always) from a random mapping. Every candidate move is one evaluation.
"""
from __future__ import annotations

import numpy as np

from mapping.search.common import Tracker, shard_result
from mapping.search.neighbourhood import Neighbourhood
from mapping.search.greedy import MAX_DESCENTS, SAMPLE, STEPS, TIE, kick_size

KICKS = 4


def run(task, tracker: Tracker, rng: np.random.Generator):
    space = task.space
    A, P = space.allowed.shape
    nb = Neighbourhood(task, tracker)
    if not len(space.free):
        tracker.evaluate(space.random(rng, 1))
        return shard_result(tracker)
    N = len(space.moves_of(np.zeros((0, A), dtype=np.intp))[0])
    K = int(task.params.get("walks", min(MAX_DESCENTS, max(1, tracker.remaining
                                                          // (min(N, SAMPLE) * STEPS)))))
    base = max(2, len(space.free) // 2)
    patience = max(20, 4 * len(space.free))
    size = kick_size(len(space.free))
    st = nb.start(space.random(rng, K))
    if st is None:
        return shard_result(tracker)
    walks = np.arange(K)
    best_f, best_X = st.values.copy(), st.X.copy()
    stale = np.zeros(K, dtype=np.int64)
    kicks = np.zeros(K, dtype=np.int64)
    tabu = np.zeros((K, A, P), dtype=np.int64)
    it = 0
    while not tracker.exhausted:
        it += 1
        rows, actors, pes, per, _ = nb.candidates(st.X, rng, SAMPLE)
        mv = nb.evaluate(st, rows, actors, pes)
        if len(mv.values) < len(rows):
            break
        V = mv.values.reshape(K, per)
        ok = (tabu[rows, actors, pes].reshape(K, per) < it) | (V < best_f[:, None])
        ok[~ok.any(axis=1)] = True
        # the best allowed move, ties (plateaus of max, no route anywhere) drawn at random
        Vm = np.where(ok, V, np.inf)
        ties = ok & (Vm <= Vm.min(axis=1, keepdims=True) * (1 + TIE))
        S = nb.pressure(mv)
        # among equal values the least pressure (bottleneck aggregations), else at random
        key = rng.random(V.shape) if S is None else S.reshape(K, per)
        chosen = walks * per + np.where(ties, key, np.inf).argmin(axis=1)
        moved = actors[chosen]
        tabu[walks, moved, st.X[walks, moved]] = it + base + rng.integers(0, base + 1, K)
        nb.apply(st, mv, chosen)
        better = st.values < best_f
        best_f[better], best_X[better] = st.values[better], st.X[better]
        stale[better] = kicks[better] = 0
        stale[~better] += 1
        done = np.flatnonzero(stale >= patience)
        if not len(done):
            continue
        kick = done[kicks[done] < KICKS] if nb.bottleneck_aggregation else done[:0]
        fresh = np.setdiff1d(done, kick)
        kicks[kick] += 1
        kicks[fresh] = 0
        stale[done] = 0
        tabu[done] = 0
        new = np.vstack([nb.kick(best_X[kick], rng, size), space.random(rng, len(fresh))])
        if not nb.replace(st, np.concatenate([kick, fresh]), new):
            break
        best_f[fresh], best_X[fresh] = st.values[fresh], st.X[fresh]
    return shard_result(tracker)
