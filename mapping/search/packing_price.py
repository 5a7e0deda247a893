"""The packing decision by branch and price (issue 43): whether the actors of integer
sizes ``w[a, p]`` pack onto the PEs under a capacity ``C``, as
:func:`mapping.search.packing.decide` asks it, decided on the configuration LP.

**The configuration LP** (Gilmore and Gomory, 1961): a column per class ``c`` of alike
PEs (``m_c`` of them) and set ``S`` of actors whose sizes on that class sum to at most
``C``; minimize ``t`` with every actor covered, ``Σ_{(c, S) ∋ a} y ≥ 1``, and every
class using at most ``t·m_c`` of its sets.  Its columns are priced by an exact knapsack
per class (:func:`knapsack`).  For any duals ``π ≥ 0`` of the cover rows, every
packing (whole or fractional) has ``t ≥ Σ_a π_a / Σ_c m_c·K_c(π)``, ``K_c`` the best
knapsack of class ``c`` (a Lagrangian bound: each set's ``π`` is at most its class's
``K_c``).  A bound above 1 proves that no packing fits; it is computed exactly from the
knapsacks, whatever the LP solver's tolerances.

**Branching** (branch and price: Barnhart et al., 1998) on an actor's class: in ``c``,
or not in ``c``, the most fractional share first, depth first, the "in" branch first
(it reaches packings).  Where every actor's class is whole, each class's actors are
packed into its identical PEs exactly (:func:`mapping.search.bins.pack_bins`); where
one class's do not pack, the search branches on an actor of that class not yet fixed
to it.

On an almost even packing this decides what CP-SAT leaves open: 30 x 8 seed 4 of
``tests/perf/bench_exact_max.py`` (every PE within 0.6% of the bottleneck), just below
its best mapping, in 169 nodes and 13 s, where CP-SAT's decision was still undecided
after 300 s (the research notes).
"""
from __future__ import annotations

import time

import numpy as np

from mapping.search.bins import pack_bins
from mapping.search.common import stopped

#: a node is cut off where its bound exceeds 1 by this much (the bound is a ratio of
#: sums of floats of about 50 terms, exact to about 1e-15)
MARGIN = 1e-9
#: a column prices out where its knapsack exceeds its class's dual by this much
PRICING_TOLERANCE = 1e-9
#: rounds of pricing at one node; a node whose LP has not converged by then is
#: branched on its last solution, which is always sound
ROUNDS = 500
#: the share of the time left, and the seconds at most, that a decision of
#: :func:`mapping.search.packing.prove` gives branch and price before CP-SAT's
#: (:func:`until`)
SHARE = 0.5
SECONDS = 30.0


def until(deadline: float | None) -> float:
    """When a decision's branch and price gives way to CP-SAT: :data:`SHARE` of the
    time left before ``deadline`` (``time.time()``), at most :data:`SECONDS`."""
    now = time.time()
    left = SECONDS if deadline is None else SHARE * max(deadline - now, 0.0)
    return now + min(left, SECONDS)


def knapsack(values, weights, capacity: int) -> tuple[float, list[int]]:
    """``(Σ values, items)`` of the best set of items whose integer ``weights`` sum to at
    most ``capacity``: depth-first branch and bound in order of value per weight,
    bounded by the fractional knapsack (Dantzig's bound)."""
    order = sorted((i for i in range(len(values)) if values[i] > 0 and weights[i] <= capacity),
                   key=lambda i: -values[i] / weights[i])
    v = [values[i] for i in order]
    w = [int(weights[i]) for i in order]
    n = len(order)
    best_value, best_set = 0.0, []
    chosen: list[int] = []

    def bound(k, room, value):
        for j in range(k, n):
            if w[j] <= room:
                room -= w[j]
                value += v[j]
            else:
                return value + v[j] * room / w[j]
        return value

    def search(k, room, value):
        nonlocal best_value, best_set
        if value > best_value:
            best_value, best_set = value, list(chosen)
        if k == n or bound(k, room, value) <= best_value:
            return
        if w[k] <= room:
            chosen.append(order[k])
            search(k + 1, room - w[k], value + v[k])
            chosen.pop()
        search(k + 1, room, value)

    search(0, int(capacity), 0.0)
    return best_value, best_set


