"""Greedy: steepest descent on single-actor (and, for ``max``, pair) moves, iterated with
large-neighbourhood kicks, several descents side by side.

``K`` descents run together: at every step the whole neighbourhood of each (every free
actor moved to every other allowed PE; a random sample of :data:`SAMPLE` moves when it
is larger: then :data:`FIRST_SAMPLE` while nearly every descent improves, doubled as
they stall) is valued in one call, by delta evaluation where the tables allow it
(:mod:`mapping.search.delta`), and each descent takes its best move while it improves.
Under a bottleneck aggregation (``max``) a sampled step (a neighbourhood larger than
:data:`SAMPLE`) also values as many pair moves (a channel's ends moved together, or two
actors swapped: :meth:`Neighbourhood.pairs`; they cost three times a single move, and
small problems reach their best known values without them), and
a move that keeps the value but lowers the pressure (:meth:`Delta.pressure`) counts as
improving: the maximum has plateaus where several elements tie.  Measured on the
benchmark (``tests/perf/search_bench.py``, 2,000,000 evaluations, one descent island):
pair moves took 100 actors × 16 PEs from about 0.98e-4 to 0.94e-4 and 300 × 32 from
about 1.73e-4 to 1.64e-4; the tie-break from 1.06e-4 and 1.82e-4 before.
At a local minimum (sampled: no improving move in a neighbourhood's worth of samples) a
descent is kicked from the best minimum of its walk: a connected group of actors, grown
from one that loads its bottleneck element (``max``; any free actor for other
aggregations), moves to one random allowed PE (ruin: :meth:`Neighbourhood.ruin`), or,
under a bottleneck aggregation in a share :data:`mapping.search.neighbourhood.FILL` of the kicks,
a PE with room takes a region grown around a random actor (:meth:`Neighbourhood.fill`),
and the descent re-places what it must (recreate). After :data:`KICKS` kicks
without a better minimum it restarts from a random mapping. The first start is the best
of a random sample, the others random mappings; under a bottleneck aggregation as many
starts as :data:`START_SHARE` of the budget pays for are greedy randomized constructions
instead (:mod:`mapping.search.construct`).  Every candidate move is one evaluation.

With ``params["start"]`` (a mapping: the projection that a multilevel search,
:mod:`mapping.search.multilevel`, hands down a level) every descent starts from it.
With ``params["plateau"]`` (the multilevel search's descents) a descent also counts as
stuck after :data:`FLAT` steps without a lower value (a plateau walk that only lowers the
pressure, which on 300 actors took nearly the whole budget: one kick in 2,000,000
evaluations), it is never restarted from a random mapping, and at each share of the
budget in :data:`HALVINGS` the worse half of the descents (by their best minimum) stop,
so that the survivors descend deeper (successive halving: the basin is chosen early),
and a kick's new minimum is kept unless it is worse than the one kicked by more than
:data:`DRIFT` (otherwise a walk returns to one minimum until a kick happens to go
lower, and the halving keeps walks stuck in the basins of ``max`` where the bus and the
little cores tie).  Measured on the benchmark at 300 × 32 (``max``, 2,000,000
evaluations, seeds 0-2): 1.459/1.457/1.463e-4 against 1.520/1.665/1.686e-4 without plateau
mode (seeds 3-5 gave 1.556/1.493/1.583e-4: the spread is wide); at 100 × 16 (one
plateau island, seeds 0-23) drift and connected-group kicks took the mean from 0.921e-4
(12 seeds) to 0.908e-4, and 2% drift beat 1% (0.916e-4) and 3% (0.917e-4, 12 seeds).
"""
from __future__ import annotations

import numpy as np

from mapping.search import construct
from mapping.search.common import Tracker, shard_result
from mapping.search.neighbourhood import Neighbourhood

#: steps each descent should get at least before more descents run side by side
STEPS = 200
MAX_DESCENTS = 16
#: kicks from one minimum before a random restart
KICKS = 8
#: moves valued per descent and step: the whole neighbourhood up to this size, else a
#: random sample of this many
SAMPLE = 1024
#: relative tolerance of equal values and of a lower pressure (a plateau move)
TIE = 1e-12
#: pair moves (:meth:`Neighbourhood.pairs`, bottleneck aggregations) valued per sampled
#: single move
PAIRS = 1.0
#: the sample of the first steps (doubled while fewer than half the descents improve,
#: halved while nearly all do)
FIRST_SAMPLE = 32
#: with ``params["plateau"]``: a descent whose value has not fallen for this many steps
#: (a plateau walk that only lowers the pressure) counts as stuck and is kicked
FLAT = 20
#: with ``params["plateau"]``: the shares of the budget after which the worse half of
#: the descents stop (successive halving: the survivors get the rest)
HALVINGS = (0.25, 0.5, 0.75)
#: under a bottleneck aggregation the descents start from greedy randomized
#: constructions (:mod:`mapping.search.construct`), as many as this share of the budget
#: pays for (the others from random mappings)
START_SHARE = 0.1
#: with ``params["plateau"]``, under a bottleneck aggregation: a kicked descent's new
#: minimum replaces the one it was kicked from unless it is worse by more than this
#: share (the walk drifts between nearby minima instead of returning to one until a
#: kick happens to go lower)
DRIFT = 0.02


