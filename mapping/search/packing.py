"""Packing rows of a bottleneck (``max``) mapping problem (issue 43): what a PE of
capacity ``T`` can hold, as linear rows that CP-SAT's model takes as redundant
constraints.

Every PE's load is at least the sum of its actors' own loads (``own`` of
:func:`~mapping.search.bounds.element_tables`: processing, and what an actor's channels
to itself charge); communication between actors only adds to it.  So in every mapping
of value at most ``T`` the actors on one PE ``p`` have sizes ``s_a = own[a, p]`` with
``Σ s_a ≤ T``: a bin of a bin packing.  The rows below are the rounding family of dual
feasible functions (Fekete and Schepers, 2001; Martello and Toth's ``L2`` counts the
``k = 1`` row): for ``k ≥ 1``

    Σ_a r_k(s_a)·x[a, p] ≤ k,   r_k(s) = ⌈(k + 1)·s / T⌉ − 1   (0 for s = 0).

Valid: with ``y_a = (k + 1)·s_a / T``, ``Σ y_a ≤ k + 1`` and ``⌈y⌉ − 1 < y`` for
``y > 0``, so ``Σ r_k(s_a) < k + 1``, and an integer below ``k + 1`` is at most ``k``.
For ``k = 1`` it says that two actors larger than half the capacity never share a PE;
for ``k = 2``, that an actor above two thirds counts twice against two above a third.

The linear relaxation (the MILP's, CP-SAT's) spreads actors fractionally and does not
see these rows: in the computation-dominated regime the gap left is that of packing
actors of unequal size into few PEs (the research notes), and the rows are what a
relaxation of the knapsack rows ``Σ s_a·x[a, p] ≤ T`` misses.  In integers (CP-SAT's
sizes rounded down, its capacity ``⌊T / unit⌋``) the same formula holds with ``⌈⌉``
computed exactly: ``r_k(w) = ((k + 1)·w − 1) // cap`` for ``w ≥ 1``.
"""
from __future__ import annotations

import numpy as np

#: the largest ``k`` of the rows: an actor of size at most ``T / (K + 1)`` counts in
#: none; beyond a few actors per PE the rows add little to the knapsack row
ROUNDING_K = 4


def rounding_weights(sizes, capacity: int, k: int) -> np.ndarray:
    """``r_k`` of integer ``sizes`` against the integer ``capacity``: ``⌈(k + 1)·w /
    capacity⌉ − 1`` for ``w ≥ 1``, 0 for ``w = 0`` (see the module); sizes above the
    capacity get their value too (such an actor cannot be on the PE at all)."""
    w = np.asarray(sizes, dtype=np.int64)
    if capacity <= 0:
        raise ValueError(f"the capacity of a packing row must be positive, not {capacity}")
    return np.where(w > 0, ((k + 1) * w - 1) // capacity, 0)


def packing_rows(sizes, usable, capacity: int, k_max: int = ROUNDING_K):
    """The rows of the module for integer ``sizes (A, P)`` over the mask ``usable``
    under ``capacity``: ``(p, k, actors, weights)`` with ``Σ weights·x[actors, p] ≤ k``,
    only those that can bind (their weights' sum above ``k``)."""
    w = np.asarray(sizes, dtype=np.int64)
    usable = np.asarray(usable, dtype=bool)
    rows = []
    for p in range(w.shape[1]):
        on = np.flatnonzero(usable[:, p])
        for k in range(1, k_max + 1):
            r = rounding_weights(w[on, p], capacity, k)
            keep = r > 0
            if r[keep].sum() > k:
                rows.append((p, k, on[keep], r[keep]))
    return rows
