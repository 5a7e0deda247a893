"""The batch evaluator: many mappings at once with numpy.

A :class:`BatchEvaluator` is compiled once from a bound problem, a metric and an
aggregation.  It restates no rule: it tabulates those of the semantic core.  Each
element's rule (:func:`mapping.semantics.metrics.rule`) gives per-token features and a finish;
the evaluator precomputes (:class:`CostTables`)

- ``proc[a, p]``: the value of all processing tokens of actor ``a`` on PE ``p``, for
  *additive* rules (a linear finish applies token by token);
- ``comm[c, k]``: the same for the communication tokens of channel ``c`` on CN ``k``;
- ``route[s·P + d, k]``: 1 where CN ``k`` lies on the route of a channel from PE ``s``
  to PE ``d`` (the PE's ``local`` CN on the diagonal), the fewest-hop route of
  :meth:`moa.Architecture.route`;
- per feature, the same tables of feature totals for the other rules (``roofline``'s
  ``ops`` and ``bytes``, the four sums of the ``power`` mean), finished per element by
  the rule's own ``finish`` applied to arrays;
- the memory traffic of each PE (the models' ``token_traffic``) and its affine cost on
  every CN of the route to its memory (``traffic_cost``, ``MemoryTraffic.share``);
- ``charged[c, s·P + d]``: the cost, by their CNs' rules, of the tokens of channel ``c``
  that CNs with ``charge = ends | both`` on the route from ``s`` to ``d`` charge to each
  end PE; ``comm`` then keeps only what stays on the CNs (``self``, ``both``).
  ``lambda·charged`` is added to the PEs of both ends, as
  :func:`mapping.evaluation.core.element_values` does.

The system value is the aggregation's own ``combine`` (:mod:`mapping.semantics.aggregation`) on
the ``(P, n)`` and ``(C, n)`` element values of a chunk of mappings.  A mapping is a row
of PE indices, one per actor in the application's declaration order; an ``(N, actors)``
integer array is evaluated chunk by chunk with gathers and bincounts, never with a
Python loop over mappings.

Where every rule is additive and there is no memory traffic (the search's hot path),
``sum`` and ``max`` compile further, to gather tables per group of actors
(:mod:`mapping.evaluation.group_plans`).

A model that overrides ``element_value`` alone (not ``features``/``finish``), a rule that
cannot be tabulated (a bad token attribute, memory traffic whose cost is not affine,
shares of a ``power`` mean for ``exclusive``) makes the evaluator fall back to the
reference evaluator one mapping at a time, so that results are always those of
:func:`mapping.evaluation.reference.evaluate`; :attr:`BatchEvaluator.vectorized` says which path is
taken.

A timed aggregation (``schedule``, ``period``, :attr:`Aggregation.timed`) takes the
firing-level tables of :mod:`mapping.evaluation.timing` instead: the same list-scheduling steps for
every row of a chunk.

Mappings are evaluated without fixed routes (``via``): search explores assignments of
actors to PEs, routed by the architecture.  A PE pair without a route makes every
mapping that needs it cost ``inf`` (the reference evaluator raises instead).
"""
from __future__ import annotations

import copyreg
import math
import types
import weakref

from typing import Mapping as MappingT, Sequence

import numpy as np

from moa import NoRouteError
from dsl.mappings import Mapping
from mapping.semantics.aggregation import aggregator
from mapping.errors import MappingError
from mapping.semantics.metrics import (INTENSIVE, SYSTEM, check_metric, compose,
                                      rule, system_metrics, system_parts,
                                      unvalued)
from moa.architecture import term_name
from mapping.semantics.problem import Problem
from mapping.semantics.routing import validate_mapping
from mapping.evaluation.core import placed_value, refuse_aggregate
from mapping.evaluation.reference import MappedTokens
from mapping.evaluation.timing import pair_routes, timing_tables
from mapping.semantics.traffic import channel_cost, charged_paid, traffic_model
from mapping.evaluation.cost_tables import CostTables, tabulate
from mapping.evaluation.group_plans import bottleneck_plan, separable_plan

# Bound problems hold read-only mapping proxies; let them pickle (as dicts rebuilt into
# proxies) so that evaluators and problems can travel to Dask workers.
copyreg.pickle(types.MappingProxyType, lambda m: (types.MappingProxyType, (dict(m),)))

