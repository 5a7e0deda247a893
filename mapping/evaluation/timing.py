"""Timing of mapped executions: list-scheduled makespan and period.

The firings are those of one iteration, the firings ``a#k`` of the HSDF expansion
(:func:`moc.hsdf.hsdf_expansion`, whose edges carry the iteration delay ``h`` of each
firing-level precedence; guarded by the ``firings`` limit).

- A firing of actor ``a`` on PE ``p`` takes ``fire[a, p]``: the PE's ``time`` rule
  (:func:`mapping.semantics.metrics.rule`) applied to ``a``'s processing token group with count 1,
  so that the ``q(a)`` firings of ``a`` sum to the PE's ``time`` value of ``a``'s tokens.
- A channel whose producer sits on PE ``s`` and consumer on ``d`` (``s ≠ d``, or ``s =
  d`` with a ``local`` CN: the route of :meth:`moa.Architecture.route`) delays the tokens
  of each producer firing by ``lambda · Σ_{CN k on the route} v_k`` with ``v_k`` CN
  ``k``'s ``time`` value of one producer firing's communication token.  CNs are
  latencies, not exclusive resources: transfers never contend.  With ``charge = ends |
  both`` the charged cost of the route, ``lambda·c`` per iteration, is copy
  work of the end cores: it extends every firing of the producer by ``lambda·c / q(src)``
  and every firing of the consumer by ``lambda·c / q(dst)``, so that on every PE the
  firing durations sum to the PE's ``time`` value under ``max``; only what stays on the
  CNs (``self``, ``both``) is a delay.
- Static list scheduling, non-insertion, with a priority order that does not depend on
  the mapping: HLFET (Adam, Chandy & Dickson 1974; Kwok & Ahmad, ACM Comput. Surv.
  31(4), 1999, §6.1): firings by decreasing static b-level over the zero-delay
  precedences, each firing weighing its actor's mean firing time over the PEs where it
  is finite, ties by topological position.  Walking the firings in that order, each
  starts at ``max(its PE's free time, max over zero-delay predecessors u (end(u) +
  channel delay))``; initial tokens satisfy the other precedences in the first
  iteration.  ``schedule`` is the makespan of that first iteration from an idle start.
- ``period``: every PE repeats the static order the list schedule gave it, iteration
  after iteration (self-timed static-order execution, Sriram & Bhattacharyya, Embedded
  Multiprocessors, ch. 7).  The end times then follow a max-plus linear recurrence
  ``x(k) = M ⊗ x(k-1)`` whose state is each PE's free time and, for every firing ``u``
  with a delayed out-edge, its end times of the last ``h`` iterations; ``M`` comes from
  one symbolic pass of the same list-scheduling steps.  The period is the maximum cycle
  mean of ``M`` (Karp, Discrete Math. 23, 1978), which equals the maximum cycle ratio
  of the static-order graph; throughput is ``1/period``.

Everything runs in numpy over ``N`` mappings at once (a mapping is a row of PE
indices): the steps of a list schedule with a fixed order are the same for every
mapping.  The reference evaluator calls the same code with ``N = 1``.
"""
from __future__ import annotations

import heapq
import weakref
from typing import Mapping as MappingT, Sequence

import numpy as np

from moa import NoRouteError
from moc.exact_times import exact_time, throughput_of
from moc.hsdf import channel_of, firing_actor, hsdf_expansion
from moc.phases import phase_value
from moc.record import field, record, replace
from dsl.mappings import Mapping
from mapping.errors import MappingError
from mapping.semantics.aggregation import untimed_names
from mapping.semantics.metrics import element_metric
from mapping.semantics.problem import Problem
from mapping.semantics.routing import channel_route, pe_route
from mapping.semantics.traffic import charged_paid

#: the metric a timed aggregation aggregates
TIMED_METRIC = "time"
#: mappings per chunk of the period's symbolic pass and Karp's ``(S, S, N)`` tables (small
#: chunks stay in the cache: 128 measured fastest on the 20-actor benchmark)
PERIOD_CHUNK = 128


