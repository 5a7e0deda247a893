"""The master linear program of the set-partitioning bound
(:mod:`mapping.search.partition_bound`) and its column generation at one trial value.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix

from mapping.search.common import stopped
from mapping.search.partition_bound.charges import Tables
from mapping.search.partition_bound.pricing import KICKS, Problem, SideProblem

#: a column prices out when its reduced cost is below this (relative to ``T``)
EPSILON = 1e-7
#: columns added per class and round by the local search
PER_ROUND = 4
#: kicks before an exact pricing (whose programs cost a second or two each)
DEEP_KICKS = 40
#: the cost of leaving an actor uncovered in the master program (relative to ``T``)
UNCOVERED = 1e3
#: the weight of the best bound's multipliers in the exact pricing's (Wentges smoothing)
ALPHA = 0.5
#: the share of the time left that an exact pricing program keeps for each one after it
#: in its round
RESERVE = 0.05


@dataclass
class Pool:
    """The columns found at every trial value so far, kept for the next: the PE
    columns ``(class, actors, load)`` and the side columns ``(group, actors)``."""

    pe: list = field(default_factory=list)
    side: list = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.pe) + len(self.side)


@dataclass(frozen=True)
class Duals:
    """The master program's value ``z`` and multipliers: ``pi (A,)`` of the cover,
    ``mu (K,)`` of the class sizes, ``nu (C,)`` of the CNs, ``kappa (G,)`` of the one
    side column per group and ``sigma (G, A)`` of the coupling of sides and PE
    columns; ``rho (K, A)`` the coupling's price of an actor in a class's column,
    ``slack`` what the program left uncovered or uncoupled, ``y (G, A)`` each actor's
    share on each group's PEs."""

    z: float
    pi: np.ndarray
    mu: np.ndarray
    nu: np.ndarray
    kappa: np.ndarray
    sigma: np.ndarray
    rho: np.ndarray
    slack: float
    y: np.ndarray


