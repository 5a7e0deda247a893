"""The master linear program of the set-partitioning bound
(:mod:`mapping.search.partition_bound`) and its column generation at one trial value.
"""
from __future__ import annotations

import math
import time

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix

from mapping.search.partition_charges import Tables
from mapping.search.partition_pricing import KICKS, Problem

#: a column prices out when its reduced cost is below this (relative to ``T``)
EPSILON = 1e-7
#: columns added per class and round by the local search
PER_ROUND = 4
#: kicks before an exact pricing (whose programs cost a second or two each)
DEEP_KICKS = 40
#: the cost of leaving an actor uncovered in the master program (relative to ``T``)
UNCOVERED = 1e3


class Master:
    """The columns of one trial value and their master linear program."""

    def __init__(self, tb: Tables, T: float):
        self.tb, self.T = tb, T
        self.cls: list[int] = []
        self.S: list[np.ndarray] = []
        self.cost: list[np.ndarray] = []
        self.load: list[float] = []
        self.seen: set = set()
        self.last = np.zeros(0)

    def add(self, k: int, s: np.ndarray, load: float) -> bool:
        key = (k, s.tobytes())
        if key in self.seen or not s.any():
            return False
        self.seen.add(key)
        tb, col = self.tb, self.tb.pe[k]
        x = s.astype(float)
        e = x[tb.a] * x[tb.b]
        one = x[tb.a] + x[tb.b] - 2 * e
        self.cost.append(x @ col.own_cn + e @ col.inner_cn + one @ col.cut_cn)
        self.cls.append(k)
        self.S.append(s.copy())
        self.load.append(load)
        return True

    def solve(self):
        """The master program: ``(z, π, μ, ν, ρ per class, uncovered)``."""
        tb, T = self.tb, self.T
        A, C, K = tb.A, tb.C, len(tb.classes)
        G, J = len(tb.groups), len(tb.a)
        n = len(self.S)
        # variables: λ (n), u (A), t (G·J), z
        nt = G * J
        nv = n + A + nt + 1
        cost = np.zeros(nv)
        cost[n:n + A] = UNCOVERED
        cost[-1] = 1.0 / T
        Smat = np.array(self.S, dtype=float).reshape(n, A)
        cls = np.array(self.cls, dtype=np.intp)
        # cover (equalities)
        Aeq = np.concatenate([Smat.T, np.eye(A), np.zeros((A, nt + 1))], axis=1)
        ub_rows, ub_rhs = [], []
        count = np.zeros((K, nv))
        count[cls, np.arange(n)] = 1.0
        ub_rows.append(count)
        ub_rhs.append(np.array([len(c) for c in tb.classes], dtype=float))
        cn = np.zeros((C, nv))
        cn[:, :n] = np.array(self.cost).reshape(n, C).T / T
        if nt:
            cn[:, n + A:n + A + nt] = tb.gweight.reshape(nt, C).T / T
        cn[:, -1] = -1.0 / T
        ub_rows.append(cn)
        ub_rhs.append(np.zeros(C))
        if nt:
            member = np.array([tb.pe[k].member for k in range(K)], dtype=float)  # (K, G)
            # y_G(a) − y_G(b) per (G, j): λ coefficient member[cls, G]·(S[a] − S[b])
            diff = Smat[:, tb.a] - Smat[:, tb.b]                                 # (n, J)
            ycoef = (member[cls][:, :, None] * diff[:, None, :]).reshape(n, nt)  # (n, G·J)
            tpart = np.zeros((nt, nv))
            tpart[np.arange(nt), n + A + np.arange(nt)] = -1.0
            plus = tpart.copy()
            plus[:, :n] = ycoef.T
            minus = tpart.copy()
            minus[:, :n] = -ycoef.T
            ub_rows += [plus, minus]
            ub_rhs += [np.zeros(nt), np.zeros(nt)]
        Aub = csr_matrix(np.concatenate(ub_rows))
        res = linprog(cost, A_ub=Aub, b_ub=np.concatenate(ub_rhs), A_eq=csr_matrix(Aeq),
                      b_eq=np.ones(A), bounds=(0, None), method="highs")
        if res.status != 0:
            return None
        marg = res.ineqlin.marginals
        pi = res.eqlin.marginals * T
        mu = marg[:K] * T
        nu = np.clip(-marg[K:K + C], 0.0, None)
        if nu.sum() > 1:
            nu = nu / nu.sum()
        rho = np.zeros((K, A))
        if nt:
            beta = (-marg[K + C:K + C + nt] + marg[K + C + nt:]) * T              # (G·J,)
            limit = (tb.gweight.reshape(nt, C) @ nu)
            beta = np.clip(beta, -limit, limit).reshape(G, J)
            per_g = np.zeros((G, A))
            for g in range(G):
                np.add.at(per_g[g], tb.a, beta[g])
                np.subtract.at(per_g[g], tb.b, beta[g])
            rho = member @ per_g
        uncovered = res.x[n:n + A].sum()
        self.last = res.x[:n]
        return res.x[-1], pi, mu, nu, rho, uncovered, res.x[:n]