def kick_size(n_free: int) -> int:
    """How many actors a kick re-places."""
    return max(2, min(8, n_free // 5))


def run(task, tracker: Tracker, rng: np.random.Generator):
    space = task.space
    nb = Neighbourhood(task, tracker)
    sample = space.random(rng, min(64, max(1, tracker.remaining // 8)))
    f = tracker.evaluate(sample)
    if not len(f) or not len(space.free):
        return shard_result(tracker)
    N = len(space.moves_of(sample[:0])[0])
    K = int(task.params.get("descents", min(MAX_DESCENTS, max(1, tracker.remaining
                                                             // (min(N, SAMPLE) * STEPS)))))
    plateau = bool(task.params.get("plateau"))
    drift = DRIFT if plateau and nb.bottleneck_aggregation else 0.0
    first = sample[int(np.argmin(f))][None]
    starts = np.vstack([first, space.random(rng, K - 1)]) if K > 1 else first
    # as many constructed starts as START_SHARE of the budget pays for
    built = min(K, int(START_SHARE * tracker.remaining) // max(1, construct.cost(space, 1))) \
        if nb.bottleneck_aggregation else 0
    if "start" in task.params:
        # a multilevel search's projected mapping starts every descent
        starts = np.repeat(np.asarray(task.params["start"], dtype=np.intp)[None], K, axis=0)
        built = 0
    X = construct.construct(nb, rng, built) if built else None
    if X is not None:
        starts[:built] = X
    st = nb.start(starts)
    if st is None:
        return shard_result(tracker)
    anchor, anchor_f = st.X.copy(), st.values.copy()
    fails = np.zeros(K, dtype=np.int64)
    idle = np.zeros(K, dtype=np.int64)
    flat = np.zeros(K, dtype=np.int64)
    kicks = np.inf if plateau else KICKS
    cuts = [h * tracker.budget for h in HALVINGS] if plateau and tracker.budget else []
    size = kick_size(len(space.free))
    # whole neighbourhoods where they fit the sample, else a small sample first
    least = SAMPLE if N <= SAMPLE else FIRST_SAMPLE
    sample = least
    while not tracker.exhausted:
        if cuts and tracker.evaluations >= cuts[0]:
            cuts.pop(0)
            # successive halving: the descents whose best minimum (or current value) is
            # worse stop; the basin is chosen early, the survivors descend deeper
            order = np.lexsort((nb.pressure(st) if nb.bottleneck_aggregation
                                else np.zeros(K), np.minimum(st.values, anchor_f)))
            keep = np.sort(order[:max(1, K // 2)])
            st = nb.subset(st, keep)
            anchor, anchor_f = anchor[keep], anchor_f[keep]
            fails, idle, flat = fails[keep], idle[keep], flat[keep]
            K = len(keep)
        before = st.values.copy()
        rows, actors, pes, per, full = nb.candidates(st.X, rng, sample)
        two = nb.pairs(st.X, rng, max(1, int(per * PAIRS))) if PAIRS and not full else None
        if two is None:
            mv = nb.evaluate(st, rows, actors, pes)
        else:
            q = len(two[0]) // K
            wide = per + q
            actors = np.hstack([actors.reshape(K, per), two[0].reshape(K, q)]).ravel()
            pes = np.hstack([pes.reshape(K, per), two[1].reshape(K, q)]).ravel()
            actors2 = np.hstack([np.full((K, per), -1), two[2].reshape(K, q)]).ravel()
            pes2 = np.hstack([np.full((K, per), -1), two[3].reshape(K, q)]).ravel()
            rows = np.repeat(np.arange(K), wide)
            mv = nb.evaluate(st, rows, actors, pes, actors2, pes2)
            per = wide
        if len(mv.values) < len(rows):
            break
        V = mv.values.reshape(K, per)
        S = nb.pressure(mv)
        if S is None:
            j = V.argmin(axis=1)
            down = V[np.arange(K), j] < st.values
        else:
            # lexicographic (value, pressure): plateau moves that unload busy elements
            low = V.min(axis=1)
            level = V <= low[:, None] * (1 + TIE)
            j = np.where(level, S.reshape(K, per), np.inf).argmin(axis=1)
            cur = st.values * (1 + TIE)
            down = (low < st.values) | ((low <= cur)
                                        & (S.reshape(K, per)[np.arange(K), j]
                                           < nb.pressure(st) * (1 - TIE)))
        nb.apply(st, mv, (np.arange(K) * per + j)[down])
        idle[down] = 0
        idle[~down] += 1
        fell = st.values < before * (1 - TIE)
        flat[fell] = 0
        flat[~fell] += 1
        # a small sample while most descents improve (far from a minimum), a larger
        # one as improving moves become rare
        share = down.mean()
        if share < 0.5 and sample < SAMPLE:
            sample *= 2
        elif share > 0.9 and sample > least:
            sample //= 2
        # a local minimum: no improving move, or none in the samples of a neighbourhood's
        # worth of steps
        stuck = np.flatnonzero((idle >= (1 if full else -(-N // per)))
                               | (plateau & (flat >= FLAT)))
        if not len(stuck):
            continue
        idle[stuck] = 0
        flat[stuck] = 0
        better = st.values[stuck] < anchor_f[stuck] * (1 + drift)
        won, lost = stuck[better], stuck[~better]
        anchor[won], anchor_f[won] = st.X[won], st.values[won]
        fails[won] = 0
        fails[lost] += 1
        fresh = stuck[fails[stuck] > kicks]
        fails[fresh] = 0
        anchor_f[fresh] = np.inf
        kicked = stuck[fails[stuck] <= kicks]
        base = anchor[kicked]
        # the kick starts from the walk's best minimum
        Y = nb.kick(base, rng, size)
        new = np.vstack([Y, space.random(rng, len(fresh))])
        if not nb.replace(st, np.concatenate([kicked, fresh]), new):
            break
    return shard_result(tracker)
