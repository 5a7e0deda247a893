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

The first greedy island runs in plateau mode (:data:`PARAMS`; plateau walks cut short,
no random restarts, successive halving of its descents: :mod:`mapping.search.greedy`),
the second as before: at 300 actors × 32 PEs (one island) plateau mode took ``max`` at
2,000,000 evaluations from 1.520/1.665/1.686e-4 (seeds 0-2) to 1.459/1.457/1.463e-4,
while at 100 × 16 plain descents were as good or better on some seeds.  Two greedy
islands beat greedy and tabu at 100 × 16 (0.922e-4 against 0.932e-4 on average over
six seeds), and one island beats two at 300 × 32.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from mapping.search.common import Tracker

MEMBERS = ("greedy", "greedy", "tabu", "anneal")
#: the parameters of each member: the first greedy island cuts plateau walks short and
#: halves its descents (:data:`mapping.search.greedy.FLAT`, ``HALVINGS``)
PARAMS = ({"plateau": 1}, {}, {}, {})
#: descents an island's share must afford before the budget is split further
ISLAND_DESCENTS = 8
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