def pair_routes(arch, pes: Sequence[str], cns: Sequence[str]
                ) -> tuple[np.ndarray, np.ndarray]:
    """``route[s·P + d, k]``: 1 where CN ``k`` (of the architecture's CNs ``cns``) lies
    on the route of a channel from PE ``s`` to PE ``d``
    (:func:`mapping.semantics.routing.pe_route`); ``unroutable[s·P + d]``: no route."""
    P = len(pes)
    cn_index = {k: i for i, k in enumerate(cns)}
    route = np.zeros((P * P, len(cns)))
    unroutable = np.zeros(P * P, dtype=bool)
    for s, ps in enumerate(pes):
        for d, pd in enumerate(pes):
            try:
                hops = pe_route(arch, ps, pd)
            except NoRouteError:
                unroutable[s * P + d] = True
                continue
            for k in hops:
                route[s * P + d, cn_index[k]] = 1.0
    return route, unroutable


@record
class Slot:
    """One bar of a schedule: a firing on a PE, or a transfer crossing a CN (``name`` is
    then :func:`transfer_name` of the channel and the producer firing)."""

    name: str
    actor: str
    start: float
    end: float


def transfer_name(channel: str, firing: str) -> str:
    """The name of the transfer of producer ``firing``'s tokens on ``channel``:
    ``channel:firing``."""
    return f"{channel}:{firing}"


def transfer_channel(name: str, actor: str) -> str | None:
    """The channel of :func:`transfer_name` ``name`` whose producer is ``actor`` (a
    channel or actor name may hold a colon, so the producer's firing is cut off from the
    end); None where ``name`` is a firing of ``actor``, not a transfer."""
    before = firing_actor(name)             # the transfer name less the firing's index
    tail = f":{actor}"
    return before[:-len(tail)] if before.endswith(tail) and len(before) > len(tail) else None


@record
class MappedTiming:
    """The timing of one mapping (:func:`mapped_analysis`)."""

    makespan: float
    period: float
    throughput: float | None
    critical_cycle: tuple[str, ...]
    latency: float
    buffers: MappingT[str, int]
    schedule: MappingT[str, tuple[Slot, ...]] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"throughput": self.throughput, "period": self.period,
                "critical_cycle": list(self.critical_cycle), "latency": self.latency,
                "buffers": dict(self.buffers), "makespan": self.makespan,
                "schedule": {element: [{"firing": s.name, "actor": s.actor, "start": s.start,
                                        "end": s.end} for s in slots]
                             for element, slots in self.schedule.items()}}


def _value(element, metric, token) -> float | None:
    value = element_metric(element, [token], metric)
    return None if value is None else float(value)


