"""A portfolio of heuristics: no heuristic wins on every problem (issue 13 measured
``tabu`` best at 100 actors and worst at 300), so the shards (islands) of one search run
different ones, each with its share of the budget, and the best mapping wins.

Shard ``i`` runs :data:`MEMBERS` ``[i mod len(MEMBERS)]``; with the default four shards
that is one island each of ``genetic``, ``tabu`` and ``anneal`` and a second
``genetic``, the most robust of them on the benchmark (``tests/perf/search_bench.py``).
"""
from __future__ import annotations

import numpy as np

from mapping.search.common import Tracker

MEMBERS = ("genetic", "tabu", "anneal")


def member(index: int) -> str:
    """The heuristic shard ``index`` runs."""
    return MEMBERS[index % len(MEMBERS)]


def run(task, tracker: Tracker, rng: np.random.Generator):
    from mapping.search.strategies import STRATEGIES
    return STRATEGIES.get(member(task.index))(task, tracker, rng)