class Master:
    """The columns of one trial value and their master linear program: minimize the
    busiest CN ``z`` over ``λ ≥ 0`` (PE columns) and ``μ ≥ 0`` (side columns) with
    every actor covered once, at most ``|K|`` columns of a class ``K``, one side
    column per group ``G`` whose actors are exactly those the PE columns of ``G``'s
    PEs cover (``Σ_λ [p ∈ G]·S_a·λ = Σ_μ U_a·μ``), and each CN's load, the columns'
    costs, at most ``z``."""

    def __init__(self, tb: Tables, T: float):
        self.tb, self.T = tb, T
        self.cls: list[int] = []
        self.S: list[np.ndarray] = []
        self.cost: list[np.ndarray] = []
        self.load: list[float] = []
        self.grp: list[int] = []
        self.U: list[np.ndarray] = []
        self.side_cost: list[np.ndarray] = []
        self.seen: set = set()
        self.last = np.zeros(0)
        self.last_side = np.zeros(0)
        self.member = np.array([col.member for col in tb.pe], dtype=float
                               ).reshape(len(tb.pe), len(tb.groups))        # (K, G)

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

    def add_side(self, g: int, s: np.ndarray) -> bool:
        key = ("side", g, s.tobytes())
        if key in self.seen:
            return False
        self.seen.add(key)
        tb = self.tb
        x = s.astype(float)
        cut = x[tb.a] + x[tb.b] - 2 * x[tb.a] * x[tb.b]
        self.side_cost.append(cut @ tb.gweight[g])
        self.grp.append(g)
        self.U.append(s.copy())
        return True

    def solve(self) -> Duals | None:
        """The master program and its multipliers (None where HiGHS fails)."""
        tb, T = self.tb, self.T
        A, C, K, G = tb.A, tb.C, len(tb.classes), len(tb.groups)
        n, m = len(self.S), len(self.U)
        # variables: λ (n), μ (m), then the slacks: uncovered (A), no side (G),
        # uncoupled both ways (2·G·A), then z
        ns = A + G + 2 * G * A
        nv = n + m + ns + 1
        cost = np.zeros(nv)
        cost[n + m:n + m + ns] = UNCOVERED
        cost[-1] = 1.0 / T
        Smat = np.array(self.S, dtype=float).reshape(n, A)
        Umat = np.array(self.U, dtype=float).reshape(m, A)
        cls = np.array(self.cls, dtype=np.intp)
        grp = np.array(self.grp, dtype=np.intp)
        eq = np.zeros((A + G + G * A, nv))
        eq[:A, :n] = Smat.T                                          # cover
        eq[np.arange(A), n + m + np.arange(A)] = 1.0
        eq[A + grp, n + np.arange(m)] = 1.0                          # one side column
        eq[A + np.arange(G), n + m + A + np.arange(G)] = 1.0
        share = self.member[cls].T[:, :, None] * Smat[None]          # (G, n, A)
        couple = eq[A + G:]
        couple[:, :n] = share.transpose(0, 2, 1).reshape(G * A, n)
        side = np.zeros((G, A, m))
        side[grp, :, np.arange(m)] = Umat
        couple[:, n:n + m] = -side.reshape(G * A, m)
        first = n + m + A + G
        couple[np.arange(G * A), first + np.arange(G * A)] = 1.0
        couple[np.arange(G * A), first + G * A + np.arange(G * A)] = -1.0
        b_eq = np.concatenate([np.ones(A + G), np.zeros(G * A)])
        count = np.zeros((K, nv))
        count[cls, np.arange(n)] = 1.0
        cn = np.zeros((C, nv))
        cn[:, :n] = np.array(self.cost).reshape(n, C).T / T
        cn[:, n:n + m] = np.array(self.side_cost).reshape(m, C).T / T
        cn[:, -1] = -1.0 / T
        Aub = csr_matrix(np.concatenate([count, cn]))
        b_ub = np.concatenate([[len(c) for c in tb.classes], np.zeros(C)])
        res = linprog(cost, A_ub=Aub, b_ub=b_ub, A_eq=csr_matrix(eq), b_eq=b_eq,
                      bounds=(0, None), method="highs")
        if res.status != 0:
            return None
        marg = res.ineqlin.marginals
        dual = res.eqlin.marginals * T
        nu = np.clip(-marg[K:K + C], 0.0, None)
        if nu.sum() > 1:
            nu = nu / nu.sum()
        sigma = dual[A + G:].reshape(G, A)
        self.last, self.last_side = res.x[:n], res.x[n:n + m]
        y = (share * self.last[None, :, None]).sum(axis=1) if n else np.zeros((G, A))
        return Duals(z=float(res.x[-1]), pi=dual[:A], mu=marg[:K] * T, nu=nu,
                     kappa=dual[A:A + G], sigma=sigma, rho=-self.member @ sigma,
                     slack=float(res.x[n + m:n + m + ns].sum()), y=y)


def _lagrangian(tb, pi, mins, sides) -> float:
    """``Σπ + Σ_K |K|·min(0, min rc_K) + Σ_G (min_U rc_G(U) + κ_G)`` (the module's
    bound; ``mins`` the classes' least reduced costs, ``sides`` the groups' least
    ``rc + κ``, each proven)."""
    return float(pi.sum() + sum(len(c) * min(0.0, m) for c, m in zip(tb.classes, mins))
                 + sum(sides))


def _mix(center: Duals, d: Duals, alpha: float) -> Duals:
    """Wentges's smoothed multipliers ``α·center + (1 − α)·d`` (the master's value,
    slack and shares those of ``d``).  A convex combination keeps ``ν ≥ 0, Σν ≤ 1``;
    the other multipliers are free, so the Lagrangian bound holds at it too."""
    def m(x, y):
        return alpha * x + (1 - alpha) * y
    return Duals(z=d.z, pi=m(center.pi, d.pi), mu=m(center.mu, d.mu),
                 nu=m(center.nu, d.nu), kappa=m(center.kappa, d.kappa),
                 sigma=m(center.sigma, d.sigma), rho=m(center.rho, d.rho),
                 slack=d.slack, y=d.y)


