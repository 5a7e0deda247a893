"""The split bound: how many actors each side of a group of PEs can hold with every
load at most ``T`` (issue 43).

Take any set ``S`` of PEs (a group of :func:`~mapping.search.partition_bound.charges.
route_cuts`: on a bridged board, the PEs behind one bus) and its complement ``R``.  A
mapping whose every load is at most ``T`` splits the actors into ``U`` on ``S``'s PEs
and ``U'`` on ``R``'s, and its restriction to ``S`` is a *placement* of ``U`` on ``S``
alone: each actor of ``U`` on one PE of ``S``, each PE of ``S`` loaded at most ``T``, each
CN loaded at most ``T`` by the channels among ``U`` (their exact cost) and the channels
from ``U`` to the rest (charged at their least over the other end's PEs in ``R``, as if
it were on the cheapest of them), and the rest's least own loads on ``R`` summing to at
most ``|R|·T``.  Every term is a part of the mapping's true load (all terms are
non-negative), so the restriction satisfies all of it; likewise on ``R``.  Hence, with
``n_S(T)`` the most actors any placement on ``S`` holds and ``n_R(T)`` the same on ``R``,
``|U| + |U'| = A`` gives: if ``n_S(T) + n_R(T) < A``, no mapping has every load at most
``T``, and the optimum exceeds ``T``.  (It is the Lagrangian bound of the two-block
decomposition by sides at uniform multipliers: ``Σπ > max_U π(U) + max_U' π(U')`` with
every ``π_a = 1``.)

Where the partition bound's program mixes halves of different sides and spreads a side's
actors over its PEs in fractions (the research notes on issue 43), a placement is one
integral side with its PEs' and buses' loads together: on ``tests/perf/
bench_exact_max.py``'s communication-heavy 20 x 8 and 30 x 8 (seed 0) it proves the
optimum itself (``T`` 0.01-0.3% below it), where the partition bound stops 3-7% short.
Each ``n`` is a CP-SAT program (the channels charged level by level as in
:mod:`mapping.search.cpsat`; costs rounded down and ``T`` up to whole units, so every
true placement stays a solution and its proven bound stays an upper bound on ``n``):
the larger side's maximized first, then the other's asked whether it holds
``A − n`` actors or more (infeasible: proven).  On 45 x 12 the larger side's program is
proven in about 20 s but the smaller one's is not within a minute: there the bound proves
nothing in its time.
"""
from __future__ import annotations

import math
import threading
import time

import numpy as np

from mapping.search.bounds import element_tables, linear_bottleneck
from mapping.search.common import solver_seconds, stopped
from mapping.search.cpsat import FIRST_TRIAL


def side_tables(own, own_cn, pairs, allowed, S):
    """The tables of a placement on the PEs ``S`` (see the module), the PEs of ``S``
    first and the rest as one last place, ``out``: ``own (A, m + 1)`` (the actor's
    load on each PE of ``S``; 0 out, ``inf`` where it may go nowhere), ``own_cn (A,
    m + 1, C)``, and per pair of actors joined by channels ``W (m + 1, m + 1, m + C)``
    (the PEs of ``S``, then the CNs), an end out at its least over ``R``'s PEs."""
    A, P = own.shape
    R = [p for p in range(P) if p not in S]
    m, C = len(S), own_cn.shape[2]
    ok = allowed & np.isfinite(own)
    o = np.full((A, m + 1), np.inf)
    o[:, :m] = np.where(ok[:, S], own[:, S], np.inf)
    o[:, m] = np.where(ok[:, R].any(axis=1), 0.0, np.inf)
    o_cn = np.zeros((A, m + 1, C))
    o_cn[:, :m] = own_cn[:, S]
    for a in range(A):
        there = [p for p in R if ok[a, p]]
        if there:
            o_cn[a, m] = own_cn[a, there].min(axis=0)
    cols = list(S) + [P + k for k in range(C)]
    out = {}
    for (a, b), W in pairs.items():
        fin = np.where((np.isfinite(W[..., 0]) & ok[a][:, None] & ok[b][None, :])[..., None],
                       W, np.inf)[..., cols]
        ra, rb = [p for p in R if ok[a, p]], [p for p in R if ok[b, p]]
        Wm = np.full((m + 1, m + 1, m + C), np.inf)
        Wm[:m, :m] = fin[np.ix_(S, S)]
        if rb:
            Wm[:m, m] = fin[np.ix_(S, rb)].min(axis=1)
        if ra:
            Wm[m, :m] = fin[np.ix_(ra, S)].min(axis=0)
        if ra and rb:
            Wm[m, m] = fin[np.ix_(ra, rb)].min(axis=(0, 1))
        out[(a, b)] = Wm
    return o, o_cn, out


