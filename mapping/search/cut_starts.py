"""Starting mappings from min-cut partitions of the application over the classes of
alike PEs (issue 13).

Under ``max`` on a platform of clusters (little, big, DSP cores behind one bus) a good
mapping is first a partition of the actors over the clusters: each cluster's load
within the bottleneck value, and few channels across the bus, which every such channel
loads.  Single-actor moves cannot change that partition wholesale, and the parametric
min-cut of pricing work finds only trivial ones (most actors' little/big time ratio
equals the clusters' capacity ratio, so their prices cancel); the balance is the
constraint that decides.  So the starts come from the graph partitioner
(:mod:`mapping.search.partition`) run as an epsilon-constraint method: minimize what the
channels cost on the CNs subject to every cluster's average load within a capacity
``λ``, for a sweep of capacities and of the subsets of clusters used (see
:func:`cut_starts`).  Each cluster's actors then go to its cores by longest processing
time first, then FM passes lower what the channels between its cores cost.

The clusters are the classes of the cluster relaxation
(:func:`mapping.search.relaxation.relax`): their loads are its merged ``proc`` columns;
a channel of weight ``w`` (its values on the CNs summed) costs ``w`` times the share of
the CNs on the route between two clusters (between two distinct cores of one cluster
within it), each CN weighted by its share of all communication.

Measured on the benchmark's 300 actors × 32 PEs (instance 3, seeds 0-7): with 128
starts (half exploring) the best starts are 1.223-1.337e-4 s (the best known mapping
1.2164e-4), about what a whole search of 2,000,000 evaluations reached before, and take
3-5 s; with 384 starts, a quarter exploring, 7 of 8 seeds have a start of 1.223e-4 (the
best known basin's; with half exploring 1 of 8), in 10-14 s (512 starts: 14-16 s).
The value of a partition jumps with its capacity (at a fixed capacity the partitioner
mostly returns one partition, at 1% more capacity another, 3-10% apart), so the
focused starts sample capacities densely around the best ones.
"""
from __future__ import annotations

import numpy as np

from mapping.search.delta import channel_weights
from mapping.search.partition import partition, refine
from mapping.search.relaxation import relax

#: the capacities swept: the balanced load times a factor drawn uniformly from this range
CAPACITY = (1.0, 2.0)
#: the share of the starts whose capacities explore :data:`CAPACITY` (with 384 starts
#: at 300 × 32 a quarter found the best basin's start in 7 of 8 seeds, half in 1); the
#: others vary the capacities of the best :data:`FOCUS` starts so far by at most
#: ``STEP`` (logarithmic)
EXPLORE = 0.25
FOCUS = 4
STEP = 0.05
#: a route between clusters that no channel can take costs this many times the dearest
UNROUTABLE = 1e3


def group_costs(tables, groups: list[list[int]]) -> np.ndarray:
    """``(G, G)`` what a channel of weight 1 costs between two groups of PEs (within
    one: between two of its members), the CNs of the route weighted by their shares of
    all communication."""
    P = tables.proc.shape[1]
    route = tables.route.reshape(P, P, -1)
    blocked = tables.unroutable.reshape(P, P)
    total = tables.comm.sum()
    share = tables.comm.sum(axis=0) / total if total > 0 else np.zeros(route.shape[2])
    G = len(groups)
    cost = np.zeros((G, G))
    cut_off = np.zeros((G, G), dtype=bool)
    for i, gi in enumerate(groups):
        for j, gj in enumerate(groups):
            q = gj[-1] if i != j or len(gj) == 1 else gj[1]
            cost[i, j] = route[gi[0], q] @ share
            cut_off[i, j] = blocked[gi[0], q]
    return np.where(cut_off, UNROUTABLE * max(cost.max(), 1.0), cost)


def balanced_load(load: np.ndarray, allowed: np.ndarray) -> float:
    """The load of every class when each actor is shared by the classes it may use as
    parallel resources: ``Σ_a 1 / Σ_c 1/load[a, c]``."""
    with np.errstate(divide="ignore"):
        inverse = np.where(allowed, 1.0 / load, 0.0)
    per_actor = inverse.sum(axis=1)
    with np.errstate(divide="ignore"):
        return float(np.where(per_actor > 0, 1.0 / per_actor, 0.0).sum())


