"""A portfolio of heuristics: no heuristic wins on every problem, so the shards
(islands) of one search run different ones, each with its share of the budget, and the
best mapping wins.

On the benchmark (``tests/perf/search_bench.py``, ``max``, 2,000,000 evaluations)
``greedy`` and ``tabu`` were best at 100 actors × 16 PEs and worst at 300 × 32, where
``genetic`` was best: a descent from a random mapping takes about one improving move per
actor, each costing a whole neighbourhood (actors × other PEs evaluations), and at 300
actors a shard's share cannot pay for one descent.  So shard ``i`` runs
:data:`MEMBERS` ``[i mod 3]`` when its share affords :data:`DESCENTS` descents, and
``genetic`` otherwise; with the default four shards that is ``genetic``, ``greedy``,
``tabu`` and ``genetic`` again, the most robust of them.
"""
from __future__ import annotations

import numpy as np

from mapping.search.common import Tracker

MEMBERS = ("genetic", "greedy", "tabu")
#: the descents a shard's share must afford for ``greedy`` and ``tabu`` to take part
DESCENTS = 2
POPULATION_ONLY = "genetic"


def member(task) -> str:
    """The heuristic the shard ``task`` runs."""
    name = MEMBERS[task.index % len(MEMBERS)]
    if name == POPULATION_ONLY or task.budget is None:
        return name
    free = task.space.n_choices[task.space.free]
    descent = len(free) * int(np.sum(free - 1))   # improving moves × neighbourhood size
    return name if task.budget >= DESCENTS * descent else POPULATION_ONLY


def run(task, tracker: Tracker, rng: np.random.Generator):
    from mapping.search.strategies import STRATEGIES
    return STRATEGIES.get(member(task))(task, tracker, rng)