def _model(tables, T: float, far, alike):
    """CP-SAT's model of the placements on a side at ``T``: ``(model, inside)``,
    ``inside[a]`` the sum of ``a``'s Booleans on the side's PEs.  ``far``: the rest's
    least own loads and their capacity; ``alike``: classes of interchangeable PEs of
    the side (indices in it), used in order of their first actor (the count is the
    same under any exchange of them)."""
    from ortools.sat.python import cp_model
    from mapping.search.cpsat import (PRECISION, channels, in_order, own_loads, placements,
                                      whole)
    own, own_cn, pairs = tables
    A, m1 = own.shape
    m = m1 - 1
    unit = T * PRECISION
    model = cp_model.CpModel()
    x = placements(model, np.isfinite(own), names=False)
    loads = own_loads(x, own, own_cn, m, unit)
    channels(model, x, pairs, loads, unit)
    cap = int(math.ceil(T / unit))
    for t in loads:
        if t:
            model.add(sum(w * v for w, v in t) <= cap)
    least, room = far
    least_i = whole(np.where(np.isfinite(least), least, 0.0), unit)
    terms = [(int(least_i[a]), x[a][m]) for a in range(A) if x[a][m] is not None and least_i[a]]
    if terms:
        model.add(sum(w * v for w, v in terms) <= int(math.ceil(room / unit)))
    in_order(model, x, alike)
    inside = [sum(v for v in x[a][:m] if v is not None) for a in range(A)]
    return model, inside


def _solve(model, seconds: float, stop):
    """CP-SAT on ``model`` within ``seconds``, one worker, stopped within 0.1 s of
    ``stop()``: ``(status, its best bound)``."""
    from ortools.sat.python import cp_model
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = solver_seconds(seconds)
    solver.parameters.num_workers = 1
    done = threading.Event()

    def watch():
        while not done.wait(0.1):
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
        return "infeasible", -math.inf
    if status == cp_model.OPTIMAL:
        return "optimal", solver.objective_value
    if status == cp_model.FEASIBLE:
        return "feasible", solver.best_objective_bound
    return "unknown", math.inf