def spread(part: np.ndarray, groups: list[list[int]], tables, cost: np.ndarray
           ) -> np.ndarray:
    """The mapping that puts each class's actors on its members by longest processing
    time first (each to the least loaded member); where channels between two members
    of a class cost (``cost[c, c] > 0``), FM passes then lower what they cost without
    loading any member beyond the most loaded one."""
    x = np.empty(len(part), dtype=np.intp)
    for c, members in enumerate(groups):
        actors = np.flatnonzero(part == c)
        times = tables.proc[actors, members[0]]
        load = np.zeros(len(members))
        slot = np.empty(len(actors), dtype=np.intp)
        for i, time in zip(np.argsort(-times, kind="stable"), np.sort(times)[::-1]):
            m = int(load.argmin())
            slot[i] = m
            load[m] += time
        if cost[c, c] > 0 and len(members) > 1 and len(actors) > 1:
            index = np.full(len(part), -1, dtype=np.intp)
            index[actors] = np.arange(len(actors))
            inner = (part[tables.src] == c) & (part[tables.dst] == c)
            weight = channel_weights(tables)[inner]
            if weight.any():
                slot = refine(len(actors), index[tables.src[inner]],
                              index[tables.dst[inner]], weight,
                              tables.proc[np.ix_(actors, members)],
                              np.ones((len(actors), len(members)), dtype=bool),
                              float(load.max()), slot)
        x[actors] = np.asarray(members)[slot]
    return x


def cut_starts(evaluator, space, rng: np.random.Generator, count: int, evaluate=None,
               worth=None) -> tuple[np.ndarray, np.ndarray] | None:
    """``(count, actors)`` mappings from partitions over the classes of alike PEs (see
    the module) and their values (by ``evaluate``, default the evaluator's), or None
    where the cluster relaxation does not apply.  With ``worth`` (a test of the best
    value found) the sweep stops after the exploring starts unless their best passes
    it, and returns those; it stops too where ``evaluate`` values nothing (a tracker
    out of budget or time), with the starts valued so far.

    The first :data:`EXPLORE` share of the starts each use a random non-empty subset of
    the classes (an actor that may use none of them keeps its own) and a capacity drawn
    from :data:`CAPACITY` times that subset's balanced load; each later start takes the
    subset of one of the best :data:`FOCUS` starts so far and its capacity times
    ``exp(u)``, ``u`` uniform within :data:`STEP`.  Which clusters to use, and the
    capacity at which the cut's load on the CNs meets theirs, depend on the problem."""
    relaxation = relax(evaluator, space.allowed)
    if relaxation is None or count < 1:
        return None
    evaluate = evaluate or evaluator.evaluate
    t = evaluator.tables
    groups = relaxation.classes
    load = relaxation.evaluator.tables.proc
    allowed = relaxation.allowed
    S = len(groups)
    cost = group_costs(t, groups)
    weight = channel_weights(t)
    X = np.empty((count, len(space.allowed)), dtype=np.intp)
    values = np.empty(count)
    capacities = np.empty(count)
    subsets = np.zeros((count, S), dtype=bool)
    explore = max(1, int(EXPLORE * count))
    for k in range(count):
        if k == explore and worth is not None and not worth(values[:k].min()):
            return X[:k], values[:k]
        if k < explore:
            while not subsets[k].any():
                subsets[k] = rng.random(S) < 0.5
            usable = _restrict(allowed, subsets[k])
            capacities[k] = balanced_load(load, usable) * rng.uniform(*CAPACITY)
        else:
            parent = rng.choice(np.argsort(values[:k], kind="stable")[:FOCUS])
            subsets[k] = subsets[parent]
            usable = _restrict(allowed, subsets[k])
            capacities[k] = capacities[parent] * np.exp(rng.uniform(-STEP, STEP))
        part = partition(len(load), t.src, t.dst, weight, load, usable, capacities[k],
                         rng, cost)
        X[k] = spread(part, groups, t, cost)
        valued = evaluate(X[k:k + 1])
        if not len(valued):             # the budget or the time ran out
            return X[:k], values[:k]
        values[k] = valued[0]
    return X, values


def _restrict(allowed: np.ndarray, subset: np.ndarray) -> np.ndarray:
    """``allowed`` limited to the classes of ``subset`` where an actor may use one."""
    inside = allowed & subset
    return np.where(inside.any(axis=1)[:, None], inside, allowed)
