"""Multilevel search: the greedy engine (:mod:`mapping.search.greedy`) on a hierarchy
of coarsened problems, coarsest first, each level starting from the projection of the
one above; then V-cycles that coarsen only within the PEs of the best mapping so far.

This is the multilevel scheme of graph partitioning (Hendrickson & Leland 1995; Karypis
& Kumar's METIS, 1998) and its iterated V-cycles (Walshaw 2004): a mapping of the
benchmark's problems under ``max`` is a balanced partition whose bottleneck is the bus
(each channel between two parts costs one transfer on it), and single-actor moves
cannot carry a cluster of communicating actors across without first loading the bus.
A coarse node is a set of actors joined by channels (heavy-channel matching, repeated);
moving it moves the whole cluster, so the coarse levels search the partition and the
fine level balances it.

A coarse problem is exact, not a model of the fine one: its tables are the fine
tables with ``proc`` summed over each node's actors and the channels' ends renamed
(inner channels become self-loops on one PE, costing what they cost in the fine
mapping), so a coarse mapping's value is the value of the fine mapping it expands to,
and every coarse evaluation counts as one evaluation of the search.

Cycles form chains: a V-cycle starts from its chain's best mapping, and one that lowers
it by less than :data:`STALL` ends the chain, so that the next cycle starts a new one
from scratch.  At 100 actors × 16 PEs (the benchmark's instance 2, ``max``, 2,000,000
evaluations) the first cycle decides the basin: the first V-cycle after it gained 1-3%
and the next at most 0.4% (16 seeds), while at 300 × 32 (instance 3) each V-cycle
still gained 0.2-4%.  So V-cycles from scratch have half the budget of the chain's
first cycle (:data:`V_CYCLE_SHARE`), which leaves room for a third chain from scratch
where equal cycles gave two.  Together with filling kicks (:meth:`Neighbourhood.fill
<mapping.search.neighbourhood.Neighbourhood.fill>`) the runs within 2% of the best known value
went from 30 to 41-47 of 48 seeds at 100 × 16 over four draws of the random numbers
(mean 0.7320e-4 to 0.7234-0.7253e-4), and with the half-size V-cycles to 183 of 192
(two draws of seeds 0-95; means 0.7211-0.7238e-4).

Where the cluster relaxation applies (:mod:`mapping.search.relaxation`), the search
builds :data:`STARTS` cut starts after its first cycle from scratch
(:mod:`mapping.search.cut_starts`: min-cut partitions over the clusters under a
capacity, each valued once), unless the exploring quarter of them are all more than
:data:`MARGIN` above that cycle's value: then the sweep stops there (at 100 × 16 that
cut a run from 9-18 s to 4-7 s), and those starts, worse than scratch, take no
cycle.  Scratch and the cut starts are two sources of chains: after a first cycle from
scratch, each cycle goes to the source that has found the lower value, the cut starts
competing with their own values (a new cut chain takes the best of the :data:`POOL`
distinct starts not used yet).  So cut starts take the cycles only where they are
already better than a whole cycle from scratch: at 300 × 32 (best starts 1.22-1.31e-4,
a cycle from scratch 1.29-1.48e-4), not at 100 × 16 (0.93e-4, 0.72-0.85e-4), where the
big cores talk over the bus and the partition of merged loads misses what their inner
channels cost.  At 300 × 32 the 1.275e-4 basin that most runs ended in before is the
mirror partition (the little cluster full, the big one light) of the best known
mapping (big full, little light); the cut starts reach the right side of it.  See the
README for the measured effect.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from mapping.search import greedy
from mapping.search.common import Objectives, Space, Tracker, shard_result
from mapping.search.cut_starts import cut_starts
from mapping.search.delta import channel_weights
from mapping.search.partition import matching

#: coarsen until at most this many nodes per PE remain
NODES_PER_PE = 2
#: or until a round of matching leaves more than this share of the nodes
MIN_SHRINK = 0.97
#: V-cycles after the first descent through the levels
CYCLES = 3
#: the budget of a V-cycle, as a share of its chain's first cycle, by the chain's
#: source.  From scratch the first cycle decides the basin (at 100 actors × 16 PEs the
#: first V-cycle gained 1-3% and the next at most 0.4%), so shorter V-cycles leave
#: budget for another chain: 183 of 192 runs came within 2% of the best known value
#: against 174 of 192.  From a cut start the V-cycles do the search (at 300 × 32
#: half-size ones stalled where whole ones went on gaining: seeds 0-31 came within 2%
#: in 29 and 30 of 32 in two variants, against 31 of 32)
V_CYCLE_SHARE = {"scratch": 0.5, "cut": 1.0}
#: a V-cycle that lowers its chain's value by less than this share ends the chain, and
#: the next cycle starts a new one from scratch (its own hierarchy and starts)
STALL = 0.002
#: cut starts built where the cluster relaxation applies; cut chains start from the
#: best :data:`POOL` distinct ones, best first.  At 300 × 32 the start of 1.223e-4
#: leads to the best known basin; seeds 0-7 found it in 2 of 8 with 128 starts and in
#: 7 of 8 with 384 (a quarter of them exploring; with half exploring, 1 of 8 for both);
#: whole runs (2,000,000 evaluations) came within 2% of the best known value in 24 of
#: 32 seeds with 384 starts and 31 of 32 with 512
STARTS = 512
POOL = 16
#: the budget must afford this many evaluations per cut start for them to be built
STARTS_PER_BUDGET = 1000
#: the sweep of cut starts goes on past its exploring starts only if their best is
#: within this share above the first cycle from scratch: at 300 × 32 they were at most
#: 7% above it (best exploring starts 1.27-1.38e-4, cycles 1.29-1.48e-4), at 100 × 16
#: at least 25% (0.96-0.97e-4 against 0.72-0.77e-4), where the full sweep never won
MARGIN = 0.15


class CoarseEvaluator:
    """The fine evaluator seen through ``member`` (fine actor → coarse node): the same
    tables with ``proc`` summed per node and the channel ends renamed; ``evaluate`` of
    a coarse mapping is the fine value of its expansion."""

    def __init__(self, fine, member: np.ndarray, n_nodes: int):
        self.fine, self.member = fine, member
        t = fine.tables
        proc = np.zeros((n_nodes, t.proc.shape[1]))
        np.add.at(proc, member, t.proc)
        self.tables = replace(t, proc=proc, src=member[t.src], dst=member[t.dst])
        self.aggregation = getattr(fine, "aggregation", None)
        self.metric = fine.metric

    def evaluate(self, X) -> np.ndarray:
        return self.fine.evaluate(np.asarray(X)[:, self.member])


def node_allowed(allowed: np.ndarray, node: np.ndarray, n_nodes: int) -> np.ndarray:
    """``(n_nodes, P)``: a node may use the PEs that all its members may use."""
    out = np.ones((n_nodes, allowed.shape[1]), dtype=bool)
    np.logical_and.at(out, node, allowed)
    return out


def coarse_space(space: Space, member: np.ndarray, n_nodes: int) -> Space:
    """The space of the coarse nodes (:func:`node_allowed` of the actors)."""
    return Space([f"~{i}" for i in range(n_nodes)], list(space.pes),
                 node_allowed(space.allowed, member, n_nodes))


def hierarchy(evaluator, space: Space, rng: np.random.Generator, same=None):
    """The members (fine actor → node) of each coarser level, finest first (the fine
    level itself not included): matching rounds until :data:`NODES_PER_PE` nodes per PE
    remain or a round shrinks by less than :data:`MIN_SHRINK`.  With ``same`` (a fine
    mapping) only actors on one PE are joined, so ``same`` is a mapping of every
    level."""
    t = evaluator.tables
    weight = channel_weights(t)
    member = np.arange(len(space.allowed), dtype=np.intp)
    allowed, src, dst = space.allowed, t.src, t.dst
    placed = same
    levels = []
    while allowed.shape[0] > NODES_PER_PE * allowed.shape[1]:
        node = matching(src, dst, weight, allowed, rng, placed)
        n = int(node.max()) + 1
        if n > MIN_SHRINK * allowed.shape[0]:
            break
        member = node[member]
        levels.append(member)
        allowed, src, dst = node_allowed(allowed, node, n), node[src], node[dst]
        if placed is not None:
            nxt = np.empty(n, dtype=np.intp)
            nxt[node] = placed
            placed = nxt
    return levels


def _descend(task, tracker: Tracker, rng, evaluator, space, member, start, budget):
    """The greedy engine on the level ``member`` (None: the fine level) with ``budget``
    evaluations, from the fine mapping ``start`` (None: its own starts): the best fine
    mapping found, counted on ``tracker``, and its value."""
    if member is None:
        ev, sp, n = evaluator, space, len(space.allowed)
    else:
        n = int(member.max()) + 1
        ev, sp = CoarseEvaluator(evaluator, member, n), coarse_space(space, member, n)
    params = {"plateau": 1}
    if start is not None:
        x = np.empty(n, dtype=np.intp)
        x[member if member is not None else np.arange(n)] = start
        params["start"] = x
    sub = replace(task, strategy="greedy", objectives=Objectives([ev]), space=sp,
                  budget=int(budget), params=params)
    inner = Tracker(sub.objectives, task.scalarizer, sub.budget)
    res = greedy.run(sub, inner, rng)
    if res.best_row is None:
        tracker.count(res.evaluations)
        return start, np.inf
    fine = res.best_row if member is None else res.best_row[member]
    tracker.count(max(0, res.evaluations - 1))
    tracker.offer(np.array([res.best_value]), lambda i: fine[None])
    return fine, res.best_value


def _cycle(task, tracker, rng, evaluator, space, x, budget):
    """One pass down the levels: from ``x`` (None: the first pass, whose hierarchy
    ignores any mapping) coarsest level first, ``budget`` evaluations shared evenly; the
    finest level's best mapping and its value."""
    levels = hierarchy(evaluator, space, rng, x)
    share = budget / (len(levels) + 1)
    stop = tracker.evaluations + budget
    for member in reversed(levels):
        x, _ = _descend(task, tracker, rng, evaluator, space, member, x,
                        min(share, tracker.remaining))
    return _descend(task, tracker, rng, evaluator, space, None, x,
                    max(0, min(stop - tracker.evaluations, tracker.remaining)))