class _Node:
    """The actors fixed to a class (``inside``) and the pairs excluded (``outside``)."""

    __slots__ = ("inside", "outside")

    def __init__(self, inside: dict, outside: frozenset):
        self.inside, self.outside = inside, outside

    def allows(self, a: int, c: int) -> bool:
        fixed = self.inside.get(a)
        return (fixed is None or fixed == c) and (a, c) not in self.outside


def decide(w: np.ndarray, usable: np.ndarray, groups, capacity: int,
           deadline: float | None = None, stop=None):
    """``("infeasible" | "feasible" | "unknown", row)`` as
    :func:`mapping.search.packing.decide`: ``row`` the PE of each actor where a packing
    under ``capacity`` is found; "unknown" past ``deadline`` (``time.time()``) or once
    ``stop()``."""
    from scipy.optimize import linprog
    A = w.shape[0]
    C = int(capacity)
    sizes = [w[:, members[0]] for members in groups]
    fits = np.array([usable[:, members[0]] & (w[:, members[0]] <= C) for members in groups]).T
    counts = np.array([len(members) for members in groups], dtype=float)
    # the columns found, shared by every node: (class, actors), in the order found
    pool = dict.fromkeys((c, (a,)) for a in range(A) for c in range(len(groups))
                         if fits[a, c])

    def solve(node: _Node):
        """``(cut, shares)``: whether the node admits no packing, else each actor's
        share of each class in its last LP solution; None once out of time (or where
        the LP solver fails)."""
        allowed = [[fits[a, c] and node.allows(a, c) for c in range(len(groups))]
                   for a in range(A)]
        if not all(any(row) for row in allowed):
            return True, None
        for _ in range(ROUNDS):
            if stopped(deadline, stop):
                return None
            columns = [(c, S) for c, S in pool if all(allowed[a][c] for a in S)]
            n = len(columns)
            rows = np.zeros((A + len(groups), n + 1))
            for j, (c, S) in enumerate(columns):
                rows[list(S), j] = -1.0
                rows[A + c, j] = 1.0
            rows[A:, n] = -counts
            limits = np.concatenate([-np.ones(A), np.zeros(len(groups))])
            cost = np.zeros(n + 1)
            cost[n] = 1.0
            lp = linprog(cost, A_ub=rows, b_ub=limits, bounds=(0, None), method="highs")
            if lp.status != 0:          # always feasible: a solver's failure proves nothing
                return None
            duals = np.maximum(-lp.ineqlin.marginals, 0.0)
            pi, mu = duals[:A], duals[A:]
            best = []
            for c in range(len(groups)):
                values = [float(pi[a]) if allowed[a][c] else 0.0 for a in range(A)]
                best.append(knapsack(values, sizes[c], C))
            denominator = sum(counts[c] * best[c][0] for c in range(len(groups)))
            if float(pi.sum()) > (1 + MARGIN) * denominator:
                return True, None
            priced = [c for c in range(len(groups))
                      if best[c][0] > mu[c] + PRICING_TOLERANCE and best[c][1]]
            for c in priced:
                pool.setdefault((c, tuple(sorted(best[c][1]))))
            if not priced:
                break
        shares = np.zeros((A, len(groups)))
        for j, (c, S) in enumerate(columns):
            if lp.x[j] > 0:
                shares[list(S), c] += lp.x[j]
        return False, shares

    stack = [_Node({}, frozenset())]
    while stack:
        node = stack.pop()
        solved = solve(node)
        if solved is None:
            return "unknown", None
        cut, shares = solved
        if cut:
            continue
        split = [(abs(shares[a, c] - 0.5), a, c) for a in range(A)
                 for c in range(len(groups)) if 1e-6 < shares[a, c] < 1 - 1e-6]
        if split:
            _, a, c = min(split)
        else:
            cls = shares.argmax(axis=1)
            row = np.full(A, -1, dtype=np.intp)
            failed = None
            for c, members in enumerate(groups):
                on = np.flatnonzero(cls == c)
                got, bins = pack_bins(sizes[c][on], len(members), C, deadline, stop)
                if got == "unknown":
                    return "unknown", None
                if got == "infeasible":
                    failed = c, on
                    break
                row[on] = np.asarray(members)[bins]
            if failed is None:
                return "feasible", row
            c, on = failed
            free = [int(a) for a in on if node.inside.get(int(a)) != c]
            if not free:
                continue        # the actors fixed to the class do not pack
            a = free[0]
        stack.append(_Node(node.inside, node.outside | {(a, c)}))
        stack.append(_Node({**node.inside, a: c}, node.outside))
    return "infeasible", None