def _lagrangian(tb, pi, nu, rho, mins) -> float:
    """``Σπ + Σ_K |K|·min(0, min rc_K)`` (the module's bound)."""
    return float(pi.sum() + sum(len(c) * min(0.0, m) for c, m in zip(tb.classes, mins)))


def run_trial(tb: Tables, T: float, pool, deadline, rng, prove: bool):
    """Column generation at the trial value ``T``: ``(z, L)``, ``z`` the master
    program's value once the local search finds no column (an upper estimate of its
    optimum: below ``T``, no proof of ``T`` exists) and, with ``prove``, ``L`` the
    Lagrangian bound of the last exact pricing (a proven lower bound on the busiest CN
    of every mapping whose PE loads are at most ``T``); None for either when the time
    ran out first."""
    master = Master(tb, T)
    for k, s, load in pool:
        if load <= T:
            master.add(k, s, load)
    for k, col in enumerate(tb.pe):             # single actors: a cover when T allows
        for a in np.flatnonzero(np.isfinite(col.work) & (col.work <= T)):
            s = np.zeros(tb.A, dtype=bool)
            s[a] = True
            master.add(k, s, float(col.work[a]))
    best, z = None, None
    order = list(range(len(tb.pe)))
    while True:
        if deadline is not None and time.monotonic() > deadline:
            return z, best
        sol = master.solve()
        if sol is None:
            return z, best
        z, pi, mu, nu, rho, uncovered, lam = sol
        if uncovered > 1e-9:
            z = math.inf
        elif z < T * (1 - 1e-9) and not prove:
            return z, best          # the program's optimum is below T: no proof of T
        probs = [Problem(tb, col, T, pi, nu, rho[k]) for k, col in enumerate(tb.pe)]
        if _local_round(tb, master, probs, mu, pool, rng, deep=prove):
            continue
        if not prove:
            return z, best
        # no column from the local search: the exact pricing, class by class (the
        # last to find one first), adds a column or, for every class, proves; the
        # first round prices every class, for a Lagrangian bound early
        mins, found = {}, False
        for k in list(order):
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return z, best
            pr = probs[k]
            s, upper = pr.exact(left)
            if upper is None:
                return z, best
            mins[k] = min(0.0, -upper)
            if s is not None:
                val, load = pr.value(s)
                if -val < mu[k] - EPSILON * T and load <= T * (1 + 1e-12) \
                        and master.add(k, s, load):
                    pool.append((k, s.copy(), load))
                    for t in pr.local([s], rng):       # and its neighbours
                        val, load = pr.value(t)
                        if -val < mu[k] - EPSILON * T and load <= T \
                                and master.add(k, t, load):
                            pool.append((k, t.copy(), load))
                    order.remove(k)
                    order.insert(0, k)
                    found = True
                    if best is not None:
                        break
        if len(mins) == len(probs):
            got = _lagrangian(tb, pi, nu, rho, [mins[k] for k in range(len(probs))])
            best = got if best is None else max(best, got)
        if not found or best > T:
            return z, best


def _local_round(tb, master, probs, mu, pool, rng, deep: bool = False) -> int:
    """Columns of negative reduced cost by the local search, added to ``master`` and
    ``pool``: how many.  First plain descents from the empty column and the basis's
    columns; only where they find none, the iterated search from more starts (with
    ``deep``, before an exact pricing, from every basis column, longer)."""
    T = master.T
    added = 0
    basis = np.flatnonzero(master.last > 1e-9)
    for k, pr in enumerate(probs):
        mine = [master.S[i] for i in basis if master.cls[i] == k]
        singles = [np.eye(tb.A, dtype=bool)[a] for a in np.argsort(-pr.h)[:3]]
        stages = [([np.zeros(tb.A, dtype=bool)] + mine[:4], 0),
                  (mine[4:8] + singles, KICKS)]
        if deep:
            stages.append((mine + singles, DEEP_KICKS))
        for starts, kicks in stages:
            found = []
            for s in pr.local(starts, rng, kicks):
                val, load = pr.value(s)
                if -val < mu[k] - EPSILON * T and load <= T:
                    found.append((-val, s, load))
            found.sort(key=lambda f: f[0])
            for _, s, load in found[:PER_ROUND]:
                if master.add(k, s, load):
                    pool.append((k, s.copy(), load))
                    added += 1
            if found:
                break
    return added