def _problems(tb: Tables, T: float, d: Duals, window=None) -> list:
    """The pricing problems of the classes, then of the groups, at the multipliers ``d``
    (``window``: ``(g, low, high)``, group ``g``'s sides within that work)."""
    return [Problem(tb, col, T, d.pi, d.nu, d.rho[k]) for k, col in enumerate(tb.pe)] + \
        [SideProblem(tb, g, T, d.nu, d.sigma[g], _within(window, g))
         for g in range(len(tb.groups))]


def _within(window, g: int):
    return None if window is None or window[0] != g else window[1:]


def over(deadline: float | None, stop=None) -> bool:
    """Whether to stop: ``deadline`` (``time.monotonic()``) has passed or ``stop()``
    (another thread's request, checked between programs like the deadline) is true."""
    return stopped(deadline, stop, time.monotonic)


def run_trial(tb: Tables, T: float, pool: Pool, deadline, rng, prove: bool,
              center: Duals | None = None, stop=None, window=None, out=None):
    """Column generation at the trial value ``T``: ``(z, L, center)``, ``z`` the master
    program's value once the local search finds no column (an upper estimate of its
    optimum: below ``T``, no proof of ``T`` exists) and, with ``prove``, ``L`` the best
    Lagrangian bound of an exact pricing (a proven lower bound on the busiest CN of
    every mapping whose PE loads are at most ``T``), ``center`` its multipliers; None
    for either when the time ran out first.  The exact pricing is stabilized (Wentges
    1997): it prices at :data:`ALPHA` times the multipliers of the best bound so far
    (``center`` to start from: a bound at a higher ``T`` holds at a lower one) plus the
    rest times the master's, adds the columns whose reduced cost at the master's is
    negative and, where there is none (a mispricing), prices again at the master's.
    ``stop()``: end as at the deadline (:func:`over`).  ``window`` ``(g, low, high)``:
    only the mappings whose side of group ``g`` has a work within it (every side
    column's: :class:`~mapping.search.partition_bound.pricing.SideProblem`); ``out``:
    a dict that receives the last master's side columns with their weights
    (``"sides"``)."""
    master = Master(tb, T)
    for k, s, load in pool.pe:
        if load <= T:
            master.add(k, s, load)
    for k, col in enumerate(tb.pe):             # single actors: a cover when T allows
        for a in np.flatnonzero(np.isfinite(col.work) & (col.work <= T)):
            s = np.zeros(tb.A, dtype=bool)
            s[a] = True
            master.add(k, s, float(col.work[a]))
    K, G = len(tb.pe), len(tb.groups)
    fresh = [SideProblem(tb, g, T, np.zeros(tb.C), np.zeros(tb.A), _within(window, g))
             for g in range(G)]
    for g, s in pool.side:
        if fresh[g].fits(s):
            master.add_side(g, s)
    best, z = None, None
    order = list(range(K + G))
    # a proof keeps half its time for the exact pricing, the local search's columns
    # short of convergence or not
    local_until = None if deadline is None or not prove else \
        time.monotonic() + 0.5 * (deadline - time.monotonic())
    while True:
        if over(deadline, stop):
            return z, best, center
        d = master.solve()
        if d is None:
            return z, best, center
        if out is not None:
            out["sides"] = [(g, u, w) for g, u, w in zip(master.grp, master.U,
                                                         master.last_side) if w > 1e-9]
        z = math.inf if d.slack > 1e-9 else d.z
        if z < T * (1 - 1e-9) and not prove:
            return z, best, center  # the program's optimum is below T: no proof of T
        probs = _problems(tb, T, d, window)
        if (local_until is None or time.monotonic() < local_until) \
                and _local_round(tb, master, probs, d, pool, rng, prove, deadline, stop):
            continue
        if over(deadline, stop):
            return z, best, center
        if not prove:
            return z, best, center
        # no column from the local search: the exact pricing of every class and group
        # (the last to find one first) at the smoothed multipliers, for a Lagrangian
        # bound each round
        alpha = ALPHA if center is not None else 0.0
        while True:
            at = d if alpha == 0.0 else _mix(center, d, alpha)
            priced = probs if at is d else _problems(tb, T, at, window)
            mins, found = {}, False
            for i, k in enumerate(list(order)):
                left = None if deadline is None else deadline - time.monotonic()
                if (left is not None and left <= 0) or over(None, stop):
                    return z, best, center
                # what is left but RESERVE of it for each program still to solve after
                # this one, so that the round ends with a bound (a program stopped
                # short proves less; the programs' times differ a lot)
                after = len(order) - i - 1
                s, upper = priced[k].exact(None if left is None else left * max(
                    1.0 / (after + 1), 1.0 - RESERVE * after), stop)
                if upper is None:
                    return z, best, center
                mins[k] = -upper
                if s is not None and _offer(master, pool, k, probs[k], s, d, T):
                    for t in probs[k].local([s], rng):           # and its neighbours
                        _offer(master, pool, k, probs[k], t, d, T)
                    order.remove(k)
                    order.insert(0, k)
                    found = True
            got = _lagrangian(tb, at.pi, [mins[k] for k in range(K)],
                              [mins[k] for k in range(K, K + G)])
            if best is None or got > best:
                best, center = got, at
            if found or best > T or at is d:
                break
            alpha = 0.0                 # a mispricing: again at the master's multipliers
        if not found or best > T:
            return z, best, center