class TimingTables:
    """The firing-level tables of a problem, compiled once (:func:`timing_tables`).

    - ``fire[a, p]``: the time of one firing of actor ``a`` on PE ``p`` (``nan`` where the
      PE's rule fails on the actor's token; ``errors`` keeps the message);
    - ``stay[c, k]``: ``lambda·`` CN ``k``'s time of one producer firing's tokens of
      channel ``c`` where ``k`` keeps them (``charge = self | both``), else 0;
    - ``charged[c, k]``: ``lambda·`` CN ``k``'s time of one iteration's tokens of ``c``
      where ``k`` charges them to the ends (``ends | both``), else 0;
    - ``delay[c, s·P + d]`` and ``extend[c, s·P + d]`` the same summed over the route.
    """

    def __init__(self, problem: Problem, metric: str = TIMED_METRIC, aggregate: str = "schedule"):
        if metric != TIMED_METRIC:
            raise MappingError(f"aggregation '{aggregate}' schedules firings in time, so it "
                               f"aggregates metric '{TIMED_METRIC}' only, not '{metric}' (use "
                               f"{untimed_names()} for '{metric}')")
        app, arch, act = problem.app, problem.arch, problem.activity
        q = problem.repetitions
        # no reference to the problem: the cache (keyed by a weak reference to it) would
        # keep it alive, and evaluators holding these tables travel to Dask workers
        self.actors = list(app.actors)
        self.channels = list(app.channels)
        self.pes, self.cns = list(arch.pes), list(arch.cns)
        A, Ch, P, C = len(self.actors), len(self.channels), len(self.pes), len(self.cns)
        self.n_pes = P
        lam = float(arch.lambda_)
        actor_index = {a: i for i, a in enumerate(self.actors)}
        chan_index = {c: i for i, c in enumerate(self.channels)}
        self.src = np.array([actor_index[app.channels[c].src] for c in self.channels],
                            dtype=np.intp)
        self.dst = np.array([actor_index[app.channels[c].dst] for c in self.channels],
                            dtype=np.intp)
        self.q = np.array([q[a] for a in self.actors], dtype=float)

        self.fire = np.zeros((A, P))
        self.errors: dict[tuple[int, int], MappingError] = {}
        for i, a in enumerate(self.actors):
            one = replace(act.processing[a], count=1)
            for j, p in enumerate(self.pes):
                try:
                    self.fire[i, j] = _value(arch.elements[p], metric, one) or 0.0
                except MappingError as exc:
                    self.fire[i, j] = np.nan
                    self.errors[i, j] = exc
        self.stay = np.zeros((Ch, C))
        self.charged = np.zeros((Ch, C))
        for k, name in enumerate(self.cns):
            element = arch.elements[name]
            for i, c in enumerate(self.channels):
                tokens = act.communication[c]
                if element.keeps_tokens:
                    self.stay[i, k] = lam * (_value(element, metric, replace(tokens, count=1))
                                             or 0.0)
                if element.charges_ends:
                    self.charged[i, k] = charged_paid(lam, _value(element, metric, tokens)
                                                      or 0.0)
        self.route, self.unroutable = pair_routes(arch, self.pes, self.cns)
        self.delay = self.stay @ self.route.T                      # (Ch, P²)
        self.extend = self.charged @ self.route.T
        self._actor_off = (np.arange(A) * P)[:, None]
        self._pair_off = (np.arange(Ch) * P * P)[:, None]
        #: ``_ends[a, c]``: the share of channel ``c``'s charged cost on each firing of
        #: ``a`` (``1/q(a)`` per end of ``c`` that ``a`` is), None without charging
        self._ends = None
        if self.charged.any():
            self._ends = np.zeros((A, Ch))
            for end in (self.src, self.dst):
                np.add.at(self._ends, (end, np.arange(Ch)), 1.0 / self.q[end])
        self._firings(app, actor_index, chan_index)

    # ----------------------------------------------------------- firing structure
    def _firings(self, app, actor_index, chan_index) -> None:
        h = hsdf_expansion(app)
        self.firings = list(h.actors)
        fidx = {f: i for i, f in enumerate(self.firings)}
        self.firing_actor = np.array([actor_index[firing_actor(f)] for f in self.firings],
                                     dtype=np.intp)
        F = len(self.firings)
        #: (u, v, channel, iteration delay) of every firing-level precedence
        self.edges: list[tuple[int, int, int, int]] = []
        for label, e in h.channels.items():
            channel = chan_index[channel_of(label, e.src, e.dst)]
            self.edges.append((fidx[e.src], fidx[e.dst], channel, int(e.delay)))
        # HLFET priorities: static b-level over the zero-delay precedences, weights the
        # mean finite firing time of each actor (mapping-independent)
        with np.errstate(invalid="ignore"):
            finite = np.isfinite(self.fire)
            mean = np.where(finite, self.fire, 0.0).sum(1) / np.maximum(finite.sum(1), 1)
        succ: list[list[int]] = [[] for _ in range(F)]
        indeg = [0] * F
        for u, v, _, d in self.edges:
            if d == 0:
                succ[u].append(v)
                indeg[v] += 1
        heap, topo = [i for i in range(F) if not indeg[i]], []
        heapq.heapify(heap)
        while heap:
            u = heapq.heappop(heap)
            topo.append(u)
            for v in succ[u]:
                indeg[v] -= 1
                if not indeg[v]:
                    heapq.heappush(heap, v)
        if len(topo) != F:          # bind_problem checks deadlock; this cannot happen
            raise MappingError(f"'{app.name}': the firings of one iteration have a cycle "
                               "without initial tokens")
        blevel = [0.0] * F
        for u in reversed(topo):
            blevel[u] = float(mean[self.firing_actor[u]]) + max(
                (blevel[v] for v in succ[u]), default=0.0)
        pos = {u: i for i, u in enumerate(topo)}
        self.order = sorted(range(F), key=lambda u: (-blevel[u], pos[u]))
        # symbolic state: PE free times, then (u, j) = end of u j iterations back
        depth: dict[int, int] = {}
        for u, _, _, d in self.edges:
            if d > 0:
                depth[u] = max(depth.get(u, 0), d)
        # the states computed by the pass (PEs, ends of the last iteration) first, then
        # those that only shift by one iteration
        self.state: dict[tuple[int, int], int] = {}
        for j in range(1, max(depth.values(), default=0) + 1):
            for u in sorted(depth):
                if j <= depth[u]:
                    self.state[u, j] = self.n_pes + len(self.state)
        self.n_states = self.n_pes + len(self.state)
        self._computed = self.n_pes + sum(1 for _, j in self.state if j == 1)
        self._shifted = np.array([self.state[u, j - 1] for (u, j) in self.state if j > 1],
                                 dtype=np.intp)
        # the states the pass reads: PE free times and the ends that delayed edges need
        self._read = np.array(sorted(set(range(self.n_pes)) | {
            self.state[u, d] for u, _, _, d in self.edges if d > 0}), dtype=np.intp)
        ins: list[list[tuple[int, int]]] = [[] for _ in range(F)]
        delayed: list[list[tuple[int, int]]] = [[] for _ in range(F)]
        for u, v, c, d in self.edges:
            (ins[v].append((u, c)) if d == 0 else delayed[v].append((self.state[u, d], c)))
        self._steps = [(f, int(self.firing_actor[f]), ins[f], delayed[f]) for f in self.order]

    # ------------------------------------------------------------- per mapping
    def inputs(self, XT: np.ndarray) -> tuple:
        """``(XT, dur (A, N), delay (Ch, N), bad (N,))`` of the ``(A, N)`` PE indices
        ``XT`` routed by the architecture: firing durations per actor, channel delays per
        producer firing; ``bad``: a pair without a route or an infinite firing time (the
        value is then ``inf``)."""
        pair = XT[self.src] * self.n_pes
        pair += XT[self.dst]
        bad = self.unroutable.take(pair).any(axis=0) if self.unroutable.any() \
            else np.zeros(XT.shape[1], dtype=bool)
        pair += self._pair_off
        extend = self.extend.ravel().take(pair) if self._ends is not None else None
        return self._inputs(XT, self.delay.ravel().take(pair), extend, bad)

    def inputs_for(self, problem: Problem, mapping: Mapping) -> tuple:
        """The same for one mapping with its own routes (``via``), as placed by
        :func:`mapping.semantics.routing.channel_route`."""
        pi = {p: i for i, p in enumerate(self.pes)}
        ci = {k: i for i, k in enumerate(self.cns)}
        XT = np.array([[pi[mapping.assignment[a]]] for a in self.actors], dtype=np.intp)
        app, arch = problem.app, problem.arch
        on = np.zeros((len(self.channels), len(self.cns)))
        for i, c in enumerate(self.channels):
            for k in channel_route(app, arch, mapping, c):
                on[i, ci[k]] = 1.0
        delay = (self.stay * on).sum(1)[:, None]
        extend = (self.charged * on).sum(1)[:, None]
        return self._inputs(XT, delay, extend, np.zeros(1, dtype=bool))

    def _inputs(self, XT, delay, extend, bad):
        dur = self.fire.ravel().take(XT + self._actor_off)
        if self.errors and np.isnan(dur).any():
            a, n = np.argwhere(np.isnan(dur))[0]
            raise self.errors[int(a), int(XT[a, n])]
        if self._ends is not None:
            # charged copies: each end's firings share its part
            dur += self._ends @ extend
        bad = bad | ~np.isfinite(dur).all(axis=0) | ~np.isfinite(delay).all(axis=0)
        if bad.any():
            dur = np.where(np.isfinite(dur), dur, 0.0)
            delay = np.where(np.isfinite(delay), delay, 0.0)
        return XT, dur, delay, bad

    # ------------------------------------------------------ the list schedule
    def _pass(self, XT, dur, delay, free, symbolic: bool):
        """The list-scheduling steps over all mappings at once: ``free (P, N, S)`` holds
        each PE's free time as a max-plus row over ``S`` state variables (``S = 1`` and
        zeros: an idle start).  Returns the starts (None when ``symbolic``) and ends
        ``(F, N, S)``; ``free`` is updated in place.  Delayed precedences count only in
        the ``symbolic`` pass (in the first iteration initial tokens satisfy them)."""
        F, N, S = len(self.firings), XT.shape[1], free.shape[2]
        P = free.shape[0]
        rows = free.reshape(P * N, S)                           # a view: row pe·N + mapping
        cols = np.arange(N)
        start = None if symbolic else np.empty((F, N, S))
        end = np.empty((F, N, S))
        arrived = np.empty((N, S))
        for f, a, preds, delayed in self._steps:
            slot = XT[a] * N + cols
            t = rows.take(slot, axis=0)
            # one predecessor at a time: (N, S) operations beat a 3-D broadcast and reduce
            for u, c in preds:
                np.add(end[u], delay[c][:, None], out=arrived)
                np.maximum(t, arrived, out=t)
            if symbolic:
                for s, c in delayed:
                    np.maximum(t[:, s], delay[c], out=t[:, s])
            if start is not None:
                start[f] = t
            np.add(t, dur[a][:, None], out=end[f])
            rows[slot] = end[f]
        return start, end

    def makespan(self, XT, dur, delay) -> np.ndarray:
        """``(N,)``: the end of the last firing of the first iteration, from an idle start."""
        N = XT.shape[1]
        _, end = self._pass(XT, dur, delay, np.zeros((self.n_pes, N, 1)), False)
        return end[:, :, 0].max(axis=0) if len(end) else np.zeros(N)

    def transfer(self, XT, dur, delay) -> np.ndarray:
        """The max-plus matrix ``M`` of one iteration, ``x(k) = M ⊗ x(k-1)``, in the
        layout Karp's recursion reads: ``(read, computed, N)``, ``[j, i, n]`` the weight
        of state ``j`` of iteration ``k-1`` in state ``i`` of iteration ``k`` (``-inf``:
        none), for the states the pass computes (PE free times, ends of this iteration)
        and those it reads (PE free times, ends that delayed edges need).  The other rows
        shift an end by one iteration (weight 0)."""
        P, S, N = self.n_pes, self.n_states, XT.shape[1]
        free = np.full((P, N, S), -np.inf)
        free[np.arange(P), :, np.arange(P)] = 0.0
        _, end = self._pass(XT, dur, delay, free, True)
        last = [u for (u, j) in self.state if j == 1]         # states P, P + 1, ... in order
        rows = np.concatenate([free, end[last]]) if last else free     # (computed, N, S)
        return np.ascontiguousarray(rows.take(self._read, axis=2).transpose(2, 0, 1))

    def period(self, XT, dur, delay) -> np.ndarray:
        """``(N,)``: the maximum cycle mean of :meth:`transfer`, by Karp's theorem with
        every state a source: ``λ = max_v min_{0≤j<n} (D_n(v) - D_j(v)) / (n - j)``,
        ``D_0 = 0``, ``D_k(v) = max_u D_{k-1}(u) + M[v, u]`` (Karp 1978)."""
        N, n, r = XT.shape[1], self.n_states, self._computed
        out = np.empty(N)
        for lo in range(0, N, PERIOD_CHUNK):
            sl = slice(lo, lo + PERIOD_CHUNK)
            Mr = self.transfer(XT[:, sl], dur[:, sl], delay[:, sl])
            m = Mr.shape[2]
            D = np.empty((n + 1, n, m))
            D[0] = 0.0
            buf = np.empty_like(Mr)
            for k in range(1, n + 1):
                # the max runs over whole (computed, N) planes
                np.add(Mr, D[k - 1].take(self._read, axis=0)[:, None, :], out=buf)
                buf.max(axis=0, out=D[k, :r])
                D[k, r:] = D[k - 1, self._shifted]
            with np.errstate(invalid="ignore"):
                ratios = (D[n] - D[:n]) / (n - np.arange(n))[:, None, None]
            ratios = np.where(np.isneginf(D[:n]), np.inf, ratios)
            out[sl] = np.maximum(ratios.min(axis=0).max(axis=0), 0.0)
        return out

    def value(self, what: str, XT: np.ndarray | None, inputs=None) -> np.ndarray:
        """``"makespan"`` or ``"period"`` of the mappings ``XT (A, N)``, or of the
        :meth:`inputs` given (``inf`` where a channel has no route or a firing cannot
        run)."""
        XT, dur, delay, bad = self.inputs(XT) if inputs is None else inputs
        out = getattr(self, what)(XT, dur, delay)
        out[bad] = np.inf
        return out


