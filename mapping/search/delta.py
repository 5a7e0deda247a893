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
evaluator on the moved mappings (:class:`Neighbourhood` hides which).

Values agree with the batch evaluator's up to rounding (the sums are taken in another
order); a strategy reports the exact value of its best mapping (:meth:`Tracker.offer`).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mapping.semantics.aggregation import contributions
from mapping.semantics.traffic import charged_paid
from mapping.search.common import Tracker

#: largest ``channels × P² × CNs`` table of per-pair CN loads kept (float64 entries);
#: beyond it the route incidence is gathered per move
MAX_PAIR_TABLE = 1 << 21
#: move lists whose gathers are kept (a strategy's fixed lists, anneal's one per actor)
MEMO = 1024
#: and at most this many bytes of them
MEMO_BYTES = 64 << 20
#: loads are recomputed from scratch after this many applied moves (rounding drift)
REFRESH = 64
#: the share of pair moves that are swaps of two actors' PEs
SWAPS = 0.3
#: under a bottleneck aggregation, the share of kicks (:meth:`Neighbourhood.kick`) that
#: fill a PE with room with a grown region instead of moving a small group
FILL = 0.5


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


class Neighbourhood:
    """The candidate moves of a local search on one shard, valued by :class:`Delta`
    where it applies and by the batch evaluator on the moved mappings elsewhere; every
    candidate counts as one evaluation on the tracker (truncated to its budget)."""

    def __init__(self, task, tracker: Tracker):
        self.space, self.tracker = task.space, tracker
        objectives = tracker.objectives
        delta = None if objectives.multi else Delta(objectives.evaluators[0])
        self.delta = delta if delta is not None and delta.supported else None
        self._lists: dict = {}
        self._acts = None

    @property
    def bottleneck_aggregation(self) -> bool:
        return self.delta is not None and bool(self.delta.aggregation.bottleneck)

    def pressure(self, loads) -> np.ndarray | None:
        """The tie-break of a :class:`State` or :class:`Moves` (:meth:`Delta.pressure`)
        under a bottleneck aggregation, else None."""
        if not self.bottleneck_aggregation:
            return None
        return self.delta.pressure(loads.pe, loads.cn)

    def start(self, X: np.ndarray) -> State | None:
        """A state of the mappings ``X``, evaluated (counted) by the batch evaluator;
        None when the budget is spent."""
        f = self.tracker.evaluate(X)
        if len(f) < len(X):
            return None
        return self._state(np.array(X, dtype=np.intp), f)

    def _state(self, X: np.ndarray, f: np.ndarray) -> State:
        st = State(X, np.array(f, dtype=float))
        if self.delta is not None:
            st.pe, st.cn, st.bad = self.delta.loads(X)
            v = self.delta.values(st.pe, st.cn, st.bad)
            st.values = np.where(v == 0, st.values, v)      # unmodelled: the evaluator's
        return st

    def evaluate(self, state: State, rows, actors, pes, actors2=None, pes2=None) -> Moves:
        """Value the moves (truncated to the remaining budget) and count them."""
        n = min(len(actors), max(self.tracker.remaining, 0))
        if np.ndim(rows) == 0:
            rows = np.full(len(actors), rows, dtype=np.intp)
        if n < len(actors):
            rows, actors, pes = rows[:n], actors[:n], pes[:n]
            if actors2 is not None:
                actors2, pes2 = actors2[:n], pes2[:n]
        mv = Moves(rows, actors, pes, actors2, pes2, np.empty(0))
        if not n:
            return mv
        if self.delta is None:
            mv.values = self.tracker.evaluate(mv.mappings(state.X, np.arange(n)))
            return mv
        mv.pe, mv.cn, mv.bad = self.delta.moves(state, rows, actors, pes, actors2, pes2)
        mv.values = self.delta.values(mv.pe, mv.cn, mv.bad)
        zero = np.flatnonzero(mv.values == 0)
        if len(zero):
            # the batch evaluator makes a mapping that uses only unmodelled elements inf
            ev = self.tracker.objectives.evaluators[0]
            mv.values[zero] = ev.evaluate(mv.mappings(state.X, zero))
        self.tracker.offer(mv.values, lambda i: mv.mappings(state.X, i))
        return mv

    def apply(self, state: State, moves: Moves, idx) -> None:
        """Take the moves ``idx`` (at most one per row of ``state``)."""
        idx = np.atleast_1d(np.asarray(idx, dtype=np.intp))
        if not len(idx):
            return
        rows = moves.rows[idx]
        state.X[rows, moves.actors[idx]] = moves.pes[idx]
        if moves.actors2 is not None:
            two = moves.actors2[idx] >= 0
            state.X[rows[two], moves.actors2[idx][two]] = moves.pes2[idx][two]
        state.values[rows] = moves.values[idx]
        if self.delta is None:
            return
        state.pe[:, rows] = moves.pe[:, idx]
        state.cn[:, rows] = moves.cn[:, idx]
        state.bad[rows] = moves.bad[idx]
        state.applied += 1
        if state.applied % REFRESH == 0:
            self.refresh(state)

    def refresh(self, state: State) -> None:
        """Recompute the loads from scratch (rounding drift of many applied moves)."""
        if self.delta is not None:
            state.pe, state.cn, state.bad = self.delta.loads(state.X)
            v = self.delta.values(state.pe, state.cn, state.bad)
            state.values = np.where(v == 0, state.values, v)

    # ------------------------------------------------------ neighbourhoods
    def candidates(self, X: np.ndarray, rng: np.random.Generator, sample: int):
        """The moves a local-search step values in each row of ``X``: all its single-actor
        moves (free actors to their other allowed PEs), or, where those are more than
        ``sample``, ``sample`` random ones.  ``(rows, actors, pes, per_row, full)``, each
        row's moves consecutive (the same arrays of rows and actors step after step where
        they can be: delta evaluation keeps their gathers)."""
        K = len(X)
        if self._acts is None:
            self._acts = self.space.moves_of(X[:0])[0]
        acts = self._acts
        N = len(acts)
        full = N <= sample
        per = N if full else sample
        key = (K, per, full)
        if key not in self._lists:
            self._lists = {key: (np.repeat(np.arange(K), per),
                                 np.tile(acts, K) if full else None)}
        rows, actors = self._lists[key]
        if full:
            return rows, actors, self.space.moves_of(X)[1].ravel(), per, True
        actors, pes = self.space.random_moves(rng, X, rows)
        return rows, actors, pes, per, False

    def pairs(self, X: np.ndarray, rng: np.random.Generator, count: int):
        """``count`` random pair moves per row of ``X`` (delta-evaluated, under a
        bottleneck aggregation only; else None): an end of a random channel goes to a
        random allowed PE and the other end follows it there where allowed, so that
        clusters of communicating actors cross to another cluster of PEs without their
        channels loading the bus on the way; a share :data:`SWAPS` of them instead swap
        the PEs of an actor and a random other one (balance without a new load).
        ``(actors, pes, actors2, pes2)``, each ``(K·count,)``, row-major;
        ``actors2 = -1``: a single move."""
        if not self.bottleneck_aggregation:
            return None
        if not hasattr(self, "_links"):
            d, sp = self.delta, self.space
            free = np.zeros(len(sp.n_choices), dtype=bool)
            free[sp.free] = True
            ends = np.stack([d.src, d.dst], axis=1)
            self._links = ends[(d.src != d.dst) & free[d.src] & free[d.dst]]
        links = self._links
        if not len(links):
            return None
        K, sp = len(X), self.space
        pick = links[rng.integers(0, len(links), K * count)]
        flip = rng.random(K * count) < 0.5
        a = np.where(flip, pick[:, 1], pick[:, 0])
        b = np.where(flip, pick[:, 0], pick[:, 1])
        p = sp.choice_table[a, (rng.random(K * count) * sp.n_choices[a]).astype(np.intp)]
        rows = np.repeat(np.arange(K), count)
        follow = sp.allowed[b, p] & (X[rows, b] != p)
        b, q = np.where(follow, b, -1), np.where(follow, p, -1)
        if SWAPS:
            swap = rng.random(K * count) < SWAPS
            c = sp.free[rng.integers(0, len(sp.free), K * count)]
            pc, pa = X[rows, c], X[rows, a]
            ok = swap & (c != a) & sp.allowed[a, pc] & sp.allowed[c, pa]
            p = np.where(ok, pc, p)
            b = np.where(ok, c, b)
            q = np.where(ok, pa, q)
        return a, p, b, q

    def subset(self, state: State, rows) -> State:
        """A new state of the rows ``rows`` of ``state``."""
        rows = np.asarray(rows, dtype=np.intp)
        sub = State(state.X[rows].copy(), state.values[rows].copy())
        if self.delta is not None:
            sub.pe, sub.cn = state.pe[:, rows].copy(), state.cn[:, rows].copy()
            sub.bad = state.bad[rows].copy()
        return sub

    def replace(self, state: State, rows, X: np.ndarray) -> bool:
        """Put the mappings ``X`` in ``rows`` of ``state``, evaluated (counted); False
        when the budget is spent first."""
        rows = np.asarray(rows, dtype=np.intp)
        if not len(rows):
            return True
        if self.delta is None:
            f = self.tracker.evaluate(X)
            if len(f) < len(X):
                return False
            state.X[rows], state.values[rows] = X, f
            return True
        if self.tracker.remaining < len(X):
            return False
        pe, cn, bad = self.delta.loads(X)
        v = self.delta.values(pe, cn, bad)
        zero = np.flatnonzero(v == 0)
        if len(zero):
            v[zero] = self.tracker.objectives.evaluators[0].evaluate(X[zero])
        self.tracker.offer(v, lambda i: X[i])
        state.X[rows], state.values[rows] = X, v
        state.pe[:, rows], state.cn[:, rows], state.bad[rows] = pe, cn, bad
        return True

    def ruin(self, X: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        """The ruin half of a large-neighbourhood move (the descent that follows
        recreates): in each row of ``X`` a connected group of 2 to ``size`` free actors
        moves to one random allowed PE of its first actor (members not allowed there
        stay).  The group grows from a random free actor that loads the row's bottleneck
        element (:meth:`loading`; any free actor without a bottleneck aggregation) along
        random channels, so its inner channels stay on one PE: a cluster of
        communicating actors changes sides without loading the bus, which the same
        actors scattered over random PEs would (the descent then mostly puts them
        back)."""
        sp = self.space
        K, A = X.shape
        free = np.zeros(A, dtype=bool)
        free[sp.free] = True
        pool = np.broadcast_to(free, (K, A)).copy()
        if self.bottleneck_aggregation:
            hot = self.loading(X) & pool
            some = hot.any(axis=1)
            pool[some] = hot[some]
        rows = np.flatnonzero(pool.any(axis=1))
        Y = X.copy()
        if not len(rows):
            return Y
        n = len(rows)
        first = np.where(pool[rows], rng.random((n, A)), 2.0).argmin(axis=1)
        src, dst, incident, start, degree = self.adjacency()
        group = np.full((n, max(size, 1)), -1, dtype=np.intp)
        group[:, 0] = first
        count = np.ones(n, dtype=np.intp)
        want = rng.integers(2, size + 1, n) if size >= 2 else count
        for _ in range(2 * size if len(incident) else 0):
            grow = count < want
            if not grow.any():
                break
            # a random member's random channel brings its other end in
            u = group[np.arange(n), (rng.random(n) * count).astype(np.intp)]
            deg = degree[u]
            at = np.minimum(start[u] + (rng.random(n) * deg).astype(np.intp), len(incident) - 1)
            ch = incident[at]
            v = np.where(src[ch] == u, dst[ch], src[ch])
            new = grow & (deg > 0) & free[v] & ~(group == v[:, None]).any(axis=1)
            group[new, count[new]] = v[new]
            count += new
        to = sp.choice_table[first, (rng.random(n) * sp.n_choices[first]).astype(np.intp)]
        r, j = np.nonzero(group >= 0)
        a, p = group[r, j], to[r]
        ok = sp.allowed[a, p]
        Y[rows[r[ok]], a[ok]] = p[ok]
        return Y

    def kick(self, X: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        """A local search's kick of each row of ``X``: :meth:`ruin` with groups of up to
        ``size`` actors, or (under a bottleneck aggregation, a share :data:`FILL` of the
        rows) :meth:`fill`."""
        Y = self.ruin(X, rng, size)
        if self.bottleneck_aggregation:
            filled = np.flatnonzero(rng.random(len(X)) < FILL)
            if len(filled):
                Y[filled] = self.fill(X[filled], rng)
        return Y

    def fill(self, X: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Each row of ``X`` with a region of free actors moved onto a PE with room: a
        random PE among those whose spare (the largest element contribution minus the
        PE's load) is at least half the largest spare, and a region grown from a random
        actor by greedy graph growing (Karypis & Kumar 1998, GGGP): the frontier actor
        whose channels to the region and the PE outweigh its other channels joins next,
        while the PE's new load stays within the spare.  Under ``max`` a PE with room is
        best filled by a cluster with few channels out, which small group moves reach
        only one by one, each loading the bus on the way.  At 100 actors × 16 PEs (the
        benchmark's instance 2) the worse basin's runs (value 0.748e-4 against the best
        known 0.7177e-4) leave a big core nearly idle while the best mapping gives it a
        cluster of 13 actors with 12 channels out."""
        d, sp = self.delta, self.space
        neighbours = self._weighted_neighbours()
        free = np.zeros(X.shape[1], dtype=bool)
        free[sp.free] = True
        pe, cn, _ = d.loads(X)
        room = contributions(pe, cn, d.lambda_).max(axis=0) - pe                # (P, K)
        Y = X.copy()
        for r in range(len(X)):
            x = Y[r]
            spare = room[:, r]
            roomy = np.flatnonzero(spare >= 0.5 * spare.max())
            p = int(roomy[int(rng.random() * len(roomy))])
            pool = free & (x != p) & sp.allowed[:, p]
            starts = np.flatnonzero(pool)
            if not len(starts):
                continue
            seed = int(starts[int(rng.random() * len(starts))])
            cost, cap = d.proc[:, p].tolist(), float(spare[p])
            if cost[seed] > cap:
                continue
            # near: joined the region or already on p; open: may still join
            near = (x == p).tolist()
            open_ = pool.tolist()
            gain: dict[int, float] = {}
            load, region, v = 0.0, [], seed
            while v >= 0:
                load += cost[v]
                region.append(v)
                near[v], open_[v] = True, False
                gain.pop(v, None)
                for u, w in neighbours[v]:
                    if not open_[u]:
                        continue
                    if u in gain:
                        gain[u] += 2 * w            # its channel to v is no longer cut
                    else:
                        gain[u] = sum(c if near[o] else -c for o, c in neighbours[u])
                v = -1
                while gain and v < 0:
                    u = max(gain, key=gain.__getitem__)
                    del gain[u]
                    if load + cost[u] <= cap:
                        v = u
                    else:
                        open_[u] = False
            x[region] = p
        return Y

    def _weighted_neighbours(self) -> list[list[tuple[int, float]]]:
        """Each actor's ``(other end, channel weight)`` pairs (:func:`channel_weights`),
        as Python lists: a region grows one actor at a time."""
        if not hasattr(self, "_neighbours"):
            src, dst, incident, start, degree = self.adjacency()
            weight = channel_weights(self.delta.evaluator.tables)
            self._neighbours = [
                [(int(dst[c] if src[c] == a else src[c]), float(weight[c]))
                 for c in incident[start[a]:start[a] + degree[a]]]
                for a in range(len(start))]
        return self._neighbours

    def adjacency(self):
        """``(src, dst, incident, start, degree)``: the channels' ends and each actor's
        channels (:func:`incidence`)."""
        if not hasattr(self, "_csr"):
            if self.delta is not None:
                d = self.delta
                self._csr = (d.src, d.dst, d.incident, d.start, d.degree)
            else:
                tables = self.tracker.objectives.evaluators[0].tables
                src, dst = np.asarray(tables.src, np.intp), np.asarray(tables.dst, np.intp)
                self._csr = (src, dst, *incidence(src, dst, self.space.allowed.shape[0]))
        return self._csr

    def loading(self, X: np.ndarray) -> np.ndarray:
        """``(K, A)``: the actors that load the bottleneck element of each mapping of
        ``X`` (by the aggregation's ``combine``): those on the bottleneck PE (and the
        ends of channels that charge it), or the ends of the channels routed through
        the bottleneck CN."""
        d = self.delta
        K, A = X.shape
        pe, cn, _ = d.loads(X)
        _, where = d.aggregation.combine(pe, cn, d.lambda_)
        pair = X[:, d.src] * d.n_pes + X[:, d.dst]                        # (K, Ch)
        on = X == where[:, None]                                          # PE rows
        if d.paid is not None:
            paid = d.paid[np.arange(len(d.src)), pair] > 0
            hot = paid & (on[:, d.src] | on[:, d.dst])
        else:
            hot = np.zeros(pair.shape, dtype=bool)
        cn_rows = where >= d.n_pes
        if cn_rows.any():
            k = np.where(cn_rows, where - d.n_pes, 0)
            via = d.route[pair, k[:, None]] > 0
            hot |= via & cn_rows[:, None]
        r, c = np.nonzero(hot)
        on[r, d.src[c]] = True
        on[r, d.dst[c]] = True
        on[where < 0] = False
        return on
