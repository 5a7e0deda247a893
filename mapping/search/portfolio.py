"""A portfolio of heuristics: no heuristic wins on every problem, so the islands of one
search run different ones, each with its share of the budget, and the best mapping wins.

A descent from a random mapping takes about one improving move per actor, each costing
a neighbourhood (every other allowed PE of every actor, or the sample of
:data:`mapping.search.greedy.SAMPLE` moves that the delta-evaluated local searches value
on large problems), so:

- the budget is split into at most ``shards`` islands, each affording
  :data:`ISLAND_DESCENTS` descents (one island if the budget is smaller);
- island ``i`` runs :data:`MEMBERS` ``[i mod 4]``, but ``genetic`` where its share does
  not afford :data:`DESCENTS` descents (then a descent would not even finish).

The first island runs ``multilevel`` (:mod:`mapping.search.multilevel`: greedy in
plateau mode on coarsened graphs, then V-cycles), the greedy island as before.
Measured on the benchmark's instances (``max``, 2,000,000 evaluations, 12 seeds): the
plateau greedy island alone averaged 0.7405e-4 at 100 × 16 (instance 2) and 1.305e-4 at
300 × 32 (instance 3, 30 seeds), ``multilevel`` 0.7287e-4 and 1.293e-4.  Before that,
the first island was greedy in plateau mode (plateau walks cut short, no random
restarts, successive halving of its descents, drift between nearby minima:
:mod:`mapping.search.greedy`).  Measured on the benchmark's
100 actors × 16 PEs (``max``, 2,000,000 evaluations, seeds 0-23): with islands that
afford 8 descents (two greedy islands there) the values averaged 0.932e-4 (0.890 to
0.956e-4); with one plateau island up to 100 descents' worth (so that successive
halving has descents to choose from), drift and connected-group kicks, 0.908e-4 (0.890
to 0.953e-4).  At 300 × 32 (one island either way, seeds 0-5) 1.492e-4 against 1.502e-4.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from mapping.search.common import Tracker

MEMBERS = ("multilevel", "greedy", "tabu", "anneal")
#: the parameters of each member (``multilevel`` runs greedy in plateau mode itself)
PARAMS = ({}, {}, {}, {})
#: descents an island's share must afford before the budget is split further (the
#: plateau island's successive halving uses a large share better than more islands)
ISLAND_DESCENTS = 100
#: descents an island's share must afford for ``tabu`` and ``greedy`` to run it
DESCENTS = 2
POPULATION_ONLY = "genetic"


def descent(space) -> int:
    """Evaluations of one descent from a random mapping: actors × the moves valued per
    step (the neighbourhood, or its sample)."""
    from mapping.search.greedy import SAMPLE
    free = space.n_choices[space.free]
    return max(1, len(free) * min(SAMPLE, int(np.sum(free - 1))))


def islands(space, budget: int, shards: int) -> int:
    """How many islands share ``budget``: each affords :data:`ISLAND_DESCENTS`
    descents, at most ``shards``, at least one."""
    return max(1, min(shards, budget // (ISLAND_DESCENTS * descent(space))))


def member(task) -> str:
    """The heuristic the island ``task`` runs."""
    name = MEMBERS[task.index % len(MEMBERS)]
    if name == POPULATION_ONLY or task.budget is None:
        return name
    return name if task.budget >= DESCENTS * descent(task.space) else POPULATION_ONLY


def run(task, tracker: Tracker, rng: np.random.Generator):
    from mapping.search.strategies import STRATEGIES
    params = {**PARAMS[task.index % len(MEMBERS)], **task.params}
    return STRATEGIES.get(member(task))(replace(task, params=params), tracker, rng)