class Split:
    """The data of the split bound of the compiled ``max`` objective ``ev`` over the
    mask ``allowed`` (None in ``sides`` where it does not apply: not a bottleneck of
    linear loads, no group of PEs, or CP-SAT not installed)."""

    def __init__(self, ev, allowed):
        from mapping.search.cpsat import available
        from mapping.search.partition_bound.charges import Tables
        self.sides = None
        if not linear_bottleneck(ev) or not available():
            return
        tb = Tables(ev, allowed)
        if not tb.groups:
            return
        own, own_cn, pairs = element_tables(ev)
        A, P = own.shape
        S = sorted(tb.groups[0])
        R = [p for p in range(P) if p not in S]
        ok = allowed & np.isfinite(own)
        self.A = A
        self.sides = []
        # the side with more PEs first: its count was the one proven on 45 x 12
        classes = _alike(own, own_cn, pairs, ok)
        for side, other in sorted(((S, R), (R, S)), key=lambda sr: -len(sr[0])):
            alike = [[side.index(p) for p in cl if p in side] for cl in classes]
            least = np.where(ok[:, other], own[:, other], np.inf).min(axis=1)
            self.sides.append((side_tables(own, own_cn, pairs, allowed, side),
                               (least, len(other)), [c for c in alike if len(c) > 1]))

    def decide(self, T: float, deadline: float | None, stop=None):
        """Whether the optimum is proven above ``T``: True, or False (not proven, or
        out of time, or stopped)."""
        if self.sides is None:
            return False
        for i in (0, 1):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            model, inside = self._model(i, T)
            if i == 0:
                model.maximize(sum(inside))
                status, n = _solve(model, 3600.0 if left is None else left / 2, stop)
                if status == "infeasible":
                    return True
                if status == "unknown":
                    return False
            else:
                model.add(sum(inside) >= self.A - int(math.floor(n + 1e-9)))
                status, _ = _solve(model, 3600.0 if left is None else left, stop)
        return status == "infeasible"

    def _model(self, i: int, T: float):
        tables, (least, others), alike = self.sides[i]
        return _model(tables, T, (least, others * T), alike)


def _alike(own, own_cn, pairs, ok) -> list[list[int]]:
    """Classes of PEs that an exchange of two of them leaves every table unchanged
    (own loads, allowed actors, and every channel's cost on every element, the two
    PEs' own entries exchanged too): only those may be used in order."""
    A, P = own.shape
    C = own_cn.shape[2]
    classes: list[list[int]] = []
    for p in range(P):
        for members in classes:
            q = members[0]
            perm = np.arange(P)
            perm[p], perm[q] = q, p
            el = np.concatenate([perm, P + np.arange(C)])
            same = np.array_equal(ok[:, p], ok[:, q]) and \
                np.array_equal(own[:, p], own[:, q]) and \
                np.array_equal(own_cn[:, p], own_cn[:, q]) and \
                all(np.array_equal(W, W[np.ix_(perm, perm)][..., el]) for W in pairs.values())
            if same:
                members.append(p)
                break
        else:
            classes.append([p])
    return classes


def bound(ev, allowed, lower: float, upper: float, deadline: float | None, stop=None,
          first: float = FIRST_TRIAL, resolution: float = 2e-3, bisect: bool = False):
    """The highest ``T`` the split bound proves (the optimum exceeds it) between
    ``lower`` and ``upper`` (a mapping's value) within ``deadline``
    (``time.monotonic()``): first just below ``upper`` (``first``, relative: where it
    proves, the mapping is optimal within it), then a bisection between the highest
    value proven and the lowest not, to ``resolution`` of ``upper``, the first trial
    with all the time, each later one with half the time left (only with ``bisect``:
    the product, :func:`~mapping.search.partition_bound.early`, runs the first trial
    alone, for below a mapping that is not optimal the trials are slow and the core is
    the other bounds'; the research notes, h56prove).  ``(value, trials)``: ``value``
    None where nothing above ``lower`` was proven, ``trials`` the ``(T, proven)``
    pairs."""
    split = Split(ev, allowed)
    trials: list = []
    if split.sides is None:
        return None, trials
    lo, hi, T = None, upper, upper * (1 - first)
    while T > lower:
        now = time.monotonic()
        if stopped(deadline, stop, time.monotonic):
            break
        # the first trial, the cheap proof where the mapping is optimal, may take all
        # the time (30 x 8 under load: 8 s were too few); the bisection's half each
        got = split.decide(T, None if deadline is None else
                           now + (deadline - now) * (0.5 if trials else 1.0), stop)
        trials.append((T, got))
        if got:
            lo = T
        else:
            hi = T
        if not bisect:
            break
        if got and T >= upper * (1 - first) or hi - max(lo or lower, lower) <= resolution * upper:
            break
        T = 0.5 * (max(lo or lower, lower) + hi)
    return lo, trials
