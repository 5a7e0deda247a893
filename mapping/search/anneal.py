"""Simulated annealing (Kirkpatrick et al.) with parallel chains and heat-bath steps.

``chains`` Markov chains run side by side.  At every step one random free actor is
drawn and, in every chain, each allowed PE of that actor is valued (its moves to the
others, or to :data:`WIDTH` of them drawn at random when there are more; all chains in
one call, by delta evaluation where the tables allow it:
:mod:`mapping.search.delta`); each chain then puts the actor on PE ``j`` with
probability ``∝ exp(-f_j / T)`` (heat-bath or Gibbs sampling, Geman & Geman 1984; the
stay included), drawn by the Gumbel-max trick.  The temperature falls geometrically from
one that gives a typical uphill move of one random step probability 1/3 against staying
to a thousandth of it over the chains' share of the budget.  Every valued move is one
evaluation.
"""
from __future__ import annotations

import numpy as np

from mapping.search.common import Tracker, shard_result
from mapping.search.neighbourhood import Neighbourhood

CHAINS = 16
#: at most this many chains (more: bigger batches, fewer steps per chain)
MAX_CHAINS = 512
#: at most this many other PEs valued per chain and step (drawn at random when more)
WIDTH = 8
#: steps per chain and free actor the number of chains leaves at least (400 at least)
STEPS_PER_ACTOR = 20


def run(task, tracker: Tracker, rng: np.random.Generator):
    space = task.space
    nb = Neighbourhood(task, tracker)
    # more chains for larger budgets: bigger batches, enough steps per chain to visit
    # every actor many times
    width = max(1, min(WIDTH, int(np.mean(space.n_choices[space.free])) - 1)) \
        if len(space.free) else 1
    steps = max(400, STEPS_PER_ACTOR * len(space.free))
    K = int(task.params.get("chains", max(CHAINS, min(MAX_CHAINS,
                                                      tracker.remaining // (steps * width)))))
    K = max(1, min(K, tracker.remaining // 8 or 1))
    st = nb.start(space.random(rng, K))
    if st is None or not len(space.free):
        return shard_result(tracker)
    chains = np.arange(K)
    # initial temperature from the uphill moves of one random step
    mv = nb.evaluate(st, chains, *space.random_moves(rng, st.X))
    with np.errstate(invalid="ignore"):
        up = mv.values - st.values[:len(mv.values)]
    up = up[np.isfinite(up) & (up > 0)]
    finite = st.values[np.isfinite(st.values)]
    scale = float(np.median(np.abs(finite))) if len(finite) else 1.0
    T0 = float(np.mean(up)) / np.log(2) if len(up) else max(scale, 1e-300) * 0.1
    steps = max(1, tracker.remaining // (K * width))
    cooling = (1e-3) ** (1.0 / steps)
    T = T0
    lists = {}                  # per actor, fixed arrays: delta evaluation keeps its gathers
    while not tracker.exhausted:
        a = int(space.free[rng.integers(0, len(space.free))])
        if a not in lists:
            k = min(int(space.n_choices[a]) - 1, WIDTH)
            lists[a] = (k, np.repeat(chains, k), np.full(K * k, a, dtype=np.intp))
        k, rows, actors = lists[a]
        shift = None
        if k < space.n_choices[a] - 1:            # k of the other PEs, at random
            keys = rng.random((K, int(space.n_choices[a]) - 1))
            shift = 1 + np.argpartition(keys, k - 1, axis=1)[:, :k]
        mv = nb.evaluate(st, rows, actors, space.alternatives(st.X, a, shift).ravel())
        n = len(mv.values)
        if not n:
            break
        F = np.empty((K, k + 1))
        F[:, 0] = st.values
        if n == K * k:
            F[:, 1:] = mv.values.reshape(K, k)
        else:
            F[:, 1:] = np.inf
            F[:, 1:].flat[:n] = mv.values
        low = F.min(axis=1, keepdims=True)
        with np.errstate(invalid="ignore"):
            score = (low - F) / T                         # -inf for no route
        score += rng.gumbel(size=score.shape)
        j = score.argmax(axis=1)
        lost = np.flatnonzero(np.isinf(low[:, 0]))     # no route anywhere: wander
        j[lost] = rng.integers(1, k + 1, len(lost))
        go = np.flatnonzero((j > 0) & (chains * k + j - 1 < n))
        nb.apply(st, mv, go * k + j[go] - 1)
        T *= cooling
    return shard_result(tracker)
