"""Exhaustive search: every mapping up to interchangeable PEs (one per orbit).

The canonical mappings are enumerated depth-first in lexicographic order, in numpy
batches; the space is split into shards by canonical prefixes of the first actors, so
that shards can run on a Dask cluster.  Ties between equal values go to the
lexicographically smallest mapping, so the answer does not depend on the sharding.
"""
from __future__ import annotations

import numpy as np

from mapping.search.common import SearchError, Tracker, shard_result
from mapping.search.symmetry import Canonical, interchangeable_classes

#: refuse enumerations larger than this unless the budget allows more explicitly
DEFAULT_LIMIT = 200_000_000


def canonical(setup) -> Canonical:
    evs = [c for e in setup.objectives.evaluators for c in e.components]
    P = setup.space.allowed.shape[1]
    if all(e.vectorized for e in evs):
        tables = [e.tables for e in evs]
        traffic = tuple(t for tab in tables for t in (tab.traffic_slope, tab.traffic_base))
        classes = interchangeable_classes(setup.problem, tables[0].route, tables[0].unroutable,
                                          setup.space.allowed, traffic)
    else:
        # costs the tables cannot check (reference fallback): no reduction, to be safe
        classes = [[p] for p in range(P)]
    return Canonical(classes, setup.space.allowed)


def plan(setup, shards: int) -> list[dict]:
    canon = canonical(setup)
    total = canon.count()
    limit = setup.budget if setup.budget is not None else DEFAULT_LIMIT
    if total > limit:
        raise SearchError(f"exhaustive search needs {total:,} evaluations (after removing "
                          f"{setup.space.size - total:,} mappings equivalent under "
                          f"interchangeable PEs), more than the budget of {limit:,}; "
                          "raise --budget or use a heuristic (anneal, genetic, tabu, greedy)")
    depth = 0
    while depth < canon.n_actors and canon.count(depth) < 4 * shards:
        depth += 1
    X, U = canon.prefixes(depth)
    parts = [p for p in np.array_split(np.arange(len(X)), min(shards, len(X))) if len(p)]
    setup.info["classes"] = [[setup.space.pes[p] for p in c] for c in canon.classes if len(c) > 1]
    setup.info["space"] = setup.space.size
    setup.info["count"] = total
    return [{"canon": canon, "X": X[p], "U": U[p]} for p in parts]


def run(task, tracker: Tracker, rng: np.random.Generator):
    canon, X, U = task.params["canon"], task.params["X"], task.params["U"]
    for block in canon.batches(X, U):
        tracker.evaluate(block)
    return shard_result(tracker, optimal=True)
