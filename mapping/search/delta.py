"""Incremental (delta) evaluation of local-search moves (issue 13).

Where the compiled tables are linear (:attr:`mapping.evaluation.batch.CostTables.linear`: every
element value is a sum of ``proc``, ``comm`` and ``charged`` entries) a mapping ``x``
is kept with its element loads::

    pe[p] = Σ_{a: x_a = p} proc[a, p] + λ·Σ_c charged[c, x_s·P + x_d]·([x_s = p] + [x_d = p])
    cn[k] = Σ_c comm[c, k]·route[x_s·P + x_d, k]

Moving actor ``a`` to PE ``p`` (or swapping two actors) changes only ``a``'s row of
``proc`` and the entries of ``a``'s channels, so the loads after ``M`` candidate moves,
``(P, M)`` and ``(C, M)``, cost a few gathers and bincounts over those channels,
whatever the size of the graph.  The system value is the aggregation's own ``combine``
(:data:`mapping.semantics.aggregation.AGGREGATIONS`) on those arrays, ``inf`` where a channel has
no route, as in :class:`mapping.evaluation.batch.BatchEvaluator`; no rule is written twice.  Only
aggregations that declare themselves separable (``sum``) or bottleneck (``max``) are
delta-evaluated; the others, system metrics and several objectives go through the batch
evaluator on the moved mappings (:class:`mapping.search.neighbourhood.Neighbourhood`
hides which).

Values agree with the batch evaluator's up to rounding (the sums are taken in another
order); a strategy reports the exact value of its best mapping (:meth:`Tracker.offer`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mapping.semantics.aggregation import contributions
from mapping.semantics.traffic import charged_paid

#: largest ``channels × P² × CNs`` table of per-pair CN loads kept (float64 entries);
#: beyond it the route incidence is gathered per move
MAX_PAIR_TABLE = 1 << 21
#: move lists whose gathers are kept (a strategy's fixed lists, anneal's one per actor)
MEMO = 1024
#: and at most this many bytes of them
MEMO_BYTES = 64 << 20



def channel_weights(tables) -> np.ndarray:
    """``(channels,)`` what each channel costs when its ends sit apart: its values on the
    CNs summed, plus the most a route charges to one end PE (the edge weights of graph
    partitioning; :mod:`mapping.search.multilevel` matches by them)."""
    weight = tables.comm.sum(axis=1) if tables.comm.size else np.zeros(len(tables.src))
    if tables.charged is not None:
        weight = weight + tables.charged.max(axis=1)
    return weight


def incidence(src: np.ndarray, dst: np.ndarray, n_actors: int):
    """Each actor's channels in compressed rows, ``(incident, start, degree)``: actor
    ``a``'s are ``incident[start[a]:start[a] + degree[a]]``, a self-loop once."""
    chans = np.arange(len(src))
    loop = src == dst
    ends = np.concatenate([src, dst[~loop]])
    owner = np.concatenate([chans, chans[~loop]])
    order = np.argsort(ends, kind="stable")
    degree = np.bincount(ends, minlength=n_actors)
    start = np.concatenate([[0], np.cumsum(degree)[:-1]]).astype(np.intp)
    return owner[order], start, degree


@dataclass
class State:
    """``K`` mappings ``X (K, A)`` with their values and, under delta evaluation, their
    loads ``pe (P, K)`` (``λ·charged`` included), ``cn (C, K)`` (before ``λ``) and the
    number of channels without a route ``bad (K,)``."""

    X: np.ndarray
    values: np.ndarray
    pe: np.ndarray | None = None
    cn: np.ndarray | None = None
    bad: np.ndarray | None = None
    applied: int = 0


@dataclass
class Moves:
    """``M`` candidate moves: row ``rows[m]`` of a :class:`State` with actor
    ``actors[m]`` moved to ``pes[m]`` (and, for swaps, ``actors2[m]`` to ``pes2[m]``;
    ``-1``: none), their ``values`` and, under delta evaluation, the loads after."""

    rows: np.ndarray
    actors: np.ndarray
    pes: np.ndarray
    actors2: np.ndarray | None
    pes2: np.ndarray | None
    values: np.ndarray
    pe: np.ndarray | None = None
    cn: np.ndarray | None = None
    bad: np.ndarray | None = None

    def mappings(self, X: np.ndarray, idx) -> np.ndarray:
        """The moved mappings of candidates ``idx`` (rows of ``X``)."""
        idx = np.atleast_1d(idx)
        Y = X[self.rows[idx]]
        n = np.arange(len(idx))
        Y[n, self.actors[idx]] = self.pes[idx]
        if self.actors2 is not None:
            two = self.actors2[idx] >= 0
            Y[n[two], self.actors2[idx][two]] = self.pes2[idx][two]
        return Y