_cache: dict[tuple, tuple[weakref.ref, TimingTables]] = {}


def timing_tables(problem: Problem, metric: str = TIMED_METRIC, aggregate: str = "schedule"
                  ) -> TimingTables:
    """The :class:`TimingTables` of ``problem``, compiled once per problem."""
    if metric != TIMED_METRIC:
        return TimingTables(problem, metric, aggregate)         # raises
    key = (id(problem),)
    hit = _cache.get(key)
    if hit is not None and hit[0]() is problem:
        return hit[1]
    tables = TimingTables(problem, metric, aggregate)
    _cache[key] = (weakref.ref(problem, lambda _r, k=key, c=_cache: c.pop(k, None)), tables)
    return tables


def static_order_graph(problem: Problem, mapping: Mapping, decimal: bool = False
                       ) -> tuple[list[str], list[tuple[str, str, float, int]]]:
    """The firings and the edges ``(u, v, weight, height)`` of the static-order graph of
    ``mapping``: data edges (weight: the producer firing's time plus the channel's delay,
    height: the iteration delay), order edges between consecutive firings on one PE
    (height 0) and, per PE, the wrap edge from its last firing to its first (height 1).
    Its maximum cycle ratio is the period (:meth:`TimingTables.period`).  With
    ``decimal``, each time is the decimal it prints as
    (:func:`moc.exact_times.exact_time`) and a data edge's weight their exact sum, a
    :class:`~fractions.Fraction`."""
    tables = timing_tables(problem)
    XT, dur, delay, _ = tables.inputs_for(problem, mapping)
    names, act = tables.firings, tables.firing_actor
    read = (lambda x: exact_time(float(x))) if decimal else float
    # each actor's time, channel's delay and their sum read once: the firings share them
    time_of = {a: read(dur[a, 0]) for a in dict.fromkeys(act)}
    weight = [time_of[a] for a in act]
    sums: dict = {}
    edges = []
    for u, v, c, h in tables.edges:
        key = act[u], c
        if key not in sums:
            sums[key] = time_of[act[u]] + read(delay[c, 0])
        edges.append((names[u], names[v], sums[key], h))
    for seq in _pe_orders(tables, XT).values():
        for u, v in zip(seq, seq[1:]):
            edges.append((names[u], names[v], weight[u], 0))
        if seq:
            edges.append((names[seq[-1]], names[seq[0]], weight[seq[-1]], 1))
    return list(names), edges