#: mappings per chunk: bounds the temporaries (about 10 MB for max on the benchmark
#: problem) whatever the batch size
DEFAULT_CHUNK = 8192
#: beyond this many PE pairs the per-pair tables are not built (route incidence instead)
MAX_PAIR_ROWS = 65536
#: from this many PEs on, the generic path beats the group tables for ``max``: above 8
#: PEs a group holds two actors instead of three, above 22 one; gathered table by table,
#: the groups are 1.4-1.8x faster at 12 to 20 PEs, level at 22, slower beyond
#: (``tests/perf/bench.py``: ``max_paths``, load about 6)
MAX_PLAN_PES = 21


class BatchEvaluator:
    """Evaluate ``metric`` aggregated by ``aggregate`` for arrays of mappings.

    ``evaluate(X)`` takes an ``(N, actors)`` integer array of PE indices (columns in
    :attr:`actors` order, values indexing :attr:`pes`) and returns ``N`` values equal to
    those of the reference evaluator.  ``loads(X)`` gives the per-element values
    (``(N, elements)``, before ``lambda``, in :attr:`elements` order).  The object holds
    only numpy arrays, names and the core's rule objects once compiled, so it pickles
    cheaply (for Dask workers).  ``max_plan`` forces (True) or forbids (False) the group
    tables for bottleneck aggregations; by default they are used below
    :data:`MAX_PLAN_PES` PEs, where they are faster than the generic path.
    """

    def __new__(cls, problem: Problem | None = None, metric: str = "time", *args, **kwargs):
        # a system metric composes the evaluators of its terms; unpickling
        # calls __new__ without arguments
        if cls is BatchEvaluator and problem is not None \
                and metric in system_metrics(problem.arch):
            return super().__new__(SystemBatchEvaluator)
        return super().__new__(cls)

    def __init__(self, problem: Problem, metric: str = "time", aggregate: str | None = None,
                 chunk: int = DEFAULT_CHUNK, *, max_plan: bool | None = None):
        arch, act = problem.arch, problem.activity
        check_metric(arch, metric)
        self.metric = metric
        self.aggregate = aggregate or arch.aggregate
        self.aggregation = aggregator(self.aggregate)
        #: the firing-level tables of a timed aggregation (``schedule``, ``period``)
        self._timing = timing_tables(problem, metric, self.aggregate) \
            if self.aggregation.timed else None
        self.chunk = int(chunk)
        self.actors: list[str] = list(problem.app.actors)
        self.channels: list[str] = list(problem.app.channels)
        self.pes: list[str] = arch.pes
        self.cns: list[str] = arch.cns
        self.elements: list[str] = list(arch.elements)
        self.lambda_ = float(arch.lambda_)
        P, C = len(self.pes), len(self.cns)
        self.n_actors, self.n_pes, self.n_cns = len(self.actors), P, C
        self.actor_index = {a: i for i, a in enumerate(self.actors)}
        self.pe_index = {p: i for i, p in enumerate(self.pes)}
        chans = [problem.app.channels[c] for c in self.channels]
        self.src = np.array([self.actor_index[c.src] for c in chans], dtype=np.intp)
        self.dst = np.array([self.actor_index[c.dst] for c in chans], dtype=np.intp)
        self._problem = None

        # Routes: CN incidence of every ordered PE pair; unroutable pairs are flagged.
        cn_index = {k: i for i, k in enumerate(self.cns)}
        self.route, self.unroutable = pair_routes(arch, self.pes, self.cns)
        self._penalty = np.where(self.unroutable, np.inf, 0.0) if self.unroutable.any() else None

        big = self.n_actors * P + len(self.channels) * P * P
        self._itype = np.int32 if big < 2**31 - 1 else np.intp
        self._actor_off = (np.arange(self.n_actors) * P).astype(self._itype)
        self._pair_off = (np.arange(len(self.channels)) * P * P).astype(self._itype)
        self.traffic_slope = np.zeros((P, C))
        self.traffic_base = np.zeros((P, C))
        self.traffic_bytes = np.zeros((self.n_actors, P))
        self.has_traffic = False
        self.proc = np.zeros((self.n_actors, P))
        self.comm = np.zeros((len(self.channels), C))
        self.charged = np.zeros((len(self.channels), P * P))
        self._charging = False
        self._charged_list = None
        self._pe_finish, self._cn_finish = [], []      # (index, rule) of non-additive ones
        self._pe_features = self._cn_features = None    # (F, rows, elements)
        self._cn_feature_tables = []
        self._cn_tables = None

        self._plan = None
        #: ``(actors, PEs)``: pairs whose tokens the PE's rule refuses (a ``lookup`` key
        #: without a default): ``inf`` in ``proc``, an error for a mapping that uses one
        self._bad_cells = None
        self.vectorized = self._compile(arch, act, cn_index)
        #: every element value is a sum of table entries: the group tables apply
        self.fast = self.vectorized and not self._pe_finish and not self._cn_finish \
            and not self.has_traffic
        if not self.vectorized or self._bad_cells is not None:
            self._problem = problem         # the reference evaluator explains, or evaluates
        if not self.vectorized:
            return
        if self.fast:
            # a channel's whole contribution to sum: its CNs, and each end PE's charge
            pair = channel_cost(self.lambda_, self.comm @ self.route.T, self.charged)
            if self._penalty is not None:
                pair = pair + self._penalty
            self._sum_table = np.concatenate([self.proc.ravel(), pair.ravel()])
            self._chan_off = (self.proc.size + self._pair_off).astype(self._itype)
            self._proc_list = self.proc.tolist()
            self._pair_list = pair.tolist()
            self._src_list, self._dst_list = self.src.tolist(), self.dst.tolist()
            self._comm_list = self.comm.tolist()
            self._charged_list = charged_paid(self.lambda_, self.charged).tolist() \
                if self._charging \
                else None
            self._route_list = [np.flatnonzero(r).tolist() for r in self.route]
        agg = self.aggregation
        if self.fast and P * P <= MAX_PAIR_ROWS:
            if agg.separable:
                self._plan = separable_plan(self.proc, pair, self._src_list, self._dst_list)
            elif agg.bottleneck and (C or self._penalty is None) \
                    and (max_plan if max_plan is not None else P < MAX_PLAN_PES):
                self._plan = bottleneck_plan(
                    self.proc, self.comm, self.route, self._src_list, self._dst_list,
                    self.lambda_, self._penalty, self.charged if self._charging else None)

    @property
    def tables(self) -> CostTables:
        """The compiled cost tables (:class:`CostTables`)."""
        return CostTables(self.proc, self.comm, self.route, self.unroutable, self.src,
                          self.dst, self.lambda_, self.traffic_slope, self.traffic_base,
                          self.fast, self.charged)

    @property
    def components(self) -> tuple["BatchEvaluator", ...]:
        """The evaluators whose tables determine this one's values: itself (a system
        metric's are those of its terms).  A PE permutation that leaves every
        component's tables unchanged leaves the values unchanged (symmetry reduction)."""
        return (self,)

    @property
    def plan(self) -> str:
        """Which path evaluates arrays: ``"groups"`` (group tables), ``"tables"``
        (gathers of the compiled tables) or ``"reference"`` (one mapping at a time)."""
        if not self.vectorized:
            return "reference"
        return "groups" if self._plan is not None else "tables"

    def _compile(self, arch, act, cn_index) -> bool:
        """Tabulate the core's rules; False where some rule cannot be tabulated (then
        every mapping goes through the reference evaluator)."""
        metric = self.metric
        pe_elems = [arch.elements[p] for p in self.pes]
        cn_elems = [arch.elements[k] for k in self.cns]
        pe_rules = [rule(e, metric) for e in pe_elems]
        cn_rules = [rule(e, metric) for e in cn_elems]
        self._pe_modelled = np.array([r is not None for r in pe_rules], dtype=bool)
        self._cn_modelled = np.array([r is not None for r in cn_rules], dtype=float)
        self._traffic_reach = np.zeros(len(pe_rules), dtype=bool)
        self._traffic_pes = np.zeros(len(pe_rules), dtype=bool)
        if any(r is not None and not r.vectorizable for r in pe_rules + cn_rules):
            return False
        try:
            self.proc, self._pe_finish, self._pe_features, self._bad_cells = tabulate(
                pe_rules, [act.processing[a] for a in self.actors])
            self.comm, self._cn_finish, self._cn_features, bad_comm = tabulate(
                cn_rules, [act.communication[c] for c in self.channels])
        except ValueError:
            return False                # a bad attribute under a non-additive rule
        if bad_comm is not None:
            return False                # a bad channel attribute: the reference explains it
        if self.aggregation.needs_shares and self._cn_finish:
            return False                # shares of a mean are not sums of tokens
        if not self._charge(cn_elems):
            return False
        # memory traffic: D along the route to the memory CN, miss·D on it
        for i, e in enumerate(pe_elems):
            model = traffic_model(e, metric)
            if model is None:
                continue
            if not model.vectorizable:
                return False
            traffic = model.memory_traffic(())
            target = arch.elements.get(traffic.memory)
            if target is None or target.is_pe:
                return False            # the reference evaluator reports the error
            try:
                route = arch.route_to_cn(e.name, traffic.memory)
                self.traffic_bytes[:, i] = [act.processing[a].count
                                            * model.token_traffic(act.processing[a])
                                            for a in self.actors]
            except (NoRouteError, ValueError, TypeError, ZeroDivisionError):
                return False            # the reference evaluator reports the error
            for k in route:
                r = cn_rules[cn_index[k]]
                affine = (0.0, 0.0) if r is None else r.traffic_cost()
                if affine is None:
                    return False
                slope, base = affine
                self.traffic_slope[i, cn_index[k]] = slope * traffic.share(k)
                self.traffic_base[i, cn_index[k]] = base
                self._traffic_reach[i] |= r is not None
            self._traffic_pes[i] = True
            self.has_traffic = True
        self._pe_additive, self._cn_additive = bool(self.proc.any()), bool(self.comm.any())
        # the traffic is often a feature the PEs total anyway (roofline's bytes): reuse it
        self._traffic_feature = None
        if self.has_traffic and self._pe_features is not None:
            self._traffic_mask = self._traffic_pes[:, None].astype(float)
            cols = np.flatnonzero(self._traffic_pes)
            for f, table in enumerate(self._pe_features):
                if np.array_equal(table[:, cols], self.traffic_bytes[:, cols]):
                    self._traffic_feature = f
                    break
        self._cn_tables = self._gather_tables(self.comm)
        if self._cn_features is not None:
            self._cn_feature_tables = [self._gather_tables(f) for f in self._cn_features]
        return True

    def _charge(self, cn_elems) -> bool:
        """Split ``comm`` into what stays on the CNs and ``charged``; False
        where a charging CN's rule is not additive (the reference evaluator values the
        charged tokens as a group).  Intensive metrics are never charged."""
        if self.metric in INTENSIVE:
            return True
        ends = np.array([e.charges_ends for e in cn_elems], dtype=float)
        if not ends.any():
            return True
        if any(ends[rows].any() for rows, _ in self._cn_finish):
            return False
        stay = np.array([e.keeps_tokens for e in cn_elems], dtype=float)
        self.charged = (self.comm * ends) @ self.route.T
        self.comm = self.comm * stay
        self._charging = bool(self.charged.any())
        return True

    def _gather_tables(self, comm):
        """Per-CN gather tables ``(C, Ch·P²)`` (cost of channel ``c`` on CN ``k`` for each
        PE pair), or None when too large (then the route incidence is used)."""
        P, C, Ch = self.n_pes, self.n_cns, len(self.channels)
        if C * Ch * P * P > 4_000_000:
            return None
        if not C:
            return np.zeros((0, Ch * P * P))
        return np.ascontiguousarray(
            (comm[:, None, :] * self.route[None, :, :]).transpose(2, 0, 1).reshape(C, -1))

    # ----------------------------------------------------------------- encoding
    def encode(self, mapping: Mapping | MappingT[str, str]) -> np.ndarray:
        """The row of PE indices of a :class:`Mapping` or an ``actor → PE`` dict."""
        assignment = mapping.assignment if isinstance(mapping, Mapping) else mapping
        try:
            return np.array([self.pe_index[assignment[a]] for a in self.actors], dtype=np.intp)
        except KeyError as exc:
            raise MappingError(f"cannot encode mapping: {exc.args[0]!r} is not a mapped actor "
                               "or not a PE") from None

    def decode(self, row: Sequence[int]) -> dict[str, str]:
        """``actor → PE`` of one row."""
        return {a: self.pes[int(p)] for a, p in zip(self.actors, row)}

    def to_mapping(self, row: Sequence[int], name: str = "best") -> Mapping:
        return Mapping(name, self.decode(row))

    # ---------------------------------------------------------------- evaluation
    def evaluate(self, X) -> np.ndarray:
        """Values of the ``(N, actors)`` array ``X`` (a single row is accepted too)."""
        X = self._check(X, bounds=self._plan is None)      # a plan checks chunk by chunk
        if self._bad_cells is not None:
            self._refuse_bad_cells(self._check(X))
        out = np.empty(X.shape[0])
        if self._timing is not None:
            for start in range(0, X.shape[0], self.chunk):
                Xc = X[start:start + self.chunk]
                out[start:start + len(Xc)] = self.aggregation.timed_value(
                    self._timing, self._transpose(Xc))
        elif self._plan is not None:
            self._plan.run(X, out, self.chunk)
        else:
            for start in range(0, X.shape[0], self.chunk):
                Xc = X[start:start + self.chunk]
                out[start:start + len(Xc)] = self._evaluate_chunk(Xc)
        if self.vectorized and not self._pe_modelled.all():
            self._unvalued(X, out)
        return out

    def _refuse_bad_cells(self, X: np.ndarray) -> None:
        """Raise the reference evaluator's error for the first mapping of ``X`` that puts
        an actor on a PE whose rule refuses its tokens (as ``evaluate`` would)."""
        used = self._bad_cells[np.arange(self.n_actors), X].any(axis=1)
        if used.any():
            self._reference(X[int(np.flatnonzero(used)[0])])

    def _unvalued(self, X: np.ndarray, out: np.ndarray) -> None:
        """Set to ``inf`` the values of mappings whose every busy element is unmodelled
        (the reference evaluator raises for them; a search must not take their 0)."""
        rows = np.flatnonzero(out == 0)
        if not len(rows):
            return
        Xz = X[rows]
        used = self._pe_modelled[Xz].any(axis=1)
        if len(self.channels) and self.n_cns:
            pair = Xz[:, self.src] * self.n_pes + Xz[:, self.dst]
            used |= (self.route[pair] @ self._cn_modelled).any(axis=1)
        if self.has_traffic:
            moved = self.traffic_bytes[np.arange(self.n_actors), Xz] > 0      # (n, A)
            used |= (moved & self._traffic_reach[Xz]).any(axis=1)
        out[rows[unvalued(True, used)]] = np.inf

    __call__ = evaluate

    def _check(self, X, bounds: bool = True) -> np.ndarray:
        X = np.asarray(X)
        if X.ndim == 1:
            X = X[None, :]
        if X.ndim != 2 or X.shape[1] != self.n_actors:
            raise ValueError(f"expected an (N, {self.n_actors}) array of PE indices, "
                             f"got shape {X.shape}")
        if X.dtype.kind not in "iu":
            raise ValueError(f"PE indices must be integers, got {X.dtype}")
        if bounds and X.size and (X.min() < 0 or X.max() >= self.n_pes):
            raise ValueError(f"PE indices must lie in [0, {self.n_pes})")
        return X

    def _transpose(self, X: np.ndarray) -> np.ndarray:
        # Column-major work: one contiguous row per actor makes every gather sequential.
        return np.ascontiguousarray(X.T, dtype=self._itype)

    def _evaluate_chunk(self, X: np.ndarray) -> np.ndarray:
        if not self.vectorized:
            return np.array([self._reference(row)[0] for row in X])
        XT = self._transpose(X)
        if self.fast and self.aggregation.separable:
            # the contributions of actors and channels, lambda and penalties folded in
            A, P = self.n_actors, self.n_pes
            idx = np.empty((A + len(self.channels), XT.shape[1]), dtype=self._itype)
            np.add(XT, self._actor_off[:, None], out=idx[:A])
            pairs = idx[A:]
            np.multiply(XT[self.src], P, out=pairs)
            pairs += XT[self.dst]
            pairs += self._chan_off[:, None]
            return self._sum_table.take(idx).sum(axis=0)
        pair = self._pairs(XT)
        pe, cn, data = self._loads_t(XT, pair)
        shares = self._shares(XT, pair, data) if self.aggregation.needs_shares else None
        value, _ = self.aggregation.combine(pe, cn, self.lambda_, shares, locate=False)
        if self._penalty is not None:
            value = value + self._penalty.take(pair).sum(axis=0)
        return value

    def _bincount(self, XT: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """``(P, n)`` sums of ``weights`` (``(A, n)``) by the PE of each actor."""
        n, P = XT.shape[1], self.n_pes
        idx = XT * n + np.arange(n, dtype=self._itype)
        # The additions of a bincount, in the same order (equal sums), 1.05-3.5x faster
        # from numpy 1.25 on (its ufunc.at fast path).
        out = np.zeros(P * n)
        np.add.at(out, idx.ravel(), weights.ravel())
        return out.reshape(P, n)

    def _pe_loads(self, XT: np.ndarray, table: np.ndarray) -> np.ndarray:
        return self._bincount(XT, table.ravel().take(XT + self._actor_off[:, None]))

    def _pairs(self, XT: np.ndarray) -> np.ndarray:
        pair = XT[self.src] * self.n_pes                                 # (Ch, n)
        pair += XT[self.dst]
        return pair

    def _cn_loads(self, XT: np.ndarray, comm: np.ndarray, tables=None, pair=None) -> np.ndarray:
        n = XT.shape[1]
        pair = self._pairs(XT) if pair is None else pair
        if not self.n_cns:
            return np.zeros((0, n))
        if tables is not None:
            flat = pair + self._pair_off[:, None]
            return np.stack([t.take(flat).sum(axis=0) for t in tables])
        return np.einsum("cnk,ck->kn", self.route[pair], comm)

    def _loads_t(self, XT: np.ndarray, pair: np.ndarray):
        """Per-PE ``(P, n)`` and per-CN ``(C, n)`` element values (before lambda), and
        the memory traffic ``(P, n)`` of each PE (None without)."""
        n = XT.shape[1]
        pe = self._pe_loads(XT, self.proc) if self._pe_additive else np.zeros((self.n_pes, n))
        cn = self._cn_loads(XT, self.comm, self._cn_tables, pair) if self._cn_additive \
            else np.zeros((self.n_cns, n))
        totals = None
        if self._pe_finish:
            totals = [self._pe_loads(XT, f) for f in self._pe_features]
            for rows, r in self._pe_finish:
                pe[rows] = r.finish([t[rows] for t in totals[:r.width]])
        if self._cn_finish:
            cn_totals = [self._cn_loads(XT, f, t, pair)
                         for f, t in zip(self._cn_features, self._cn_feature_tables)]
            for rows, r in self._cn_finish:
                cn[rows] = r.finish([t[rows] for t in cn_totals[:r.width]])
        data = None
        if self.has_traffic:
            if self._traffic_feature is not None:
                data = totals[self._traffic_feature] * self._traffic_mask
            else:
                data = self._pe_loads(XT, self.traffic_bytes)
            cn += self.traffic_slope.T @ data
            cn += self.traffic_base.T @ (data != 0).astype(float)
        if self._charging:
            paid = charged_paid(self.lambda_,
                                self.charged.ravel().take(pair + self._pair_off[:, None]))
            pe += self._bincount(XT[self.src], paid) + self._bincount(XT[self.dst], paid)
        return pe, cn, data

    def _shares(self, XT: np.ndarray, pair: np.ndarray, data) -> np.ndarray:
        """``(P, C, n)``: the value of each CN's tokens attributed to each PE: the
        channels it produces and its memory traffic (:func:`mapping.semantics.traffic.tokens_by_pe`)."""
        n, P, C = XT.shape[1], self.n_pes, self.n_cns
        shares = np.zeros((P, C, n))
        if not C:
            return shares
        producer = XT[self.src]                                          # (Ch, n)
        idx = (producer * n + np.arange(n, dtype=self._itype)).ravel()
        flat = pair + self._pair_off[:, None]
        for k in range(C):
            if self._cn_tables is not None:
                w = self._cn_tables[k].take(flat)
            else:
                w = self.route[pair, k] * self.comm[:, k][:, None]
            shares[:, k] = np.bincount(idx, weights=w.ravel(), minlength=P * n).reshape(P, n)
            if data is not None:
                shares[:, k] += self.traffic_slope[:, k][:, None] * data
                shares[:, k] += self.traffic_base[:, k][:, None] * (data != 0)
        return shares

    def loads(self, X) -> np.ndarray:
        """Per-element values ``(N, elements)`` (architecture order, before lambda)."""
        X = self._check(X)
        if self._bad_cells is not None:
            self._refuse_bad_cells(X)
        rows = [self.pe_index[e] if e in self.pe_index else self.n_pes + self.cns.index(e)
                for e in self.elements]
        out = np.empty((X.shape[0], len(self.elements)))
        for start in range(0, X.shape[0], self.chunk):
            Xc = X[start:start + self.chunk]
            if self.vectorized:
                XT = self._transpose(Xc)
                pair = self._pairs(XT)
                pe, cn, _ = self._loads_t(XT, pair)
                if self._penalty is not None and len(cn):
                    cn[0] += self._penalty.take(pair).sum(axis=0)
                out[start:start + len(Xc)] = np.concatenate([pe, cn])[rows].T
            else:
                for r, row in enumerate(Xc):
                    out[start + r] = self._reference(row)[1]
        return out

    def value(self, mapping: Mapping | MappingT[str, str] | Sequence[int]) -> float:
        """One mapping, fast (plain Python over precomputed lists for the group-table
        aggregations of additive rules): a :class:`Mapping`, an ``actor → PE`` dict or a
        row."""
        if isinstance(mapping, Mapping) or isinstance(mapping, MappingT):
            assignment = mapping.assignment if isinstance(mapping, Mapping) else mapping
            pi = self.pe_index
            try:
                row = [pi[assignment[a]] for a in self.actors]
            except KeyError as exc:
                raise MappingError(f"cannot evaluate mapping: {exc.args[0]!r} is not a mapped "
                                   "actor or not a PE") from None
        else:
            row = [int(p) for p in mapping]
        agg = self.aggregation
        if not self.fast or not (agg.separable or agg.bottleneck) \
                or not self._pe_modelled.all():
            return float(self.evaluate(np.array(row))[0])
        proc, pair, P = self._proc_list, self._pair_list, self.n_pes
        if agg.separable:
            # the contributions of actors and channels, lambda and penalties folded in
            total = 0.0
            for costs, p in zip(proc, row):
                total += costs[p]
            for costs, s, d in zip(pair, self._src_list, self._dst_list):
                total += costs[row[s] * P + row[d]]
            return total
        if self._penalty is not None and any(
                self.unroutable[row[s] * P + row[d]] for s, d in zip(self._src_list, self._dst_list)):
            return math.inf
        pe = [0.0] * P
        for costs, p in zip(proc, row):
            pe[p] += costs[p]
        cn = [0.0] * self.n_cns
        for costs, s, d in zip(self._comm_list, self._src_list, self._dst_list):
            for k in self._route_list[row[s] * P + row[d]]:
                cn[k] += costs[k]
        if self._charged_list is not None:
            for costs, s, d in zip(self._charged_list, self._src_list, self._dst_list):
                paid = costs[row[s] * P + row[d]]
                pe[row[s]] += paid
                pe[row[d]] += paid
        value, _ = agg.combine(np.array(pe)[:, None], np.array(cn).reshape(-1, 1),
                               self.lambda_, locate=False)
        return float(value[0])

    def _reference(self, row) -> tuple[float, list[float]]:
        """The value and element values of one row by the reference evaluator's
        placement; the value is ``inf`` where every element the mapping uses is
        unmodelled (the reference raises: :class:`_Candidate`), as on the compiled
        paths."""
        problem = self._problem
        m = Mapping("candidate", self.decode(row))
        validate_mapping(problem.app, problem.arch, m)
        candidate = _Candidate(problem, m)
        got = placed_value(problem.arch, candidate, self.metric, self.aggregate,
                           problem.params)
        return (math.inf if candidate.unvalued else got.value,
                [got.values.get(e, 0.0) for e in self.elements])


class _Candidate(MappedTokens):
    """The reference's placement of a candidate of a search, except that a mapping
    without a value (every busy element unmodelled) is marked ``unvalued`` (its value
    ``inf``, never the best) instead of refused."""

    unvalued = False

    def refuse(self, metric, rows, unmodelled):
        self.unvalued = True


class SystemBatchEvaluator(BatchEvaluator):
    """A system metric ``metric NAME = EXPR`` for arrays of mappings: one
    :class:`BatchEvaluator` per distinct term ``M[AGG]`` (and one per system metric the
    expression uses), their value arrays combined by
    :func:`mapping.semantics.metrics.compose_system`, as the reference evaluator combines its
    terms.  ``loads`` are those of the first term."""

    def __init__(self, problem: Problem, metric: str = "time", aggregate: str | None = None,
                 chunk: int = DEFAULT_CHUNK, *, max_plan: bool | None = None):
        check_metric(problem.arch, metric)
        refuse_aggregate(problem.arch, metric, aggregate)
        self.metric, self.aggregate, self.aggregation = metric, SYSTEM, None
        self.expr = system_metrics(problem.arch)[metric].expr
        self.params = dict(problem.params)
        self._parts = system_parts(problem.arch, metric)
        self.parts: dict[str, BatchEvaluator] = {
            name if agg is None else term_name(name, agg):
                BatchEvaluator(problem, name, agg, chunk, max_plan=max_plan)
            for name, agg in self._parts}
        first = next(iter(self.parts.values()))
        for attr in ("chunk", "actors", "channels", "pes", "cns", "elements", "lambda_",
                     "n_actors", "n_pes", "n_cns", "actor_index", "pe_index"):
            setattr(self, attr, getattr(first, attr))
        # False: the symmetry reduction and the exact search read one metric's tables,
        # which do not describe the expression
        self.vectorized = self.fast = False
        self._plan = None

    @property
    def tables(self) -> CostTables:
        """The first term's tables, marked non-linear: no MILP models the expression."""
        t = next(iter(self.parts.values())).tables
        return CostTables(t.proc, t.comm, t.route, t.unroutable, t.src, t.dst, t.lambda_,
                          t.traffic_slope, t.traffic_base, False, t.charged)

    @property
    def components(self) -> tuple[BatchEvaluator, ...]:
        """The terms' evaluators: the expression is a function of their values only."""
        return tuple(c for part in self.parts.values() for c in part.components)

    @property
    def plan(self) -> str:
        return "system: " + ", ".join(f"{k} ({p.plan})" for k, p in self.parts.items())

    def evaluate(self, X) -> np.ndarray:
        X = self._check(X)

        def term(name: str, agg: str | None) -> np.ndarray:
            return self.parts[name if agg is None else term_name(name, agg)].evaluate(X)
        return compose(self.expr, self._parts, term, self.params, X.shape[0])[0]

    __call__ = evaluate

    def loads(self, X) -> np.ndarray:
        return next(iter(self.parts.values())).loads(X)

    def value(self, mapping) -> float:
        if isinstance(mapping, Mapping) or isinstance(mapping, MappingT):
            row = self.encode(mapping)
        else:
            row = np.array([int(p) for p in mapping])
        return float(self.evaluate(row)[0])


# ------------------------------------------------------------- public fast path
_cache: dict[tuple, tuple[weakref.ref, BatchEvaluator]] = {}


def compiled(problem: Problem, metric: str = "time", aggregate: str | None = None
             ) -> BatchEvaluator:
    """The :class:`BatchEvaluator` of ``problem`` for ``metric``/``aggregate``, compiled
    once and cached for as long as ``problem`` lives."""
    key = (id(problem), metric, aggregate)
    hit = _cache.get(key)
    if hit is not None and hit[0]() is problem:
        return hit[1]
    ev = BatchEvaluator(problem, metric, aggregate)
    ref = weakref.ref(problem, lambda _r, k=key: _cache.pop(k, None))
    _cache[key] = (ref, ev)
    return ev


def evaluate_value(problem: Problem, mapping: Mapping | MappingT[str, str], metric: str = "time",
                   aggregate: str | None = None) -> float:
    """The system value of one mapping, as :func:`mapping.evaluation.reference.evaluate` ``.value``,
    through the compiled tables (tens of microseconds once compiled)."""
    return compiled(problem, metric, aggregate).value(mapping)


def evaluate_batch(problem: Problem, X, metric: str = "time", aggregate: str | None = None
                   ) -> np.ndarray:
    """Values of the ``(N, actors)`` array of PE indices ``X``."""
    return compiled(problem, metric, aggregate).evaluate(X)