def _offer(master, pool, k, pr, s, d, T) -> bool:
    """Add the column ``s`` of pricing problem ``k`` (a class, then the groups) where
    its reduced cost is negative and it fits: whether it was added."""
    K = len(master.tb.pe)
    if k >= K:
        g = k - K
        if -pr.value(s) < d.kappa[g] - EPSILON * T and pr.fits(s) \
                and master.add_side(g, s):
            pool.side.append((g, s.copy()))
            return True
        return False
    val, load = pr.value(s)
    if -val < d.mu[k] - EPSILON * T and load <= T * (1 + 1e-12) and master.add(k, s, load):
        pool.pe.append((k, s.copy(), load))
        return True
    return False


def _local_round(tb, master, probs, d, pool, rng, deep: bool = False,
                 deadline: float | None = None, stop=None) -> int:
    """Columns of negative reduced cost by the local search, added to ``master`` and
    ``pool``: how many (none once past ``deadline`` or ``stop()``).  First plain
    descents from the empty column and the basis's columns; only where they find none,
    the iterated search from more starts (with ``deep``, before an exact pricing, from
    every basis column, longer).  The sides start from the program's shares rounded
    and the basis's sides."""
    T = master.T
    K = len(tb.pe)
    added = 0
    basis = np.flatnonzero(master.last > 1e-9)
    side_basis = np.flatnonzero(master.last_side > 1e-9)
    for k, pr in enumerate(probs):
        if over(deadline, stop):
            break
        if k < K:
            mine = [master.S[i] for i in basis if master.cls[i] == k]
            singles = [np.eye(tb.A, dtype=bool)[a] for a in np.argsort(-pr.h)[:3]]
            first = [np.zeros(tb.A, dtype=bool)] + mine[:4]

            def score(s, pr=pr):
                return -pr.value(s)[0]
        else:
            g = k - K
            mine = [master.U[i] for i in side_basis if master.grp[i] == g]
            y = d.y[g]
            singles = [y > 0.5 - 1e-9, y > 1e-9, y > 1 - 1e-9]
            first = singles[:1] + mine[:4]

            def score(s, pr=pr):
                return -pr.value(s)
        stages = [(first, 0), (mine[4:8] + singles, KICKS)]
        if deep:
            stages.append((mine + singles, DEEP_KICKS))
        for starts, kicks in stages:
            found = sorted(pr.local(starts, rng, kicks), key=score)
            got = 0
            for s in found:
                if got >= PER_ROUND:
                    break
                got += _offer(master, pool, k, pr, s, d, T)
            added += got
            if got:
                break
    return added
