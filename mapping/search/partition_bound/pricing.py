"""The pricing problems of the set-partitioning bound
(:mod:`mapping.search.partition_bound`): the best column of one class of PEs under the
master program's multipliers, a quadratic knapsack, by an iterated local search (fast,
no proof) or a mixed-integer program (HiGHS; its dual bound is the proof)."""
from __future__ import annotations

import numpy as np
from scipy.optimize import Bounds, LinearConstraint
from scipy.sparse import coo_matrix, vstack

from mapping.search.common import solver_seconds
from mapping.search.highs import milp
from mapping.search.partition_bound.charges import PEColumns, Tables

#: kicks of each local optimum in the pricing's iterated local search
KICKS = 8


class Problem:
    """The pricing problem of one class at one trial value, in the form ``maximize
    h·s + Σ_j g_j·s_a s_b`` subject to ``v·s + Σ_j m_j·s_a s_b ≤ T`` (``s`` the
    actors in the column)."""

    def __init__(self, tb: Tables, col: PEColumns, T: float, pi, nu, rho):
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

    def exact(self, time_limit: float | None, stop=None):
        """The best column by a mixed-integer program: ``(column or None, proven upper
        bound on the objective)``; ``stop()`` interrupts it (:mod:`mapping.search.highs`)."""
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
        return _maximize(c, A, J, np.zeros(A + J), ub, m, lo, hi, scale, time_limit, stop)