class Delta:
    """Delta evaluation of one compiled objective (a :class:`mapping.evaluation.batch.BatchEvaluator`);
    :attr:`supported` says whether its tables and aggregation allow it."""

    def __init__(self, evaluator):
        agg = getattr(evaluator, "aggregation", None)
        tables = evaluator.tables
        self.evaluator = evaluator
        self.aggregation = agg
        # an impossible pair (inf in proc: lookup's default = inf, a missing key) would
        # turn a load difference into inf - inf: such problems go to the batch evaluator
        self.supported = bool(tables.linear) and agg is not None \
            and (agg.separable or agg.bottleneck) and not agg.needs_shares \
            and bool(np.isfinite(tables.proc).all())
        if not self.supported:
            return
        self.proc = tables.proc
        self.src, self.dst = tables.src, tables.dst
        A, P = tables.proc.shape
        Ch, C = tables.comm.shape
        self.n_actors, self.n_pes, self.n_cns = A, P, C
        self.lambda_ = float(tables.lambda_)
        self.comm, self.route = tables.comm, tables.route
        self.unroutable = tables.unroutable.astype(np.int64)
        charged = tables.charged
        self.paid = charged_paid(self.lambda_, charged) \
            if charged is not None and charged.any() else None
        self.cn_pair = None          # row c·P² + pair: channel c's CN loads on that pair
        if C and Ch * P * P * C <= MAX_PAIR_TABLE:
            self.cn_pair = (self.comm[:, None, :] * self.route[None, :, :]).reshape(-1, C)
        self.proc_flat = np.ascontiguousarray(self.proc).ravel()
        self.paid_flat = None if self.paid is None else self.paid.ravel()
        self.unroutable_pairs = np.tile(tables.unroutable.astype(np.int8), Ch)  # c·P² + pair
        self.any_unroutable = bool(tables.unroutable.any())
        self._memo: dict = {}
        self._memo_bytes = 0
        self.incident, self.start, self.degree = incidence(self.src, self.dst, A)

    # ------------------------------------------------------------------ loads
    def loads(self, X: np.ndarray):
        """``(pe (P, K), cn (C, K), bad (K,))`` of the mappings ``X`` from scratch."""
        X = np.asarray(X, dtype=np.intp)
        K, P = X.shape[0], self.n_pes
        base = np.arange(K)                                             # element-major
        w = self.proc[np.arange(self.n_actors), X]                      # (K, A)
        pe = np.bincount((X * K + base[:, None]).ravel(), w.ravel(), minlength=P * K)
        pair = X[:, self.src] * P + X[:, self.dst]                      # (K, Ch)
        chans = np.arange(len(self.src))
        if self.paid is not None:
            paid = self.paid[chans, pair].ravel()
            for end in (self.src, self.dst):
                pe += np.bincount((X[:, end] * K + base[:, None]).ravel(), paid,
                                  minlength=P * K)
        if self.cn_pair is not None:
            cn = self.cn_pair.take(pair + chans * P * P, 0).sum(axis=1)  # (K, C)
        else:
            cn = np.einsum("kcn,cn->kn", self.route[pair], self.comm) if self.n_cns \
                else np.zeros((K, 0))
        bad = self.unroutable[pair].sum(axis=1)
        return pe.reshape(P, K), np.ascontiguousarray(cn.T), bad

    def values(self, pe: np.ndarray, cn: np.ndarray, bad: np.ndarray) -> np.ndarray:
        """System values of loads ``pe (P, M)``, ``cn (C, M)``: the aggregation's
        ``combine``; ``inf`` where a channel has no route."""
        v, _ = self.aggregation.combine(pe, cn, self.lambda_, locate=False)
        v = np.asarray(v, dtype=float)
        v[bad > 0] = np.inf
        return v

    def pressure(self, pe: np.ndarray, cn: np.ndarray) -> np.ndarray:
        """``(M,)``: the sum of the squared element contributions, a local search's
        tie-break under a bottleneck aggregation: on a plateau of the maximum, the move
        that unloads the busy elements (the bottleneck's ties among them) leads down."""
        c = contributions(pe, cn, self.lambda_)
        return np.einsum("em,em->m", c, c)

    # ------------------------------------------------------------------ moves
    def _channels(self, actors: np.ndarray):
        """Flattened channels of ``actors``: (move of each entry, channel)."""
        cnt = self.degree.take(actors)
        total = int(cnt.sum())
        m = np.repeat(np.arange(len(actors)), cnt)
        off = np.repeat(self.start.take(actors) - (np.cumsum(cnt) - cnt), cnt)
        return m, self.incident.take(np.arange(total) + off)

    def _plan(self, rows: np.ndarray, actors: np.ndarray) -> dict:
        """What moves of ``actors`` in ``rows`` gather, whatever the target PEs; kept
        for the same two arrays (a strategy values one move list step after step)."""
        hit = self._memo.get((id(rows), id(actors)))
        if hit is not None and hit[0] is rows and hit[1] is actors:
            return hit[2]
        A, P, C, M = self.n_actors, self.n_pes, self.n_cns, len(actors)
        hm, hc = self._channels(actors)
        rA = rows.take(hm) * A
        s, d = self.src.take(hc), self.dst.take(hc)
        a = actors.take(hm)
        m = np.arange(M)
        plan = {"M": M, "m": m, "hm": hm, "hc": hc, "at": rows * A + actors,
                "ap": actors * P, "xs": rA + s, "xd": rA + d, "s_moves": s == a,
                "d_moves": d == a, "cP2": hc * (P * P),
                "flat": (np.arange(C)[None, :] * M + hm[:, None]).ravel()}
        size = sum(v.nbytes for v in plan.values() if isinstance(v, np.ndarray))
        if len(self._memo) >= MEMO or self._memo_bytes + size > MEMO_BYTES:
            self._memo.clear()
            self._memo_bytes = 0
        self._memo[id(rows), id(actors)] = (rows, actors, plan)
        self._memo_bytes += size
        return plan

    def moves(self, state: State, rows, actors, pes, actors2=None, pes2=None):
        """Loads ``(pe (P, M), cn (C, M), bad (M,))`` after each move ``m``: row
        ``rows[m]`` of ``state`` with ``actors[m]`` on ``pes[m]`` (and ``actors2[m]``
        on ``pes2[m]`` where ``actors2[m] >= 0``; ``actors2[m] != actors[m]``)."""
        X, A, P, C = state.X, self.n_actors, self.n_pes, self.n_cns
        Xf = X.ravel()
        if actors2 is not None and (actors2 >= 0).any():
            return self._swaps(state, rows, actors, pes, actors2, pes2)
        pl = self._plan(rows, actors)
        M, m, hm, hc = pl["M"], pl["m"], pl["hm"], pl["hc"]
        old = Xf.take(pl["at"])
        idx = [old * M + m, pes * M + m]
        w = [-self.proc_flat.take(pl["ap"] + old), self.proc_flat.take(pl["ap"] + pes)]
        xs, xd = Xf.take(pl["xs"]), Xf.take(pl["xd"])
        p = pes.take(hm)
        ns = np.where(pl["s_moves"], p, xs)
        nd = np.where(pl["d_moves"], p, xd)
        return self._finish(state, rows, M, hm, hc, pl["cP2"], pl["flat"], xs, xd, ns, nd,
                            idx, w)

    def placements(self, pe: np.ndarray, cn: np.ndarray, bad: np.ndarray, X: np.ndarray,
                   placed: np.ndarray, actors: np.ndarray):
        """Loads ``(pe (P, K·P), cn (C, K·P), bad (K·P,))`` of partial mappings: row
        ``k`` of ``X``, whose ``placed`` actors make up ``pe[:, k]``, ``cn[:, k]`` and
        ``bad[k]``, with ``actors[k]`` put on each PE ``p`` in turn (column ``k·P + p``).
        A channel counts once both its ends are placed (the module's formulas over the
        placed actors)."""
        K, P, C = len(actors), self.n_pes, self.n_cns
        M = K * P
        cand = np.tile(np.arange(P), K)
        pe_new = np.repeat(pe, P, axis=1)
        pe_new[cand, np.arange(M)] += self.proc[np.repeat(actors, P), cand]
        cn_new = np.repeat(cn, P, axis=1)
        bad_new = np.repeat(bad, P)
        hm, hc = self._channels(actors)
        s, d = self.src.take(hc), self.dst.take(hc)
        a = actors.take(hm)
        other = np.where(s == a, d, s)
        keep = placed[hm, other] | (s == d)
        hm, hc, s, d, other, a = hm[keep], hc[keep], s[keep], d[keep], other[keep], a[keep]
        if not len(hc):
            return pe_new, cn_new, bad_new
        col = (hm[:, None] * P + np.arange(P)[None, :]).ravel()
        p = np.tile(np.arange(P), len(hc))
        xo = np.repeat(X[hm, other], P)
        ns = np.where(np.repeat(s == a, P), p, xo)
        nd = np.where(np.repeat(d == a, P), p, xo)
        pair = ns * P + nd
        ch = np.repeat(hc, P)
        if self.paid is not None:
            w = self.paid[ch, pair]
            for end in (ns, nd):
                pe_new += np.bincount(end * M + col, w, minlength=P * M).reshape(P, M)
        if C:
            add = self.comm.take(ch, 0) * self.route.take(pair, 0)          # (H·P, C)
            cn_new += np.bincount((np.arange(C)[None, :] * M + col[:, None]).ravel(),
                                  add.ravel(), minlength=C * M).reshape(C, M)
        if self.any_unroutable:
            bad_new += np.bincount(col, self.unroutable.take(pair), minlength=M) \
                .astype(np.int64)
        return pe_new, cn_new, bad_new

    def _swaps(self, state, rows, actors, pes, actors2, pes2):
        X, A, P, C, M = state.X, self.n_actors, self.n_pes, self.n_cns, len(actors)
        Xf = X.ravel()
        m = np.arange(M)
        old = Xf.take(rows * A + actors)
        idx = [old * M + m, pes * M + m]
        w = [-self.proc_flat.take(actors * P + old), self.proc_flat.take(actors * P + pes)]
        hm, hc = self._channels(actors)
        two = np.flatnonzero(actors2 >= 0)
        b, pb = actors2[two], pes2[two]
        old2 = Xf.take(rows[two] * A + b)
        idx += [old2 * M + two, pb * M + two]
        w += [-self.proc_flat.take(b * P + old2), self.proc_flat.take(b * P + pb)]
        m2, c2 = self._channels(b)
        m2 = two[m2]
        # a channel between the two actors is already among the first's
        a2 = actors[m2]
        keep = (self.src[c2] != a2) & (self.dst[c2] != a2)
        hm, hc = np.concatenate([hm, m2[keep]]), np.concatenate([hc, c2[keep]])
        rA = rows.take(hm) * A
        s, d = self.src.take(hc), self.dst.take(hc)
        xs, xd = Xf.take(rA + s), Xf.take(rA + d)
        a, p = actors.take(hm), pes.take(hm)
        b, pb = actors2.take(hm), pes2.take(hm)
        ns = np.where(s == a, p, np.where(s == b, pb, xs))
        nd = np.where(d == a, p, np.where(d == b, pb, xd))
        flat = (np.arange(C)[None, :] * M + hm[:, None]).ravel()
        return self._finish(state, rows, M, hm, hc, hc * (P * P), flat, xs, xd, ns, nd,
                            idx, w)

    def _finish(self, state, rows, M, hm, hc, cP2, flat, xs, xd, ns, nd, idx, w):
        """The loads after the moves, from the old and new ends (``xs, xd`` → ``ns,
        nd``) of the channels ``hc`` of move ``hm`` and the PE terms ``idx, w``."""
        P, C = self.n_pes, self.n_cns
        pold = xs * P
        pold += xd
        pold += cP2
        pnew = ns * P
        pnew += nd
        pnew += cP2
        if self.paid is not None:
            po, pn = self.paid_flat.take(pold), self.paid_flat.take(pnew)
            idx += [xs * M + hm, xd * M + hm, ns * M + hm, nd * M + hm]
            w += [-po, -po, pn, pn]
        # C-ordered (elements, M): the aggregation reduces over contiguous rows
        pe = np.bincount(np.concatenate(idx), np.concatenate(w), minlength=P * M)
        pe = pe.reshape(P, M)
        pe += state.pe.take(rows, 1)
        if C:
            if self.cn_pair is not None:
                dh = self.cn_pair.take(pnew, 0)
                dh -= self.cn_pair.take(pold, 0)                       # (H, C)
            else:
                pairs = P * P
                dh = (self.route.take(pnew % pairs, 0) - self.route.take(pold % pairs, 0)) \
                    * self.comm.take(hc, 0)
            # float even without channels (bincount of nothing counts in integers)
            cn = np.bincount(flat, dh.ravel(), minlength=M * C).reshape(C, M) \
                .astype(float, copy=False)
            cn += state.cn.take(rows, 1)
        else:
            cn = np.zeros((0, M))
        bad = state.bad.take(rows)
        if self.any_unroutable:
            bad = bad + np.bincount(hm, self.unroutable_pairs.take(pnew)
                                    - self.unroutable_pairs.take(pold), minlength=M)
        return pe, cn, bad
