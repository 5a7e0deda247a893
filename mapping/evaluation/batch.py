"""The batch evaluator: many mappings at once with numpy (SPEC §9, §11).

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
  end PE (SPEC §12); ``comm`` then keeps only what stays on the CNs (``self``, ``both``).
  ``lambda·charged`` is added to the PEs of both ends, as
  :func:`mapping.evaluation.reference.element_values` does.

The system value is the aggregation's own ``combine`` (:mod:`mapping.semantics.aggregation`) on
the ``(P, n)`` and ``(C, n)`` element values of a chunk of mappings.  A mapping is a row
of PE indices, one per actor in the application's declaration order; an ``(N, actors)``
integer array is evaluated chunk by chunk with gathers and bincounts, never with a
Python loop over mappings.

Where every rule is additive and there is no memory traffic (the search's hot path),
aggregations that declare themselves *separable* (``sum``) or *bottleneck* (``max``)
compile further, to tables per *group* of up to 4 (separable) or 3 (bottleneck: paths
of two channels) actors, chosen so that both ends of every channel lie in one group:
the row ``Σ_j X[a_j]·P^(k-1-j)`` of a group's table holds everything the group owns for
that joint placement (its actors' processing, its channels' communication, ``lambda``
folded in), a scalar for separable, a row of 4 element values for bottleneck (CNs over
the channel groups, PEs by halves over groups of consecutive actors).  A mapping then
costs one gather per group (11 scalars for ``sum``, 29 rows for ``max`` on the
20-actor, 30-channel benchmark, instead of 50 and 110), computed in reused buffers
(fresh large temporaries cost page faults) with a narrow-integer Horner index.  For
bottleneck aggregations the group tables are used below :data:`MAX_PLAN_PES` PEs only,
where they are the faster path (:attr:`BatchEvaluator.plan`).

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
import heapq
import math
import types
import weakref
from dataclasses import dataclass
from typing import Iterable, Mapping as MappingT, Sequence

import numpy as np

from moa import NoRouteError
from dsl.mappings import Mapping
from mapping.semantics.aggregation import aggregator
from mapping.errors import MappingError
from mapping.semantics.metrics import (INTENSIVE, SYSTEM, check_metric, compose,
                                      is_charged, rule, system_metrics, system_parts)
from moa.architecture import term_name
from mapping.semantics.problem import Problem
from mapping.semantics.routing import place_tokens
from mapping.evaluation.timing import pair_routes, timing_tables
from mapping.semantics.traffic import channel_cost, charged_paid, traffic_model

# Bound problems hold read-only mapping proxies; let them pickle (as dicts rebuilt into
# proxies) so that evaluators and problems can travel to Dask workers.
copyreg.pickle(types.MappingProxyType, lambda m: (types.MappingProxyType, (dict(m),)))

#: mappings per chunk: bounds the temporaries (about 10 MB for max on the benchmark
#: problem) whatever the batch size
DEFAULT_CHUNK = 8192
#: rows (joint placements) of one group's table: for ``sum`` (scalars) and ``max``
#: (``_WIDTH`` element values per row); groups have as many actors as fits
SUM_GROUP_ROWS = 4096
MAX_GROUP_ROWS = 512
PE_GROUP_ROWS = 512
#: beyond this many PE pairs the per-pair tables are not built (route incidence instead)
MAX_PAIR_ROWS = 65536
#: at most this many table entries (float64) for the group tables
MAX_TABLE = 1 << 22

#: from this many PEs on, the generic path beats the group tables for ``max``: above 8
#: PEs a group holds two actors instead of three, above 22 one; gathered table by table,
#: the groups are 1.4-1.8x faster at 12 to 20 PEs, level at 22, slower beyond
#: (``tests/perf/bench.py``: ``max_paths``, load about 6)
MAX_PLAN_PES = 21
_WIDTH = 4              # at most this many element values per gathered row for max


@dataclass(frozen=True)
class CostTables:
    """The cost tables a :class:`BatchEvaluator` compiles from the semantic core, before
    ``lambda``; the exact search and the symmetry reduction read these.

    - ``proc[a, p]``: the value of all processing tokens of actor ``a`` on PE ``p`` (PEs
      whose rule is additive; 0 for the others and unmodelled ones);
    - ``comm[c, k]``: the same for the communication tokens of channel ``c`` on CN ``k``;
    - ``route[s·P + d, k]``: 1 where CN ``k`` lies on the route from PE ``s`` to PE
      ``d`` (the PE's ``local`` CN on the diagonal); ``unroutable[s·P + d]``: no route;
    - ``src[c]``, ``dst[c]``: the actor indices of channel ``c``'s ends;
    - ``traffic_slope[p, k]``, ``traffic_base[p, k]``: the memory traffic ``D_p`` of PE
      ``p`` costs ``slope·D_p + base`` on CN ``k`` (``base`` only when ``D_p > 0``);
    - ``linear``: every element value is a sum of ``proc``, ``comm`` and ``charged``
      entries (additive rules everywhere, no memory traffic), so ``sum`` and ``max`` are
      linear programs;
    - ``charged[c, s·P + d]``: the cost (before ``lambda``) of channel ``c``'s tokens that
      the CNs of the route from ``s`` to ``d`` charge to *each* end PE (``charge = ends |
      both``, SPEC §12); ``comm`` holds only the part that stays on the CNs.
    """

    proc: np.ndarray
    comm: np.ndarray
    route: np.ndarray
    unroutable: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    lambda_: float
    traffic_slope: np.ndarray
    traffic_base: np.ndarray
    linear: bool
    charged: np.ndarray | None = None


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
        # a system metric composes the evaluators of its terms (SPEC §12); unpickling
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
                self._plan = self._sum_plan(pair)
            elif agg.bottleneck and (C or self._penalty is None) \
                    and (max_plan if max_plan is not None else P < MAX_PLAN_PES):
                self._plan = self._max_plan()

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
            self.proc, self._pe_finish, self._pe_features, self._bad_cells = _tabulate(
                pe_rules, [act.processing[a] for a in self.actors])
            self.comm, self._cn_finish, self._cn_features, bad_comm = _tabulate(
                cn_rules, [act.communication[c] for c in self.channels])
        except ValueError:
            return False                # a bad attribute under a non-additive rule
        if bad_comm is not None:
            return False                # a bad channel attribute: the reference explains it
        if self.aggregation.needs_shares and self._cn_finish:
            return False                # shares of a mean are not sums of tokens
        if not self._charge(cn_elems):
            return False
        # memory traffic (SPEC §5): D along the route to the memory CN, miss·D on it
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
            except (NoRouteError, ValueError, TypeError):
                return False
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
        """Split ``comm`` into what stays on the CNs and ``charged`` (SPEC §12); False
        where a charging CN's rule is not additive (the reference evaluator values the
        charged tokens as a group).  Intensive metrics are never charged."""
        if self.metric in INTENSIVE:
            return True
        mode = [e.charge for e in cn_elems]
        ends = np.array([m != "self" for m in mode], dtype=float)
        if not ends.any():
            return True
        if any(ends[rows].any() for rows, _ in self._cn_finish):
            return False
        stay = np.array([m != "ends" for m in mode], dtype=float)
        self.charged = (self.comm * ends) @ self.route.T
        self.comm = self.comm * stay
        self._charging = bool(self.charged.any())
        return True

    def _owners(self, groups):
        """The first group holding each actor and each channel (both ends)."""
        actor_owner, chan_owner = [None] * self.n_actors, [None] * len(self.channels)
        where: dict[int, list[int]] = {}
        for i, g in enumerate(groups):
            for a in g:
                where.setdefault(a, []).append(i)
                if actor_owner[a] is None:
                    actor_owner[a] = i
        for c, (s, d) in enumerate(zip(self._src_list, self._dst_list)):
            chan_owner[c] = next(i for i in where[s] if d in groups[i])
        return actor_owner, chan_owner

    def _sum_plan(self, pair: np.ndarray) -> "_Plan | None":
        """``sum``: one scalar table per group of actors, holding the processing cost of
        the actors it owns and the (lambda-scaled) cost of the channels it owns."""
        P, A = self.n_pes, self.n_actors
        k = _arity(P, SUM_GROUP_ROWS)
        if k < 2 and len(self.channels):
            return None
        groups = _cover(A, zip(self._src_list, self._dst_list), k)
        if sum(P ** len(g) for g in groups) > MAX_TABLE:
            return None
        grids = [np.indices((P,) * len(g)).reshape(len(g), -1) for g in groups]
        actor_owner, chan_owner = self._owners(groups)
        tables = [np.zeros(P ** len(g)) for g in groups]
        slots = [{a: j for j, a in enumerate(g)} for g in groups]
        for a, i in enumerate(actor_owner):
            tables[i] += self.proc[a][grids[i][slots[i][a]]]
        for c, i in enumerate(chan_owner):
            grid, slot = grids[i], slots[i]
            tables[i] += pair[c][grid[slot[self._src_list[c]]] * P + grid[slot[self._dst_list[c]]]]
        return _Plan(groups, [_Part(tables, [list(range(len(groups)))], [1])], A, P)

    def _max_plan(self) -> "_Plan | None":
        """``max``: rows of element values, CNs (scaled by lambda) summed over groups that
        cover the channels, PEs over groups of consecutive actors (and over the channel
        groups too when these charge communication to the end PEs), each in blocks of at
        most ``_WIDTH`` columns."""
        P, C, A = self.n_pes, self.n_cns, self.n_actors
        k = _arity(P, PE_GROUP_ROWS)
        cn_groups = _cover(A, zip(self._src_list, self._dst_list),
                           max(_arity(P, MAX_GROUP_ROWS), 2)) if C else []
        actor_owner, chan_owner = self._owners(cn_groups) if C else ([], [])
        cn_groups = cn_groups[:max(chan_owner, default=-1) + 1]    # those with channels
        pe_groups = [tuple(range(i, min(i + k, A))) for i in range(0, A, k)]
        groups = cn_groups + pe_groups
        charging = self._charging and bool(cn_groups)
        cn_rows = sum(P ** len(g) for g in cn_groups)
        if cn_rows * (C + _WIDTH + (P + _WIDTH if charging else 0)) \
                + sum(P ** len(g) for g in pe_groups) * (P + _WIDTH) > MAX_TABLE:
            return None
        lam = self.lambda_
        full = []                                       # (rows, P + C) per group
        for i, g in enumerate(groups):
            grid = np.indices((P,) * len(g)).reshape(len(g), -1)
            slot = {a: j for j, a in enumerate(g)}
            t = np.zeros((P ** len(g), P + C))
            if i < len(cn_groups):
                for c in (c for c, o in enumerate(chan_owner) if o == i):
                    pr = grid[slot[self._src_list[c]]] * P + grid[slot[self._dst_list[c]]]
                    t[:, P:] += lam * (self.route[pr] * self.comm[c])
                    if self._penalty is not None:
                        t[:, P:] += self._penalty[pr][:, None]
                    if charging:        # each end PE pays its copy
                        rows = np.arange(len(pr))
                        for end in (self._src_list[c], self._dst_list[c]):
                            np.add.at(t, (rows, grid[slot[end]]),
                                      charged_paid(lam, self.charged[c][pr]))
            else:
                rows = np.arange(P ** len(g))
                for j, a in enumerate(g):
                    np.add.at(t, (rows, grid[j]), self.proc[a][grid[j]])
            full.append(t)
        # one take for all: blocks of `width` columns (PEs by halves when P > width)
        width = 1 << (min(max(P, C), _WIDTH) - 1).bit_length()     # 1, 2, 4 or 8 columns
        tables, members, columns = [], [], []
        # PEs sum the channel groups too when those hold charged communication
        for which, first, count in ((range(len(cn_groups)), P, C),
                                    (range(0 if charging else len(cn_groups), len(groups)),
                                     0, P)):
            for lo in range(first, first + count, width):
                cols = list(range(lo, min(lo + width, first + count)))
                columns.append(len(cols))
                cols += [cols[0]] * (width - len(cols))            # pads repeat a column
                members.append(list(which))
                tables += [full[i][:, cols] for i in which]
        return _Plan(groups, [_Part(tables, members, columns)], A, P)

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
        out[rows[~used]] = np.inf

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
        return np.bincount(idx.ravel(), weights=weights.ravel(), minlength=P * n) \
            .reshape(P, n).astype(float, copy=False)

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
        """The value and element values of one row by the reference evaluator; the value
        is ``inf`` where every element the mapping uses is unmodelled (the reference
        raises), as on the compiled paths."""
        from mapping.evaluation.reference import check_modelled, element_values, evaluate
        problem = self._problem
        m = Mapping("candidate", self.decode(row))
        try:
            ev = evaluate(problem.app, problem.arch, m, metric=self.metric,
                          aggregate=self.aggregate, problem=problem)
        except MappingError:
            placed = place_tokens(problem.app, problem.arch, m, problem.activity, self.metric,
                                  charge=is_charged(self.metric))
            values, unmodelled = element_values(problem.arch, placed, self.metric)
            try:
                check_modelled(placed, unmodelled, self.metric, m.name)
            except MappingError:
                return math.inf, [values[e] for e in self.elements]
            raise
        return ev.value, [e.value for e in ev.elements]


class SystemBatchEvaluator(BatchEvaluator):
    """A system metric ``metric NAME = EXPR`` (SPEC §12) for arrays of mappings: one
    :class:`BatchEvaluator` per distinct term ``M[AGG]`` (and one per system metric the
    expression uses), their value arrays combined by
    :func:`mapping.semantics.metrics.compose_system`, as the reference evaluator combines its
    terms.  ``loads`` are those of the first term."""

    def __init__(self, problem: Problem, metric: str = "time", aggregate: str | None = None,
                 chunk: int = DEFAULT_CHUNK, *, max_plan: bool | None = None):
        from mapping.evaluation.reference import refuse_aggregate
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


def _tabulate(rules, tokens):
    """Tables of the element ``rules`` over the token groups ``tokens``: ``(table,
    finishes, features)``.  ``table[i, e]`` is the value of group ``i`` on element ``e``
    for additive rules (their finish is linear, so it applies token by token);
    ``features[f][i, e]`` the ``f``-th feature total of group ``i`` for the others, whose
    ``(elements, rule)`` are listed in ``finishes`` and finished on the summed totals (all
    the elements of a rule whose finish does not depend on the element at once)."""
    table = np.zeros((len(tokens), len(rules)))
    bad = np.zeros((len(tokens), len(rules)), dtype=bool)
    finishes, columns, shared = [], {}, {}
    for e, r in enumerate(rules):
        if r is None:
            continue
        F = np.zeros((len(tokens), r.width))
        for i, t in enumerate(tokens):
            try:
                F[i] = [t.count * f for f in r.features(t)]
            except (ValueError, TypeError, ZeroDivisionError):
                bad[i, e] = True        # the reference evaluator explains it, if used
        if bad[:, e].any() and not r.additive:
            raise ValueError("a bad token attribute under a non-additive rule")
        if r.additive:
            table[:, e] = r.finish(F.T)
        elif r.uniform:
            shared.setdefault(type(r), (np.zeros(0, dtype=np.intp), r))
            rows, first = shared[type(r)]
            shared[type(r)] = (np.append(rows, e), first)
            columns[e] = F
        else:
            finishes.append((np.array([e]), r))
            columns[e] = F
    finishes += list(shared.values())
    table[bad] = np.inf
    bad = bad if bad.any() else None
    if not finishes:
        return table, finishes, None, bad
    width = max(r.width for _, r in finishes)
    features = np.zeros((width, len(tokens), len(rules)))
    for e, F in columns.items():
        features[:F.shape[1], :, e] = F.T
    return table, finishes, features, bad


# ------------------------------------------------------------ factor tables
def _cover(n_actors: int, pairs: Iterable[tuple[int, int]], arity: int) -> list[tuple[int, ...]]:
    """Groups of at most ``arity`` actors such that both ends of every pair lie in one
    group and every actor lies in some group: the fewer of :func:`_grow` and (three
    actors) :func:`_paths`."""
    pairs = list(pairs)
    best = _grow(n_actors, pairs, arity)
    if arity == 3:
        paths = _paths(n_actors, pairs)
        if len(paths) < len(best):
            best = paths
    return best


def _rest(n_actors: int, groups: list[tuple[int, ...]], arity: int) -> list[tuple[int, ...]]:
    covered = {a for g in groups for a in g}
    rest = [a for a in range(n_actors) if a not in covered]
    return groups + [tuple(rest[i:i + arity]) for i in range(0, len(rest), arity)]


def _paths(n_actors: int, pairs: list[tuple[int, int]]) -> list[tuple[int, ...]]:
    """Paths of two pairs (three actors), and at most one lone pair per connected
    component: every connected graph with an even number of edges splits into such
    paths.  Depth-first, children before parents, each actor pairs up its free edges
    and hands a leftover one over with the edge to its parent."""
    adj: dict[int, list[int]] = {}
    seen_edges = set()
    for s, d in pairs:
        e = (min(s, d), max(s, d))
        if s != d and e not in seen_edges:
            seen_edges.add(e)
            adj.setdefault(s, []).append(d)
            adj.setdefault(d, []).append(s)
    used: set[tuple[int, int]] = set()
    groups: list[tuple[int, ...]] = []
    visited: set[int] = set()
    for root in sorted(adj):
        if root in visited:
            continue
        order, parent, stack = [], {root: None}, [root]
        visited.add(root)
        while stack:                    # a node is listed before everything it discovers
            v = stack.pop()
            order.append(v)
            for w in adj[v]:
                if w not in visited:
                    visited.add(w)
                    parent[w] = v
                    stack.append(w)
        for v in reversed(order):
            up = parent[v]
            free = [w for w in adj[v] if w != up and (min(v, w), max(v, w)) not in used]
            while len(free) >= 2:
                a, z = free.pop(), free.pop()
                used.update(((min(v, a), max(v, a)), (min(v, z), max(v, z))))
                groups.append((a, v, z))
            if free:
                a = free.pop()
                used.add((min(v, a), max(v, a)))
                if up is not None:
                    used.add((min(v, up), max(v, up)))
                    groups.append((a, v, up))
                else:
                    groups.append((v, a))
    return _rest(n_actors, groups, 3)


def _grow(n_actors: int, pairs: list[tuple[int, int]], arity: int) -> list[tuple[int, ...]]:
    """Greedy cover: a group starts at the actor with the most pairs still uncovered and
    grows by the neighbour that closes the most."""
    nbrs: dict[int, set[int]] = {}
    for s, d in pairs:
        if s != d:
            nbrs.setdefault(s, set()).add(d)
            nbrs.setdefault(d, set()).add(s)
    heap = [(-len(v), a) for a, v in nbrs.items()]
    heapq.heapify(heap)
    groups: list[tuple[int, ...]] = []
    while heap:
        deg, seed = heapq.heappop(heap)
        if -deg != len(nbrs[seed]):             # stale entry
            if nbrs[seed]:
                heapq.heappush(heap, (-len(nbrs[seed]), seed))
            continue
        if not nbrs[seed]:
            continue
        group = [seed]
        while len(group) < arity:
            gain: dict[int, int] = {}
            for a in group:
                for w in nbrs[a]:
                    if w not in group:
                        gain[w] = gain.get(w, 0) + 1
            if not gain:
                break
            group.append(max(sorted(gain), key=lambda w: (gain[w], len(nbrs[w]))))
        for a in group:
            for b in group:
                nbrs[a].discard(b)
        for a in group:
            if nbrs[a]:
                heapq.heappush(heap, (-len(nbrs[a]), a))
        groups.append(tuple(group))
    return _rest(n_actors, groups, arity)


def _arity(P: int, rows: int) -> int:
    """The most actors per group whose table of ``P^k`` rows stays within ``rows``."""
    k = 1
    while k < 4 and P ** (k + 1) <= rows:
        k += 1
    return k


class _Part:
    """Tables gathered by one ``take``: ``members`` lists, per segment (summed apart, then
    max-reduced), the group of each of its tables (a group may serve several segments,
    each with its own table); ``columns`` the real columns of each segment (the others
    repeat its first).  Tables are scalars or rows of element values."""

    def __init__(self, tables: list[np.ndarray], members: list[list[int]], columns: list[int]):
        self.groups = np.array([i for m in members for i in m], dtype=np.intp)
        sizes = [len(t) for t in tables]
        self.offsets = np.cumsum([0] + sizes[:-1]).astype(np.intp)[:, None]
        # a one-column table stays 2-D: a scalar table would sum its segments, not take
        # their maximum (max with one PE and one CN)
        self.table = np.concatenate(tables)
        # rows of element values: gathered table by table into a small accumulator (in
        # cache) rather than all at once into a (tables, n, width) block
        self.split = [self.table[o:o + len(t)] for o, t in zip(self.offsets.ravel(), tables)] \
            if self.table.ndim == 2 else None
        self.columns = max(columns)
        bounds = np.cumsum([0] + [len(m) for m in members]).tolist()
        self.segments = list(zip(bounds[:-1], bounds[1:]))


class _Plan:
    """Gather tables of groups of actors, evaluated without a Python loop over mappings.

    For a group ``(a_0, …, a_{k-1})`` the row ``Σ_j X[a_j]·P^(k-1-j)`` of its table holds
    the summed cost of everything the group owns for that joint placement, so a mapping's
    value is a sum of one gather per group instead of one per actor and one per channel
    (``sum``: one scalar part; ``max``: the maximum over the columns of every part)."""

    def __init__(self, groups: list[tuple[int, ...]], parts: list[_Part], n_actors: int,
                 P: int):
        self.n_actors, self.n_pes, self.parts = n_actors, P, parts
        k = max(len(g) for g in groups)
        # one index row per table of every part (a group serving several segments is
        # recomputed: cheaper than a gather of its row), Horner over right-aligned slots;
        # row n_actors of the transposed X is zeros
        rows = [i for part in parts for i in part.groups]
        self.slots = np.full((k, len(rows)), n_actors, dtype=np.intp)
        self.spans, lo = [], 0
        for part in parts:
            self.spans.append(slice(lo, lo + len(part.groups)))
            lo += len(part.groups)
        for r, i in enumerate(rows):
            g = groups[i]
            self.slots[k - len(g):, r] = g
        top = max(len(part.table) for part in parts)        # table rows, offsets included
        self.itype = np.int16 if top < 2 ** 15 else np.int32 if top < 2 ** 31 else np.intp
        for part in parts:
            part.offsets = part.offsets.astype(self.itype)

    def _buffers(self, n: int) -> dict:
        G = self.slots.shape[1]
        xt = np.empty((self.n_actors + 1, n), dtype=self.itype)
        xt[-1] = 0
        parts = []
        for part in self.parts:
            F, width = len(part.groups), part.table.shape[1:]
            # an intp index: ndarray.take converts any other type into a fresh copy
            parts.append((np.empty((F, n), dtype=np.intp),
                          np.empty((F, n) + width if part.split is None else (n,) + width),
                          np.empty((n,) + width), np.empty((n,) + width)))
        return {"x": np.empty((n, self.n_actors), dtype=self.itype), "xt": xt,
                "idx": np.empty((G, n), dtype=self.itype),
                "tmp": np.empty((G, n), dtype=self.itype), "parts": parts}

    def run(self, X: np.ndarray, out: np.ndarray, chunk: int) -> None:
        """Values of the ``(N, actors)`` rows ``X`` into ``out``, chunk by chunk, in
        buffers allocated once (fresh large temporaries cost page faults)."""
        N, A, P = X.shape[0], self.n_actors, self.n_pes
        slots = self.slots
        unsigned = np.dtype(f"u{X.dtype.itemsize}") if X.dtype.kind == "i" else None
        b = None
        for start in range(0, N, chunk):
            Xc = X[start:start + chunk]
            n = Xc.shape[0]
            if b is None or b["xt"].shape[1] != n:
                b = self._buffers(n)
            xt, idx, tmp = b["xt"], b["idx"], b["tmp"]
            # one pass checks both ends: negative indices are huge once unsigned
            if (Xc.view(unsigned) if unsigned is not None else Xc).max() >= P:
                raise ValueError(f"PE indices must lie in [0, {P})")
            np.copyto(b["x"], Xc, casting="unsafe")         # narrow first, then transpose
            np.copyto(xt[:A], b["x"].T)
            # ndarray.take with positional arguments: numpy's Python wrappers cost µs
            xt.take(slots[0], 0, idx, "clip")
            for row in slots[1:]:
                np.multiply(idx, P, out=idx)
                xt.take(row, 0, tmp, "clip")
                np.add(idx, tmp, out=idx)
            res = out[start:start + n]
            first = True
            for part, span, (flat, vals, top, other) in zip(self.parts, self.spans, b["parts"]):
                sub = idx[span]
                if part.split is None:                              # scalar tables: sum
                    np.add(sub, part.offsets, out=sub)  # narrow, then widen: mixed adds are slow
                    np.copyto(flat, sub)
                    part.table.take(flat, None, vals, "clip")
                    np.add.reduce(vals, 0, out=res)
                    continue
                np.copyto(flat, sub)
                tables = part.split
                for s, (lo, hi) in enumerate(part.segments):
                    acc = top if s == 0 else other
                    tables[lo].take(flat[lo], 0, acc, "clip")
                    for r in range(lo + 1, hi):
                        tables[r].take(flat[r], 0, vals, "clip")
                        np.add(acc, vals, out=acc)
                    if s:
                        np.maximum(top, other, out=top)
                # column by column: 1-D strided maxima are far faster than (n, 2) ones
                for j in range(part.columns):
                    if first:
                        res[:] = top[:, j]
                        first = False
                    else:
                        np.maximum(res, top[:, j], out=res)


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
