"""The candidate moves of a local search (issue 13): single-actor moves, pair moves and
swaps, and the kicks that restart a descent (ruin of a connected group, filling a PE
with room), valued by :class:`mapping.search.delta.Delta` where the tables allow it and
by the batch evaluator on the moved mappings elsewhere.  The strategies (greedy
descent, annealing, tabu) drive a search only through :class:`Neighbourhood`.
"""
from __future__ import annotations

import numpy as np

from mapping.semantics.aggregation import contributions
from mapping.search.common import Tracker
from mapping.search.delta import Delta, Moves, State, channel_weights, incidence

#: loads are recomputed from scratch after this many applied moves (rounding drift)
REFRESH = 64
#: the share of pair moves that are swaps of two actors' PEs
SWAPS = 0.3
#: under a bottleneck aggregation, the share of kicks (:meth:`Neighbourhood.kick`) that
#: fill a PE with room with a grown region instead of moving a small group
FILL = 0.5


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
