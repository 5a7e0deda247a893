"""The packing bound of a bottleneck (``max``) mapping problem (issue 43): the PEs'
loads alone, decided by CP-SAT.

Every PE's load is at least the sum of its actors' own loads (``own`` of
:func:`~mapping.search.bounds.element_tables`: processing, and what an actor's
channels to itself charge); the channels between two actors only add to the loads
(on the CNs, or on the PEs where communication is charged to the cores).  So if no
assignment of the actors puts at most ``T`` of own load on every PE, every mapping's
bottleneck is at least ``T``: a *packing* of items of PE-dependent sizes into the PEs
(scheduling on unrelated machines).  In the computation-dominated regime the packing
is what is left of the gap, and its decision form is what CP-SAT proves quickly where
its minimization, the set-partitioning bound and the relaxations do not (the research
notes).

The decision at ``T`` is exact in integers: one unit is :data:`PRECISION` times the
largest trial value, and sizes are rounded *down* and the capacity ``⌊T / unit⌋``:
a real packing under ``T`` has integer loads at most ``Σ ⌊s⌋ ≤ ⌊Σ s⌋ ≤ ⌊T / unit⌋``,
so "no integer packing" proves "no real packing".  PEs with the same sizes and allowed
actors are interchangeable in the packing: their loads are ordered.
"""
from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass

import numpy as np

from mapping.search.bounds import element_tables

#: one integer unit of size, relative to the largest trial value
PRECISION = 1e-9
#: the first trial lies this far (relative) below the best value known: infeasible
#: there proves that mapping optimal within CP-SAT's tolerance
FIRST = 5e-7
#: the bisection ends when the interval left is this share of its top
RESOLUTION = 1e-6
#: how often (seconds) a decision under way asks ``stop()``
POLL = 0.05


@dataclass(frozen=True)
class PackingBound:
    """``value``: the highest ``T`` proven infeasible (None: none); ``packed``: the
    least packing found (an upper bound on the packing's optimum, above which no bound
    of this kind exists); ``decisions``: ``(T, outcome, seconds)`` in order."""

    value: float | None
    packed: float | None
    decisions: tuple = ()


def sizes(ev) -> np.ndarray:
    """``(A, P)``: each actor's own load on each PE (``inf``: impossible)."""
    return element_tables(ev)[0]


def interchangeable(own: np.ndarray, allowed: np.ndarray) -> list[list[int]]:
    """Classes of PEs with equal sizes and allowed actors (two members or more)."""
    out: dict[bytes, list[int]] = {}
    for p in range(own.shape[1]):
        key = np.where(allowed[:, p], own[:, p], -1.0).tobytes()
        out.setdefault(key, []).append(p)
    return [c for c in out.values() if len(c) > 1]


def bound(own: np.ndarray, allowed: np.ndarray, top: float, floor: float | None = None,
          deadline: float | None = None, stop=None, hint=None) -> PackingBound:
    """The packing bound within ``deadline`` (``time.time()``): first a decision at
    ``top·(1 − FIRST)`` (``top``: the best value known, at most the least packing
    known), then bisection between the highest value proven (``floor`` to start) and
    the least packing found.  ``stop()`` (another thread's request) ends it within
    :data:`POLL` s; ``hint``: a row of PEs to start the search from."""
    usable = allowed & np.isfinite(own)
    A, P = own.shape
    unit = top * PRECISION
    w = np.floor(np.where(usable, own, 0.0) / unit).astype(np.int64)
    classes = interchangeable(own, usable)
    lo, hi = floor or 0.0, top
    proven, decisions = None, []
    T = top * (1 - FIRST)
    while T > lo:
        left = None if deadline is None else deadline - time.time()
        if (left is not None and left <= 0) or (stop is not None and stop()):
            break
        began = time.time()
        status, row = _decide(w, usable, classes, int(math.floor(T / unit)), hint, left,
                              stop)
        decisions.append((T, status, round(time.time() - began, 3)))
        if status == "infeasible":
            proven = lo = T
        elif status == "feasible":
            hi = min(hi, float(np.bincount(row, own[np.arange(A), row], minlength=P).max()))
            hint = row
        else:
            break
        if hi - lo <= RESOLUTION * hi:
            break
        T = 0.5 * (lo + hi)
    return PackingBound(proven, hi if hi < top else None, tuple(decisions))


def _decide(w, usable, classes, capacity: int, hint, left: float | None, stop):
    """Whether the actors of integer sizes ``w`` pack under ``capacity``:
    ``("infeasible" | "feasible" | "unknown", row or None)``."""
    from ortools.sat.python import cp_model
    A, P = w.shape
    model = cp_model.CpModel()
    x = [[model.new_bool_var("") if usable[a, p] else None for p in range(P)]
         for a in range(A)]
    for a in range(A):
        model.add_exactly_one([v for v in x[a] if v is not None])
    loads = [sum(int(w[a, p]) * x[a][p] for a in range(A) if x[a][p] is not None)
             for p in range(P)]
    for load in loads:
        model.add(load <= capacity)
    for members in classes:
        for prev, cur in zip(members[:-1], members[1:]):
            model.add(loads[prev] >= loads[cur])
    if hint is not None:
        for a in range(A):
            for p in range(P):
                if x[a][p] is not None:
                    model.add_hint(x[a][p], int(hint[a] == p))
    solver = cp_model.CpSolver()
    solver.parameters.num_workers = 1
    if left is not None:
        solver.parameters.max_time_in_seconds = max(left, 0.01)
    done = threading.Event()

    def watch():
        while not done.wait(POLL):
            if stop():
                solver.stop_search()
                return

    watcher = threading.Thread(target=watch, daemon=True) if stop is not None else None
    if watcher is not None:
        watcher.start()
    try:
        status = solver.solve(model)
    finally:
        done.set()
        if watcher is not None:
            watcher.join()
    if status == cp_model.INFEASIBLE:
        return "infeasible", None
    if status in (cp_model.FEASIBLE, cp_model.OPTIMAL):
        row = np.array([next(p for p, v in enumerate(xs) if v is not None
                             and solver.boolean_value(v)) for xs in x], dtype=np.intp)
        return "feasible", row
    return "unknown", None


def floor(setup, deadline: float | None = None, lower: float | None = None, best=None,
          stop=None) -> PackingBound:
    """:func:`bound` of ``setup``'s ``max`` objective, from the best mapping known:
    ``best()`` ``(row, value)`` if given (the search running beside), else
    ``setup.info["incumbent"]``; ``lower``: the highest bound proven so far."""
    from mapping.search.exact import mapping_value
    ev = setup.objectives.evaluators[0]
    own = sizes(ev)
    allowed = setup.space.allowed
    row = value = None
    if best is not None:
        row, value = best()
    start = setup.info.get("incumbent")
    if start is not None:
        v = mapping_value(ev, start)
        if value is None or not math.isfinite(value) or v < value:
            row, value = np.asarray(start, dtype=np.intp), v
    if row is None or not math.isfinite(value):
        return PackingBound(None, None)
    A, P = own.shape
    packed = float(np.bincount(row, own[np.arange(A), row], minlength=P).max())
    return bound(own, allowed, min(value, packed), lower, deadline, stop, row)
