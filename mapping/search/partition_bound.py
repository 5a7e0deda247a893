"""A lower bound on the bottleneck (``max``) that counts the traffic a capacitated
partition of the actors forces: the set-partitioning (Dantzig-Wolfe) relaxation, solved
by column generation (issue 43).

For a trial value ``T``, a *column* is a PE ``p`` (or a class of PEs alike in every
table below, used at most its size times) with a set ``S`` of actors whose load on
``p`` is at most ``T``.  Every mapping whose PE loads are at most ``T`` picks one column
per PE, covering each actor once.  Its CN loads are linear in the columns, up to the
channels between two PEs: a channel (a pair of actors joined by channels, with the
costs :func:`~mapping.search.bounds.element_tables` tabulates for each placement
``(s, d)`` of its ends) costs on CN ``k`` at least ``v·D_k(s, d)``, where ``D_k(s, d)
= w_k(s) + w_k(d) + Σ_G w_k(G)·[s ∈ G xor d ∈ G]`` is a non-negative combination of
cut functions below the architecture's routes (:func:`route_cuts`: on a tree of buses
and bridges, exactly the routes: a bus is charged half a channel by each end on a PE
behind it and half by each end beyond it) and ``v`` the largest volume with ``v·D_k ≤``
the channel's cost.  The column of ``s`` carries ``v·w_k(s)`` for each channel with
exactly one end in ``S``, and channels inside ``S`` their exact cost; the group terms
``w_k(G)·|y_G(a) − y_G(b)|`` (``y_G(a)``: the share of actor ``a`` on PEs of ``G``)
enter the master program.  Communication charged to the cores (``charge = ends |
both``) is charged to a column at its least over the other end's PEs.

The master linear program minimizes the busiest CN ``z`` over convex combinations of
columns.  For any multipliers (``π`` for the actors, ``ν ≥ 0, Σν ≤ 1`` for the CNs, and
the group terms' within their weights) the Lagrangian bound ``Σ_a π_a + Σ_K |K|·min(0,
min_S rc_K(S))`` (``rc``: a column's reduced cost) is below the busiest CN of every
mapping with PE loads ≤ ``T``; with the pricing exact (a mixed-integer program, its
proven bound) it is a proof.  So ``OPT ≥ min(T, L(T))``: either some load of the
optimum exceeds ``T``, or the optimum is a mapping of the relaxation.  :func:`bound`
bisects on ``T`` between a known bound and the starting mapping's value with columns
from an iterated local search on the pricing problem (a quadratic knapsack), then
prices exactly at the estimated crossing, where the local search finds none.  Columns and their master program: Dantzig and Wolfe
(1960); the set-partitioning bound of capacitated graph partitioning: Mehrotra and
Trick (1998); the Lagrangian bound of an unfinished column generation: Lasdon (1970).

Only linear tables of a bottleneck aggregation are bounded (those ``exact`` models).
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from scipy.optimize import Bounds, LinearConstraint, linprog, milp
from scipy.sparse import coo_matrix, csr_matrix
from scipy.sparse.csgraph import connected_components

from mapping.search.bounds import element_tables

#: the bisection stops when the interval left is this share of the starting value
RESOLUTION = 2e-3
#: a column prices out when its reduced cost is below this (relative to ``T``)
EPSILON = 1e-7
#: columns added per class and round by the local search
PER_ROUND = 4
#: proofs keep this much (relative) below the trial value, for the LP's tolerances
SAFETY = 1e-7
#: kicks of each local optimum in the pricing's iterated local search
KICKS = 8
#: and before an exact pricing (whose programs cost a second or two each)
DEEP_KICKS = 40
#: rounds of averaging the route weights over exchanges of alike PEs
SWEEPS = 4
#: the cost of leaving an actor uncovered in the master program (relative to ``T``)
UNCOVERED = 1e3


@dataclass(frozen=True)
class PartitionBound:
    """The outcome of :func:`bound`: ``value`` the proven lower bound (None where none
    applies or nothing was proven), ``trials`` the ``(T, z, L)`` triples evaluated
    (``z`` the master's value with the local search's columns, ``L`` the Lagrangian
    bound where the pricing was exact), ``columns`` generated, ``seconds`` taken and
    ``complete`` (ended within the time)."""

    value: float | None
    trials: tuple = ()
    columns: int = 0
    seconds: float = 0.0
    complete: bool = False


def route_cuts(route: np.ndarray, unroutable: np.ndarray, P: int):
    """The cut decomposition of the routes: ``(groups, single, weight)``: ``groups`` a
    list of PE sets (two PEs or more, none the complement of one PE); ``single (C, P)``
    and ``weight (C, len(groups))`` the non-negative weights of the cut functions of
    each PE alone and of each group, the largest sum (over the pairs of PEs) whose
    ``D_k(s, d)`` stays at or below ``route_k`` both ways between ``s ≠ d``.  The
    candidate groups are the connected sets of PEs that reach each other without one
    CN (on a tree: the branches beyond it)."""
    C = route.shape[1]
    R = route.reshape(P, P, C)
    ok = ~unroutable.reshape(P, P)
    both = np.where((ok & ok.T)[:, :, None], np.minimum(R, R.transpose(1, 0, 2)),
                    np.where(ok[:, :, None], R, R.transpose(1, 0, 2)))   # (s, d, k)
    usable = (ok | ok.T) & ~np.eye(P, dtype=bool)
    groups: list[frozenset] = []
    for k in range(C):
        free = usable & (both[:, :, k] <= 0)
        _, label = connected_components(csr_matrix(free), directed=False)
        for part in (frozenset(np.flatnonzero(label == c).tolist())
                     for c in range(label.max() + 1)):
            if 2 <= len(part) <= P - 2:
                rest = frozenset(range(P)) - part
                if part not in groups and rest not in groups:
                    groups.append(part)
    s_idx, d_idx = np.nonzero(np.triu(usable, 1))
    member = np.array([[p in g for p in range(P)] for g in groups], dtype=float)
    cols = [np.eye(P)[s_idx] + np.eye(P)[d_idx]]                    # (pairs, P)
    if groups:
        cols.append(np.abs(member[:, s_idx] - member[:, d_idx]).T)  # (pairs, G)
    M = np.concatenate(cols, axis=1)
    single = np.zeros((C, P))
    weight = np.zeros((C, len(groups)))
    if not len(s_idx):
        return groups, single, weight
    swaps = _swaps(both, usable, groups, P)
    for k in range(C):
        res = linprog(-M.sum(axis=0), A_ub=M, b_ub=both[s_idx, d_idx, k],
                      bounds=(0, None), method="highs")
        if res.status == 0:
            w = np.maximum(res.x, 0.0)
            # an optimal vertex may favour one of two PEs alike in the routes; the
            # average over such swaps is optimal too, and keeps alike PEs in one class
            for _ in range(SWEEPS):
                for perm in swaps:
                    w = 0.5 * (w + w[perm])
            # the LP's tolerances: scale down until no pair is above its route
            over = M @ w
            lim = both[s_idx, d_idx, k]
            if (over > lim).any():
                w *= np.min(np.where(over > 0, lim / np.maximum(over, 1e-300), np.inf))
            single[k], weight[k] = w[:P], w[P:]
    return groups, single, weight


def _swaps(both, usable, groups, P) -> list[np.ndarray]:
    """The exchanges of two PEs that keep the routes (and so the groups), each as a
    permutation of the weights (PEs, then groups)."""
    index = {g: i for i, g in enumerate(groups)}
    out = []
    for p in range(P):
        for q in range(p + 1, P):
            perm = np.arange(P)
            perm[p], perm[q] = q, p
            if not (np.array_equal(both[np.ix_(perm, perm)], both)
                    and np.array_equal(usable[np.ix_(perm, perm)], usable)):
                continue
            image = []
            for g in groups:
                h = frozenset(int(perm[x]) for x in g)
                h = h if h in index else frozenset(range(P)) - h
                if h not in index:
                    break
                image.append(P + index[h])
            else:
                out.append(np.concatenate([perm, np.array(image, dtype=np.intp)]))
    return out


class _Tables:
    """The column data of every PE, PEs alike in all of it grouped into classes."""

    def __init__(self, ev, allowed):
        t = ev.tables
        own, own_cn, pairs = element_tables(ev)
        A, P = own.shape
        C = own_cn.shape[2]
        self.A, self.P, self.C = A, P, C
        keys = sorted(pairs)
        J = len(keys)
        self.a = np.array([k[0] for k in keys], dtype=np.intp)
        self.b = np.array([k[1] for k in keys], dtype=np.intp)
        W = np.stack([pairs[k] for k in keys]) if J else np.zeros((0, P, P, P + C))
        usable = allowed & np.isfinite(own)
        self.usable = usable
        groups, single, weight = route_cuts(t.route, t.unroutable, P)
        self.groups = groups
        member = np.array([[p in g for g in groups] for p in range(P)], dtype=bool)
        # where both ends may go: (j, s, d)
        can = usable[self.a][:, :, None] & usable[self.b][:, None, :] \
            & np.isfinite(W[..., 0]) if J else np.zeros((0, P, P), dtype=bool)
        apart = can & ~np.eye(P, dtype=bool)[None]
        D = single.T[:, None, :] + single.T[None, :, :]                      # (s, d, k)
        if groups:
            cut = (member[:, None, :] != member[None, :, :]).astype(float)    # (s, d, G)
            D = D + cut @ weight.T
        cnW = W[..., P:]                                                      # (j, s, d, k)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(apart[..., None] & (D[None] > 0), cnW / D[None], np.inf)
        vol = ratio.min(axis=(1, 2)) if J else np.zeros((0, C))
        vol = np.where(np.isfinite(vol), vol, 0.0)                            # (j, k)
        self.vol = vol
        self.gweight = (vol[:, None, :] * weight.T[None]).transpose(1, 0, 2) \
            if groups else np.zeros((0, J, C))                                 # (G, j, k)
        data, self.classes = {}, []
        self.pe = []
        for p in range(P):
            pe_w = W[:, p, :, p] if J else np.zeros((0, P))
            a_out = np.where(apart[:, p, :], pe_w, np.inf).min(axis=1) if J else pe_w[:, 0]
            pe_w = W[:, :, p, p] if J else np.zeros((0, P))
            b_out = np.where(apart[:, :, p], pe_w, np.inf).min(axis=1) if J else pe_w[:, 0]
            inner_ok = can[:, p, p] if J else np.zeros(0, dtype=bool)
            col = _PEColumns(
                work=np.where(usable[:, p], own[:, p], np.inf),
                own_cn=own_cn[:, p, :],
                inner_pe=np.where(inner_ok, W[:, p, p, p], 0.0) if J else np.zeros(0),
                inner_cn=np.where(inner_ok[:, None], W[:, p, p, P:], 0.0) if J
                else np.zeros((0, C)),
                inner_ok=inner_ok,
                a_out=np.where(np.isfinite(a_out), a_out, 0.0),
                b_out=np.where(np.isfinite(b_out), b_out, 0.0),
                cut_cn=vol * single[:, p][None, :],
                member=member[p])
            key = col.key()
            if key not in data:
                data[key] = len(self.classes)
                self.classes.append([])
                self.pe.append(col)
            self.classes[data[key]].append(p)


@dataclass
class _PEColumns:
    work: np.ndarray        # (A,) the actor's load on the PE (inf: not there)
    own_cn: np.ndarray      # (A, C) its own channels' CN cost
    inner_pe: np.ndarray    # (J,) a pair on the PE: its load there
    inner_cn: np.ndarray    # (J, C) and on the CNs
    inner_ok: np.ndarray    # (J,) both ends may share the PE
    a_out: np.ndarray       # (J,) the least charged to the PE of ``a`` with ``b`` apart
    b_out: np.ndarray       # (J,) likewise with ``b`` here, ``a`` apart
    cut_cn: np.ndarray      # (J, C) a channel with one end here: the column's CN share
    member: np.ndarray      # (G,) the PE lies in each group

    def key(self) -> bytes:
        return b"".join(np.ascontiguousarray(v).tobytes() for v in vars(self).values())


class _Problem:
    """The pricing problem of one class at one trial value, in the form ``maximize
    h·s + Σ_j g_j·s_a s_b`` subject to ``v·s + Σ_j m_j·s_a s_b ≤ T`` (``s`` the
    actors in the column)."""

    def __init__(self, tb: _Tables, col: _PEColumns, T: float, pi, nu, rho):
        A = tb.A
        a, b = tb.a, tb.b
        cut = col.cut_cn @ nu                                  # (J,)
        inner = col.inner_cn @ nu
        h = pi - rho - col.own_cn @ nu
        np.subtract.at(h, a, cut)
        np.subtract.at(h, b, cut)
        self.h = h
        self.g = 2 * cut - inner
        v = col.work.copy()
        np.add.at(v, a, col.a_out)
        np.add.at(v, b, col.b_out)
        self.v = v
        # an actor that may not go here has an infinite load; it is never in a column,
        # and the load of a column must not be 0·inf
        self.v_in = np.where(np.isfinite(v), v, 0.0)
        self.m = col.inner_pe - col.a_out - col.b_out
        self.ok = np.isfinite(v) & (v <= T * (1 + 1e-12))
        self.T = T
        self.inner_ok = col.inner_ok
        self.a, self.b = a, b
        G = np.zeros((A, A))
        M = np.zeros((A, A))
        block = np.zeros((A, A), dtype=bool)
        np.add.at(G, (a, b), self.g)
        np.add.at(G, (b, a), self.g)
        np.add.at(M, (a, b), self.m)
        np.add.at(M, (b, a), self.m)
        block[a[~col.inner_ok], b[~col.inner_ok]] = True
        block[b[~col.inner_ok], a[~col.inner_ok]] = True
        self.G, self.M, self.block = G, M, block

    def value(self, s: np.ndarray) -> tuple[float, float]:
        """``(objective, load)`` of the column ``s`` (bool)."""
        x = s.astype(float)
        return float(self.h @ x + 0.5 * x @ self.G @ x), float(self.v_in @ x + 0.5 * x @ self.M @ x)

    def local(self, starts, rng, kicks: int = KICKS) -> list[np.ndarray]:
        """Columns by iterated local search from ``starts``: descents by 1-moves (add,
        drop, swap), each local optimum kicked (two members dropped, one actor
        added) ``kicks`` times, a better one kept; every local optimum found."""
        out, seen = [], set()
        for s in starts:
            s = s & self.ok
            if self.value(s)[1] > self.T:
                s = np.zeros_like(s)
            s = self._descend(s)
            best = self.value(s)[0]
            for _ in range(kicks):
                key = s.tobytes()
                if key not in seen:
                    seen.add(key)
                    out.append(s.copy())
                t = s.copy()
                ins = np.flatnonzero(t)
                if len(ins):
                    t[rng.choice(ins, min(2, len(ins)), replace=False)] = False
                outs = np.flatnonzero(~t & self.ok & ~self.block[:, t].any(axis=1))
                if len(outs):
                    t[rng.choice(outs)] = True
                if self.value(t)[1] > self.T:
                    continue
                t = self._descend(t)
                val = self.value(t)[0]
                if val >= best:
                    s, best = t, val
            if s.tobytes() not in seen:
                seen.add(s.tobytes())
                out.append(s.copy())
        return out

    def _descend(self, s: np.ndarray) -> np.ndarray:
        """A local optimum of 1-moves from the feasible column ``s``."""
        s = s.copy()
        x = s.astype(float)
        load = float(self.v_in @ x + 0.5 * x @ self.M @ x)
        tiny = 1e-12 * self.T
        for _ in range(4 * len(s)):
            gain = self.h + self.G @ x                     # adding a (if out)
            dload = self.v + self.M @ x
            blocked = (self.block[:, s]).any(axis=1)
            add = ~s & self.ok & ~blocked & (load + dload <= self.T)
            best_add = np.where(add, gain, -np.inf)
            drop_gain = np.where(s, -gain, -np.inf)       # removing a (if in)
            i = int(np.argmax(best_add))
            j = int(np.argmax(drop_gain))
            if best_add[i] > tiny and best_add[i] >= drop_gain[j]:
                s[i] = True
                load += dload[i]
            elif drop_gain[j] > tiny:
                s[j] = False
                load -= dload[j]
            else:
                # swap: drop one member, add one actor
                ins, outs = np.flatnonzero(s), np.flatnonzero(~s & self.ok)
                if not len(ins) or not len(outs):
                    break
                sw = -gain[ins][:, None] + gain[outs][None, :] - self.G[np.ix_(ins, outs)]
                nl = load - dload[ins][:, None] + dload[outs][None, :] \
                    - self.M[np.ix_(ins, outs)]
                bl = self.block[outs][:, s].sum(axis=1)[None, :] \
                    - self.block[np.ix_(ins, outs)]
                sw = np.where((nl <= self.T) & (bl == 0), sw, -np.inf)
                k = int(np.argmax(sw))
                if sw.flat[k] <= tiny:
                    break
                r, c = divmod(k, len(outs))
                s[ins[r]] = False
                s[outs[c]] = True
                load = float(nl[r, c])
            x = s.astype(float)
        return s

    def exact(self, time_limit: float | None):
        """The best column by a mixed-integer program: ``(column or None, proven upper
        bound on the objective)``."""
        A, J = len(self.h), len(self.g)
        a, b = self.a, self.b
        both = self.inner_ok & self.ok[a] & self.ok[b]
        scale = self.T
        c = -np.concatenate([self.h, self.g]) / scale
        rows, cols, vals, lo, hi = [], [], [], [], []
        n = 0
        for j in range(J):
            if both[j]:
                # e = s_a·s_b: only the sides that the objective or the load would
                # push e beyond (fewer rows; the program stays exact)
                for end in (a[j], b[j]) if self.g[j] > 0 or self.m[j] < 0 else ():
                    rows += [n, n]                   # e ≤ s_end
                    cols += [A + j, end]
                    vals += [1.0, -1.0]
                    lo.append(-np.inf)
                    hi.append(0.0)
                    n += 1
                if self.g[j] < 0 or self.m[j] > 0:
                    rows += [n, n, n]                # e ≥ s_a + s_b − 1
                    cols += [A + j, a[j], b[j]]
                    vals += [1.0, -1.0, -1.0]
                    lo.append(-1.0)
                    hi.append(np.inf)
                    n += 1
            elif self.ok[a[j]] and self.ok[b[j]]:
                rows += [n, n]                       # never both here
                cols += [a[j], b[j]]
                vals += [1.0, 1.0]
                lo.append(-np.inf)
                hi.append(1.0)
                n += 1
        rows += [n] * (A + J)                        # the PE's load
        cols += list(range(A + J))
        vals += list(self.v_in / scale) + \
            list(self.m / scale)
        lo.append(-np.inf)
        hi.append(1.0)
        n += 1
        m = coo_matrix((vals, (rows, cols)), shape=(n, A + J)).tocsr()
        ub = np.concatenate([self.ok.astype(float), both.astype(float)])
        opts = {"disp": False, "mip_rel_gap": 1e-9}
        if time_limit is not None:
            opts["time_limit"] = max(time_limit, 0.01)
        res = milp(c, integrality=np.concatenate([np.ones(A), np.zeros(J)]),
                   bounds=Bounds(np.zeros(A + J), ub),
                   constraints=LinearConstraint(m, lo, hi), options=opts)
        dual = getattr(res, "mip_dual_bound", None)
        if res.status == 0 and dual is None:
            dual = res.fun
        best = None if dual is None or not np.isfinite(dual) else -float(dual) * scale
        s = None if res.x is None else res.x[:A] > 0.5
        return s, best


class _Master:
    """The columns of one trial value and their master linear program."""

    def __init__(self, tb: _Tables, T: float):
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


def _trial(tb: _Tables, T: float, pool, deadline, rng, prove: bool):
    """Column generation at the trial value ``T``: ``(z, L)``, ``z`` the master
    program's value once the local search finds no column (an upper estimate of its
    optimum: below ``T``, no proof of ``T`` exists) and, with ``prove``, ``L`` the
    Lagrangian bound of the last exact pricing (a proven lower bound on the busiest CN
    of every mapping whose PE loads are at most ``T``); None for either when the time
    ran out first."""
    master = _Master(tb, T)
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
        probs = [_Problem(tb, col, T, pi, nu, rho[k]) for k, col in enumerate(tb.pe)]
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


def bound(ev, allowed, upper: float, lower: float = 0.0, time_limit: float | None = None,
          seed: int = 0) -> PartitionBound:
    """The set-partitioning bound of the compiled ``max`` objective ``ev`` over the
    ``(A, P)`` mask ``allowed`` (see the module) between ``lower`` (a proven bound)
    and ``upper`` (a mapping's value), within ``time_limit`` seconds: a bisection on
    ``T`` with the local search's columns (its master value above ``T`` or not) to the
    estimated crossing, then the exact pricing there."""
    began = time.monotonic()
    agg = getattr(ev, "aggregation", None)
    if agg is None or not agg.bottleneck or not ev.tables.linear or not upper > 0:
        return PartitionBound(None)
    deadline = None if time_limit is None else began + time_limit
    tb = _Tables(ev, allowed)
    if tb.C == 0:
        return PartitionBound(None, seconds=time.monotonic() - began, complete=True)
    rng = np.random.default_rng(seed)
    pool: list = []
    lo, hi = max(lower, 0.0), upper
    trials = []
    # the bisection takes at most half the time, the proof the rest
    halfway = None if deadline is None else began + 0.5 * time_limit
    while hi - lo > RESOLUTION * upper:
        if halfway is not None and time.monotonic() > halfway:
            break
        T = 0.5 * (lo + hi)
        z, _ = _trial(tb, T, pool, halfway, rng, prove=False)
        if z is None:
            break
        trials.append((T, z, None))
        if z > T:
            lo = T
        else:
            hi = T
    proven = None
    if lo > lower:
        z, got = _trial(tb, lo, pool, deadline, rng, prove=True)
        if got is not None:
            trials.append((lo, z, got))
            proven = min(lo, got) * (1 - SAFETY)
    complete = deadline is None or time.monotonic() <= deadline
    return PartitionBound(proven if proven and proven > 0 else None, tuple(trials),
                          len(pool), time.monotonic() - began, complete)


def trial(ev, allowed, T: float, time_limit: float | None = None, seed: int = 0
          ) -> float | None:
    """``L(T)`` of the compiled ``max`` objective ``ev`` over the mask ``allowed``: a
    proven lower bound on the busiest CN of every mapping whose PE loads are all at
    most ``T`` (None where the time ran out first or no bound applies)."""
    agg = getattr(ev, "aggregation", None)
    if agg is None or not agg.bottleneck or not ev.tables.linear:
        return None
    deadline = None if time_limit is None else time.monotonic() + time_limit
    tb = _Tables(ev, allowed)
    if tb.C == 0:
        return None
    return _trial(tb, T, [], deadline, np.random.default_rng(seed), prove=True)[1]


def floor(setup, time_limit: float | None = None, lower: float | None = None
          ) -> PartitionBound:
    """:func:`bound` of the search ``setup``'s single ``max`` objective, bisected
    between ``lower`` (a bound proven before; at least the pair bound of
    :mod:`mapping.search.bounds`) and the value of its starting mapping
    (``setup.info["incumbent"]``; without one, nothing is bounded)."""
    from mapping.search.bounds import communication_bound
    from mapping.search.exact import mapping_value
    ev = setup.objectives.evaluators[0]
    incumbent = setup.info.get("incumbent")
    agg = getattr(ev, "aggregation", None)
    if incumbent is None or agg is None or not agg.bottleneck or not ev.tables.linear:
        return PartitionBound(None)
    upper = mapping_value(ev, incumbent)
    if not math.isfinite(upper):
        return PartitionBound(None)
    allowed = setup.space.allowed
    lower = max(lower or 0.0, communication_bound(ev, allowed))
    return bound(ev, allowed, upper, lower, time_limit, seed=setup.seed)