def _pool(tracker: Tracker, rng, evaluator, space, scratch: float):
    """The best :data:`POOL` distinct values of :data:`STARTS` cut starts
    (:func:`mapping.search.cut_starts.cut_starts`), best first, with their values, each
    valued once on ``tracker``; empty where they do not apply or the budget is too
    small.  Where the exploring starts are all more than :data:`MARGIN` above
    ``scratch`` (the value of a cycle from scratch) the sweep ends with them."""
    if tracker.budget < STARTS * STARTS_PER_BUDGET:
        return []
    found = cut_starts(evaluator, space, rng, STARTS, tracker.evaluate,
                       worth=lambda best: best <= scratch * (1 + MARGIN))
    if found is None:
        return []
    X, values = found
    pool = []
    for i in np.argsort(values, kind="stable"):
        # starts of one value are almost always one partition: keep the first
        if len(pool) == POOL:
            break
        if not pool or values[i] > pool[-1][1] * (1 + 1e-9):
            pool.append((X[i], float(values[i])))
    return pool


def run(task, tracker: Tracker, rng: np.random.Generator):
    evaluator = task.objectives.evaluators[0]
    space = task.space
    if task.objectives.multi or tracker.budget is None or getattr(
            evaluator, "tables", None) is None or len(space.free) < 2:
        return greedy.run(task, tracker, rng)
    unit = max(1, tracker.remaining // (CYCLES + 1))
    # each source of starts keeps its own chain, and after a first cycle from scratch
    # the cycles go to the source that has found the lower value: the cut starts
    # compete with their own values, so they win only where they are already better
    # than a whole cycle from scratch
    found = {"scratch": np.inf}
    chain = {"scratch": (None, np.inf)}
    pool, drawn = None, 0
    while not tracker.exhausted:
        if pool is None and found["scratch"] < np.inf:
            pool = _pool(tracker, rng, evaluator, space, found["scratch"])
            if pool:
                found["cut"], chain["cut"] = pool[0][1], (None, np.inf)
        source = min(found, key=lambda s: (found[s] < np.inf, found[s]))
        x, value = chain[source]
        fresh = x is None
        if fresh and source == "cut":
            start, value = pool[drawn % len(pool)]     # the best starts first
            x, drawn = start.copy(), drawn + 1
        size = unit if fresh else max(1, int(unit * V_CYCLE_SHARE[source]))
        y, v = _cycle(task, tracker, rng, evaluator, space, x,
                      min(size, tracker.remaining))
        found[source] = min(found[source], v)
        if x is not None and v > value * (1 - STALL):
            chain[source] = (None, np.inf)      # the chain has stalled: a new one
        elif v < value:
            chain[source] = (y.copy(), v)
    return shard_result(tracker)