class SideProblem:
    """The pricing problem of the side columns of group ``g`` (the set of actors on
    the group's PEs) at one trial value, in the form ``maximize −σ·s − Σ_j c_j·[s_a ≠
    s_b]`` (``c_j = ν·w(G)·v_j ≥ 0`` the channel's charge to the CNs when cut between
    the sides) subject to the sides' capacities ``Σ_{a∈s} min_{p∈G} own(a, p) ≤ |G|·T``
    and likewise for the rest beyond ``G``: a capacitated minimum cut.  ``window``
    ``(low, high)``: only sides whose work ``Σ_{a∈s} min_{p∈G} own(a, p)`` lies
    within it (:func:`~mapping.search.partition_bound.bound`'s windows)."""

    def __init__(self, tb: Tables, g: int, T: float, nu, sigma, window=None):
        inside = [k for k, col in enumerate(tb.pe) if col.member[g]]
        outside = [k for k, col in enumerate(tb.pe) if not col.member[g]]

        def least(ks):
            work = np.full(tb.A, np.inf)
            for k in ks:
                w = tb.pe[k].work
                work = np.minimum(work, np.where(w <= T * (1 + 1e-12), w, np.inf))
            return work

        self.T = T
        self.w_in, self.w_out = least(inside), least(outside)
        self.cap_in = T * sum(len(tb.classes[k]) for k in inside)
        self.low = 0.0
        if window is not None:
            self.low, self.cap_in = window[0], min(self.cap_in, window[1])
        self.cap_out = T * sum(len(tb.classes[k]) for k in outside)
        self.ok_in, self.ok_out = np.isfinite(self.w_in), np.isfinite(self.w_out)
        self.win = np.where(self.ok_in, self.w_in, 0.0)
        self.wout = np.where(self.ok_out, self.w_out, 0.0)
        self.sigma = np.asarray(sigma, dtype=float)
        self.a, self.b = tb.a, tb.b
        self.c = tb.gweight[g] @ nu if len(tb.a) else np.zeros(0)      # (J,)
        C = np.zeros((tb.A, tb.A))
        np.add.at(C, (tb.a, tb.b), self.c)
        np.add.at(C, (tb.b, tb.a), self.c)
        self.Cm = C
        self.deg = C.sum(axis=1)

    def value(self, s: np.ndarray) -> float:
        """The objective of the side ``s`` (bool): ``−`` its reduced cost plus ``κ``."""
        x = s.astype(float)
        return float(-(self.sigma @ x) - self.deg @ x + x @ self.Cm @ x)

    def fits(self, s: np.ndarray) -> bool:
        return bool(self.ok_in[s].all() and self.ok_out[~s].all()
                    and self.low * (1 - 1e-12) <= self.win[s].sum()
                    <= self.cap_in * (1 + 1e-12)
                    and self.wout[~s].sum() <= self.cap_out * (1 + 1e-12))

    def _gain(self, x: np.ndarray) -> np.ndarray:
        """The objective's change when each actor changes side."""
        return -(1 - 2 * x) * (self.sigma + self.deg - 2 * (self.Cm @ x))

    def _repair(self, s: np.ndarray) -> np.ndarray | None:
        """``s`` moved to within both capacities, the cheapest actor first."""
        s = s & self.ok_in | ~self.ok_out
        for _ in range(2 * len(s)):
            x = s.astype(float)
            over_in = self.win[s].sum() - self.cap_in
            over_out = max(self.wout[~s].sum() - self.cap_out,
                           self.low - self.win[s].sum())
            if over_in <= 1e-12 * self.T and over_out <= 1e-12 * self.T:
                return s
            gain = self._gain(x)
            movable = (s & self.ok_out) if over_in > 0 else (~s & self.ok_in)
            if not movable.any():
                return None
            i = int(np.argmax(np.where(movable, gain, -np.inf)))
            s[i] = not s[i]
        return s if self.fits(s) else None

    def _descend(self, s: np.ndarray) -> np.ndarray:
        """A local optimum of moves of one actor and exchanges of two across the
        sides, from the feasible side ``s``."""
        s = s.copy()
        tiny = 1e-12 * self.T
        load_in, load_out = self.win[s].sum(), self.wout[~s].sum()
        for _ in range(4 * len(s)):
            x = s.astype(float)
            gain = self._gain(x)
            to_in = ~s & self.ok_in & (load_in + self.win <= self.cap_in)
            to_out = s & self.ok_out & (load_out + self.wout <= self.cap_out) \
                & (load_in - self.win >= self.low)
            move = np.where(to_in | to_out, gain, -np.inf)
            i = int(np.argmax(move))
            if move[i] > tiny:
                s[i] = not s[i]
                sign = 1 if s[i] else -1
                load_in += sign * self.win[i]
                load_out -= sign * self.wout[i]
                continue
            ins = np.flatnonzero(s & self.ok_out)
            outs = np.flatnonzero(~s & self.ok_in)
            if not len(ins) or not len(outs):
                break
            sw = gain[ins][:, None] + gain[outs][None, :] - 2 * self.Cm[np.ix_(ins, outs)]
            li = load_in - self.win[ins][:, None] + self.win[outs][None, :]
            lo = load_out + self.wout[ins][:, None] - self.wout[outs][None, :]
            sw = np.where((li <= self.cap_in) & (li >= self.low) & (lo <= self.cap_out), sw,
                          -np.inf)
            k = int(np.argmax(sw))
            if sw.flat[k] <= tiny:
                break
            r, c = divmod(k, len(outs))
            s[ins[r]], s[outs[c]] = False, True
            load_in, load_out = float(li[r, c]), float(lo[r, c])
        return s

    def local(self, starts, rng, kicks: int = KICKS) -> list[np.ndarray]:
        """Sides by iterated local search from ``starts`` (each repaired to fit first),
        each local optimum kicked (three actors moved, then repaired) ``kicks``
        times: every local optimum found."""
        out, seen = [], set()
        for s in starts:
            s = self._repair(np.asarray(s, dtype=bool).copy())
            if s is None:
                continue
            s = self._descend(s)
            best = self.value(s)
            for _ in range(kicks + 1):
                if s.tobytes() not in seen:
                    seen.add(s.tobytes())
                    out.append(s.copy())
                t = s.copy()
                flip = rng.choice(len(t), min(3, len(t)), replace=False)
                t[flip] = ~t[flip]
                t = self._repair(t)
                if t is None:
                    continue
                t = self._descend(t)
                val = self.value(t)
                if val >= best:
                    s, best = t, val
        return out

    def exact(self, time_limit: float | None, stop=None):
        """The best side by a mixed-integer program: ``(side or None, proven upper
        bound on the objective)``, the bound ``−inf`` where no side fits; ``stop()``
        interrupts it."""
        A = len(self.sigma)
        if (~self.ok_in & ~self.ok_out).any():
            return None, -np.inf
        cut = np.flatnonzero(self.c > 0)
        J = len(cut)
        a, b = self.a[cut], self.b[cut]
        scale = self.T
        obj = np.concatenate([self.sigma, self.c[cut]]) / scale
        r = np.repeat(np.arange(2 * J), 3)
        cols = np.stack([A + np.arange(J), a, b], axis=1)
        cols = np.concatenate([cols, cols]).ravel()
        vals = np.concatenate([np.tile([1.0, -1.0, 1.0], J), np.tile([1.0, 1.0, -1.0], J)])
        cut_rows = coo_matrix((vals, (r, cols)), shape=(2 * J, A + J))  # e ≥ ±(s_a − s_b)
        cap = np.zeros((2, A + J))
        cap[0, :A] = self.win / scale
        cap[1, :A] = -self.wout / scale
        m = vstack([cut_rows, coo_matrix(cap)]).tocsr()
        lo = np.concatenate([np.zeros(2 * J), [self.low / scale, -np.inf]])
        hi = np.concatenate([np.full(2 * J, np.inf),
                             [self.cap_in / scale,
                              (self.cap_out - self.wout.sum()) / scale]])
        lower = np.concatenate([(~self.ok_out).astype(float), np.zeros(J)])
        upper = np.concatenate([self.ok_in.astype(float), np.full(J, np.inf)])
        return _maximize(obj, A, J, lower, upper, m, lo, hi, scale, time_limit, stop)


def _maximize(c, A, J, lower, upper, m, lo, hi, scale, time_limit, stop=None):
    """HiGHS on ``min c·x`` over ``A`` binaries then ``J`` continuous variables within
    ``lower``, ``upper`` and ``lo ≤ m·x ≤ hi``, ``c`` scaled by ``1/scale``: ``(the
    binaries of its best solution or None, a proven upper bound on the maximum of
    −c·x·scale)``, the bound None where none was proven, ``−inf`` where nothing is
    feasible; ``stop()`` interrupts it, with the bound proven so far."""
    opts = {"disp": False, "mip_rel_gap": 1e-9}
    if time_limit is not None:
        opts["time_limit"] = solver_seconds(time_limit)
    res = milp(c, integrality=np.concatenate([np.ones(A), np.zeros(J)]),
               bounds=Bounds(lower, upper), constraints=LinearConstraint(m, lo, hi),
               options=opts, stop=stop)
    if res.status == 2:
        return None, -np.inf
    dual = getattr(res, "mip_dual_bound", None)
    if res.status == 0 and dual is None:
        dual = res.fun
    best = None if dual is None or not np.isfinite(dual) else -float(dual) * scale
    return (None if res.x is None else res.x[:A] > 0.5), best