def _pe_orders(tables: TimingTables, XT) -> dict[int, list[int]]:
    orders: dict[int, list[int]] = {p: [] for p in range(tables.n_pes)}
    for f in tables.order:
        orders[int(XT[tables.firing_actor[f], 0])].append(f)
    return orders


def mapped_analysis(problem: Problem, mapping: Mapping) -> MappedTiming:
    """The timing of ``mapping``: the makespan (= latency) of its first list-scheduled
    iteration with that schedule, the period of its self-timed static-order execution
    with a critical cycle (the actors on it, in order), and the largest number of tokens
    each channel holds during the first iteration (consumed at a firing's start,
    produced at its end plus the channel's delay; initial tokens from the start).  The
    critical cycle comes from :func:`moc.cycle_ratio.max_cycle_ratio` on
    :func:`static_order_graph` with its times as decimals (Howard's policy iteration,
    exact, a check on Karp's value): of equally critical cycles, the one of
    :mod:`moc.critical_cycle`'s rule, firings numbered in the order of their actors'
    declaration, then by firing."""
    from moc.cycle_ratio import max_cycle_ratio
    tables = timing_tables(problem)
    inputs = tables.inputs_for(problem, mapping)
    XT, dur, delay, bad = inputs
    makespan = float(tables.value("makespan", None, inputs)[0])
    period = float(tables.value("period", None, inputs)[0])
    start, end = (x[:, 0, 0] for x in tables._pass(XT, dur, delay,
                                                   np.zeros((tables.n_pes, 1, 1)), False))
    app, arch = problem.app, problem.arch
    names, act = tables.firings, tables.firing_actor
    schedule: dict[str, list[Slot]] = {e: [] for e in list(arch.pes) + list(arch.cns)}
    for p, seq in _pe_orders(tables, XT).items():
        schedule[tables.pes[p]] = [Slot(names[f], tables.actors[act[f]], float(start[f]),
                                        float(end[f])) for f in seq]
    buffers: dict[str, int] = {}
    for c, name in enumerate(tables.channels):
        ch = app.channels[name]
        lag = float(delay[c, 0])
        # at one instant tokens arrive before they are read: the buffer holds them then
        # firing k of a cyclo-static actor moves the tokens of its phase k
        events = sorted([(float(end[f]) + lag, 0, phase_value(ch.prod, k))
                         for k, f in enumerate(np.flatnonzero(act == tables.src[c]))]
                        + [(float(start[f]), 1, -phase_value(ch.cons, k))
                           for k, f in enumerate(np.flatnonzero(act == tables.dst[c]))])
        level = most = ch.delay
        for _, _, change in events:
            level += change
            most = max(most, level)
        buffers[name] = int(most)
        for k in channel_route(app, arch, mapping, name):
            schedule[k] += [Slot(transfer_name(name, names[f]), ch.src, float(end[f]),
                                 float(end[f]) + lag)
                            for f in np.flatnonzero(act == tables.src[c])]
    for k in arch.cns:
        schedule[k].sort(key=lambda s: (s.start, s.end, s.name))
    critical: tuple[str, ...] = ()
    if not bad[0] and period > 0:
        nodes, edges = static_order_graph(problem, mapping, decimal=True)
        critical = _actors_of(max_cycle_ratio(nodes, edges, least=True).cycle)
    return MappedTiming(makespan, period, throughput_of(period), critical, makespan,
                        buffers, {e: tuple(s) for e, s in schedule.items()})


def _actors_of(firings: Sequence[str]) -> tuple[str, ...]:
    """The actors of a cycle of firings, in cycle order, each once."""
    seen: dict[str, None] = {}
    for f in firings:
        seen.setdefault(firing_actor(f), None)
    return tuple(seen)
