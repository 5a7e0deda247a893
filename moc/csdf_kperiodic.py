"""K-periodic scheduling of cyclo-static graphs (Bodin, Munier-Kordon & de Dinechin,
"K-periodic schedules for evaluating the maximum throughput of a synchronous dataflow
graph", SAMOS 2012, and "Optimal and fast throughput evaluation of CSDF", DAC 2016):
throughput and liveness without expanding the firings of one iteration.

An actor ``t`` of ``n_t`` phases that fires ``q_t`` times per iteration gets a pattern
of ``N_t = K_t·n_t`` firings (``K_t`` cycles of its phases): firing ``j + m·N_t`` starts
at ``s(t, j) + m·Ω·N_t/q_t``.  With ``P`` and ``C`` the tokens that the first firings of
the producer ``a`` write and of the consumer ``b`` read on a channel of ``M0`` initial
tokens, firing ``ν_b`` waits for firing ``ν_a`` iff ``M0 + P(ν_a) < C(ν_b + 1) ≤ M0 +
P(ν_a + 1)`` (it writes the last token ``ν_b`` reads).  For ``ν_a = j + m·N_a`` and
``ν_b = j' + m'·N_b`` that is ``C(j'+1) − M0 − P(j+1) ≤ x < C(j'+1) − M0 − P(j)`` for
``x = m·P(N_a) − m'·C(N_b)``, a multiple of ``g = gcd(P(N_a), C(N_b))``; the tightest,
``x_max``, gives the edge ``(a, j) → (b, j')`` of height ``−x_max/R`` iterations, ``R``
the tokens of one iteration.  Each firing is a start and an end node: the end waits
``d(t, j)`` after the start, and an actor's firings start in order and end in order
(``order="ends"``, the rule of :mod:`moc.csdf` and SDF3), or only start in order
(``order="starts"``, Kiter's).  The maximum cycle ratio is the least period ``Ω`` of
such a schedule; a cycle of height zero or less admits none.

``K`` starts at 1 and grows on the critical circuit only (to ``lcm(K_t, r_t / gcd of
r on the circuit)``, ``r_t = q_t/n_t``, then to ``r_t``).  The answer is exact once
every ``K_t`` on the critical circuit is a multiple of ``r_t / gcd of r on it`` (the
paper's rule, :func:`moc.kperiodic.covers`: the circuit alone is then whole iterations
of its own, exact, and an actor's own order depends on its ``K`` alone), or once the
critical circuit is a chain of real precedences that repeats (:func:`_follow`, as
:func:`moc.kperiodic` checks it for SDF): its ratio is then a cycle mean of the
execution, and no K-periodic schedule beats the self-timed one.  Likewise a circuit of
height zero or less that closes on the firing it started from (or an earlier one) is a
deadlock.  Three shortcuts: a component whose actors each fire one firing at a time
(:func:`one_at_a_time_each`) is solved under ``starts``, the same execution on half the
nodes; the whole iteration (``K_t = r_t``, the graph of the firings
of one iteration, exact by construction) is taken at once where it is small or after
:data:`moc.kperiodic.STEPS_BEFORE_WHOLE` steps; and a lone actor with self-loops is solved once per
distinct phase times and loops (its period per cycle of phases does not depend on
``q``).  Where the next ``K`` would pass ``moc.limits.MAX_FIRINGS`` nodes and edges,
the least period found is returned, marked not optimal: that of the best K-periodic
schedule, or where it is less, the time of one iteration's firings run one at a time
(:func:`moc.kperiodic.one_at_a_time`), which bounds the self-timed period of any live graph, and
with it a lower bound: the busiest actor's time (:func:`moc.self_loops.busiest`).
"""
from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Mapping
from fractions import Fraction

from moc import exact_times, limits
from moc.deadlock import SymbolicExecution, raise_deadlock, raise_stalled_circuit
from moc.errors import UnboundedCycleError
from moc.howard_exact import max_cycle_ratio_lists, on_lists, take
from moc.graph import SDFGraph
from moc.kperiodic import KPeriodicThroughput, bounded, by_component, covers, edges_on, \
    grow, named, solve_congruence, substitute, tightest, too_large, whole_at_once, x_max
from moc.phases import Cumulative, cycle_total, phase_counts, phase_value
from moc.self_loops import concurrency
from moc.warm_start import WARM_SIZE, critical_of, preferred

#: checks of the symbolic execution (:class:`_Symbolic`) per node and edge of a
#: constraint graph that admits no schedule, and the checks taken at least: a check
#: (an actor or input channel looked at in a round) costs about a microsecond,
#: the search for a circuit without tokens 0.1-2 µs an edge (Bellman-Ford's rounds over
#: the graphs of SDF3's generator's g0012-dead, when it was that), so each proof gets
#: about as much time as the other
CHECKS_PER_EDGE = 1
LEAST_CHECKS = 20_000
#: checks and firing runs of the symbolic execution in all, whatever the steps gave it
#: before, within which it names by its circuit of waits a deadlock that the K-periodic
#: steps proved first (:meth:`_Symbolic.name`): the same on every path, so whether a
#: deadlock is named by that rule depends on the graph alone.  Kiter's ``H264_sized``
#: with a token less stalls after about 50,000 checks and 900 runs, ``JPEG2000_sized``'s
#: after up to 3.7 million and 22,500 (0.18 s); a ring of two actors whose rates are
#: near 10^5 after 125,000 and 62,500 (0.14 s)
NAMING_CHECKS = 4_000_000
NAMING_RUNS = 100_000

#: the orders of an actor's own firings
ORDERS = {"ends": "an actor's firings start in order and end in order, as SDF3's",
          "starts": "an actor's firings start in order and may end out of order, as "
                    "Kiter's"}


def check_order(order: str) -> None:
    """Raise ValueError unless ``order`` names one of :data:`ORDERS`."""
    if order not in ORDERS:
        raise ValueError(f"unknown order of an actor's firings {order!r}: "
                         f"{', '.join(ORDERS)}")


def phased_kperiodic_throughput(graph: SDFGraph, durations: Mapping[str, object],
                                q: Mapping[str, int], order: str = "ends"
                                ) -> KPeriodicThroughput:
    """The period of the self-timed execution of the bound, consistent cyclo-static
    ``graph`` (see the module docstring), component by component.  Raises
    :class:`DeadlockError` naming the actors and channels of a circuit of precedences
    without tokens, and :class:`LimitError` past ``moc.limits.MAX_FIRINGS`` nodes and
    edges of a constraint graph."""
    check_order(order)
    n = phase_counts(graph)
    alone: dict = {}
    symbolic = _Symbolic(graph, q)

    def period(actors, channels):
        # one order's graph stands for the other's where both give the same execution
        own = "starts" if order == "ends" and one_at_a_time_each(actors, channels, n) \
            else order
        if len(actors) > 1:
            return _component_period(graph, actors, channels, durations, q, n, own,
                                     symbolic=symbolic)
        # an actor with self-loops: its period per cycle of phases depends on its times
        # and loops only, and graphs repeat them (Kiter's autogen4: 2,364 such actors)
        (a,) = actors
        key = (tuple(phase_value(durations[a], k) for k in range(n[a])), own,
               tuple((ch.prod, ch.cons, ch.delay) for ch in channels))
        if key not in alone:
            value, cycle, K, through, *rest = _component_period(
                graph, actors, channels, durations, {a: n[a]}, n, own, symbolic=symbolic)
            alone[key] = (value, K[a], [i for i, ch in enumerate(channels)
                                        if ch.name in through], rest)
        value, k, through, rest = alone[key]
        # its period and any floor of it, per cycle of phases there
        return (value * (q[a] // n[a]), (a,) if value else (), {a: k},
                frozenset(channels[i].name for i in through),
                *(x * (q[a] // n[a]) if i else x for i, x in enumerate(rest)))
    return by_component(graph, period)


def one_at_a_time_each(actors, channels, n) -> bool:
    """Whether every one of ``actors`` has a self-loop among ``channels`` that lets one
    firing run at a time: ``r`` tokens written and read in every phase and ``r ≤ M0 <
    2r`` on it, so a firing starts only once the one before has ended.  Its firings
    then end in order by themselves: the orders ``ends`` and ``starts`` give one
    execution, and the graph of ``starts`` has half the nodes (Kiter's autogen1 and
    autogen5, every actor so looped: 1.9 s -> 1.1 s and 1.6 s -> 0.9 s; JPEG2000_sized's
    graph of ``starts`` made Howard's iteration creep, 377 steps against 23, until
    :mod:`moc.policy_spread`)."""
    return {ch.src for ch in channels if concurrency(ch, n[ch.src]) == 1}.issuperset(actors)


def check_phased_live(graph: SDFGraph, q: Mapping[str, int]) -> None:
    """Raise :class:`DeadlockError` if one iteration of the bound cyclo-static ``graph``
    cannot complete: each component's ``K`` grows on circuits without tokens until a
    K-periodic schedule exists (the graph is then live) or one is a real deadlock,
    the symbolic execution going on beside it (:class:`_Symbolic`)."""
    n = phase_counts(graph)
    unit = dict.fromkeys(graph.actors, 1)
    symbolic = _Symbolic(graph, q)
    by_component(graph, lambda actors, channels: _component_period(
        graph, actors, channels, unit, q, n, "starts", feasible=True, symbolic=symbolic))


class _Symbolic:
    """The symbolic execution of one iteration (:class:`moc.deadlock.SymbolicExecution`)
    beside the K-periodic steps: a K-periodic schedule proves a graph live in time that
    follows its periodicity, but a deadlock only once ``K`` has grown until a circuit
    without tokens is a chain of real precedences (on SDF3's generator, sixteen steps
    of a million edges each); the execution proves it in time that follows the firings
    before it stalls.  At each ``K`` that admits no schedule it goes on for work in
    proportion to that constraint graph (:data:`CHECKS_PER_EDGE`), so neither proof
    costs much more than the other."""

    def __init__(self, graph, q):
        self.graph, self.q, self.execution = graph, dict(q), None

    def live(self, size: int) -> bool:
        """Whether the execution has proven the graph live, after going on for the
        work a constraint graph of ``size`` nodes and edges is worth; raises
        :class:`DeadlockError` at a circuit of waits where it stalls."""
        # as many runs as checks: a round looks at an actor for each run it takes
        checks = max(LEAST_CHECKS, size * CHECKS_PER_EDGE)
        fired = self._advance(checks, checks)
        if fired is None:
            return False
        if any(fired[a] < self.q[a] for a in self.graph.actors):
            raise_stalled_circuit(self.graph, fired, self.q)
        return True

    def name(self) -> None:
        """Where the K-periodic steps have proven a deadlock: the execution goes on
        until it has taken :data:`NAMING_RUNS` runs or :data:`NAMING_CHECKS` checks in
        all, and where it has stalled within both, :class:`DeadlockError` names its
        circuit of waits (the final state of a maximal execution is the same whatever
        the order of firings, so that circuit depends on the graph alone, not on the
        timing or ``K`` the steps took; a stall found only past those totals, where the
        steps gave more before, is not named, so that it is the same on every path)."""
        runs, checks = (0, 0) if self.execution is None else self.execution.given
        fired = self._advance(max(0, NAMING_RUNS - runs), max(0, NAMING_CHECKS - checks))
        runs, checks = self.execution.spent
        if fired is not None and runs <= NAMING_RUNS and checks <= NAMING_CHECKS:
            raise_stalled_circuit(self.graph, fired, self.q)

    def _advance(self, runs, checks):
        if self.execution is None:
            self.execution = SymbolicExecution(self.graph, self.q)
        return self.execution.advance(runs=runs, checks=checks)


class _Constraints:
    """The constraint graph of one component for one ``K``: node ``i`` is firing
    ``j[i]`` of actor ``actors[actor[i]]``'s pattern, its start or its end; edge ``e``
    goes ``u[e] → v[e]`` with weight ``w[e]/w_unit`` and height ``h[e]/h_unit``;
    :meth:`origins` tells its channel and ``x``.  Python lists where the graph is small
    (:func:`moc.howard_exact.on_lists` of the pairs of firings tried, every producing
    against every consuming position of a channel), else numpy arrays; the same nodes
    and edges in the same order either way."""

    def __init__(self, actors, channels, durations, q, n, K, order, pairs=None):
        self.actors, self.channels = list(actors), list(channels)
        self.size = size = {a: K[a] * n[a] for a in actors}
        kinds = 2 if order == "ends" else 1
        cache = {} if pairs is None else pairs
        if "units" not in cache:
            cache["units"] = _units(actors, channels, durations, q, n)
        self.w_unit, self.h_unit, ticks, made = cache["units"]
        self.small = on_lists(kinds * sum(size.values()) + sum(
            size[ch.src] * size[ch.dst] for ch in channels))
        base = [0]
        for a in actors[:-1]:
            base.append(base[-1] + kinds * size[a])
        # a channel's edges (positions in its ends' patterns) depend on its rates,
        # tokens and ends' K only: kept across steps of K and shared by channels alike
        # (Kiter's H264_sized: 216 kinds of 6,922 channels), placed by offsets
        found = []
        for c, ch in enumerate(channels):
            key = (ch.prod, ch.cons, ch.delay, size[ch.src], size[ch.dst], made[c],
                   tuple(ticks[ch.src]) if kinds == 1 else None, self.small)
            if key not in cache:
                cache[key] = _channel_edges(ch, size[ch.src], size[ch.dst], ticks[ch.src],
                                            made[c], self.h_unit, kinds, self.small)
            found.append(cache[key])
        self.totals = [f[0] for f in found]
        where = {a: i for i, a in enumerate(actors)}
        tails = [base[where[ch.src]] + (size[ch.src] if kinds == 2 else 0)
                 for ch in channels]
        heads = [base[where[ch.dst]] for ch in channels]
        times = {a: ticks[a] * K[a] for a in actors}
        wraps = [size[a] * self.h_unit // q[a] for a in actors]
        if self.small:
            self._lists(actors, size, base, kinds, times, wraps, found, tails, heads)
        else:
            self._arrays(actors, size, base, kinds, times, wraps, found, tails, heads)
        # of a channel's blocks only its x is read again (:meth:`origins`): the rest
        # (four arrays of the edges' size in all) is not kept beside the graph's own
        self._x = [f[5] for f in found]
        self._first = [(3 if kinds == 2 else 1) * sum(size.values())]
        for f in found[:-1]:
            self._first.append(self._first[-1] + len(f[1]))

    def _lists(self, actors, size, base, kinds, times, wraps, found, tails, heads):
        """The nodes and edges as Python lists: every actor's own order (its starts in
        order, the last to the first of its next pattern, and with ``kinds`` 2 its
        durations and its ends in order), then each channel's edges."""
        self.actor = [i for i, a in enumerate(actors) for _ in range(kinds * size[a])]
        self.j = [j for a in actors for _ in range(kinds) for j in range(size[a])]
        u, v, w, h = [], [], [], []
        for a, start, wrap in zip(actors, base, wraps):
            N = size[a]
            nxt = [start + (j + 1) % N for j in range(N)]
            lifts = [0] * (N - 1) + [wrap]
            u += range(start, start + N)
            v += nxt
            w += [0] * N
            h += lifts
            if kinds == 2:
                u += range(start, start + N)
                v += range(start + N, start + 2 * N)
                w += times[a]
                h += [0] * N
                u += range(start + N, start + 2 * N)
                v += [k + N for k in nxt]
                w += [0] * N
                h += lifts
        for f, tail, head in zip(found, tails, heads):
            u += [tail + k for k in f[1]]
            v += [head + k for k in f[2]]
            w += f[3]
            h += f[4]
        self.u, self.v, self.w, self.h = u, v, w, h

    def _arrays(self, actors, size, base, kinds, times, wraps, found, tails, heads):
        """:meth:`_lists` as numpy arrays, each made once at its full size: on a graph
        of millions of edges, fresh memory costs more than the arithmetic."""
        import numpy as np
        from moc.cycle_ratio import integer_array
        counts = np.array([size[a] for a in actors], dtype=np.int64)
        base = np.array(base, dtype=np.int64)
        self.actor = np.repeat(np.arange(len(actors)), counts * kinds)
        local = np.arange(len(self.actor)) - base[self.actor]
        self.j = local % counts[self.actor]
        wide = _kind(max(abs(t) for ts in times.values() for t in ts))
        own = self._own_order(actors, size, base, kinds,
                              {a: np.array(times[a], dtype=wide) for a in actors}, wraps)
        lengths = [len(f[1]) for f in found]
        self.u = np.concatenate([own[0]] + [f[1] for f in found])
        self.v = np.concatenate([own[1]] + [f[2] for f in found])
        self.u[len(own[0]):] += np.repeat(np.array(tails, dtype=np.int64), lengths)
        self.v[len(own[1]):] += np.repeat(np.array(heads, dtype=np.int64), lengths)
        self.w = integer_array(np.concatenate([own[2]] + [f[3] for f in found]))
        self.h = integer_array(np.concatenate([own[3]] + [f[4] for f in found]))

    def _own_order(self, actors, size, base, kinds, times, wraps):
        """The edges of every actor's own order (:meth:`_lists`) as arrays ``(u, v, w,
        h)``."""
        import numpy as np
        N = np.array([size[a] for a in actors], dtype=np.int64)
        total = int(N.sum())
        j = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(N) - N, N)
        each = np.repeat(N, N)
        start = np.repeat(base, N) + j
        nxt = np.repeat(base, N) + (j + 1) % each
        kind = _kind(max(wraps))
        h = np.where(j + 1 < each, 0, np.repeat(np.array(wraps, dtype=kind), N)).astype(kind)
        zero = np.zeros(total, dtype=np.int64)
        if kinds == 1:
            u, v, w, h = start, nxt, zero, h
        else:
            # per actor: its starts' order, its durations, its ends' order
            at = np.repeat(3 * (np.cumsum(N) - N), N) + j
            u, v = np.empty(3 * total, dtype=np.int64), np.empty(3 * total, dtype=np.int64)
            w = np.zeros(3 * total, dtype=np.concatenate([times[a] for a in actors]).dtype)
            hs = np.zeros(3 * total, dtype=h.dtype)
            ends = np.repeat(N, N)
            u[at], v[at], hs[at] = start, nxt, h
            u[at + each], v[at + each] = start, start + ends
            w[at + each] = np.concatenate([times[a] for a in actors])
            u[at + 2 * each], v[at + 2 * each], hs[at + 2 * each] = start + ends, nxt + ends, h
            h = hs
        return u, v, w, h

    def names(self, nodes):
        """The actor and firing ``(name, j)`` of each of ``nodes`` (node numbers)."""
        return list(zip([self.actors[a] for a in take(self.actor, nodes)],
                        take(self.j, nodes)))

    def origins(self, edges):
        """Per edge of ``edges``, its channel number and ``x`` (a Python integer), or
        None for an actor's own order."""
        first, found = self._first, []
        for e in edges:
            c = bisect_right(first, e) - 1
            found.append(None if c < 0 else (c, int(self._x[c][e - first[c]])))
        return found

    def channel_of(self, edges):
        """Per edge of ``edges`` (an array) its channel number, -1 for an actor's own
        order."""
        import numpy as np
        return np.searchsorted(np.array(self._first), edges, side="right") - 1

    def through(self, edges, origins=None):
        """The names of the channels of ``edges`` (actors' own orders left out), in
        order, each once (``origins``: :meth:`origins` of ``edges``, where known)."""
        origins = self.origins(edges) if origins is None else origins
        return list(dict.fromkeys(self.channels[o[0]].name for o in origins
                                  if o is not None))

    def ratio(self, **warm):
        """``(ratio, cycle)`` by :func:`max_cycle_ratio_lists` or
        :func:`moc.cycle_ratio.max_cycle_ratio_arrays` (``warm``: its ``start`` and
        ``critical``)."""
        if self.small:
            solve = max_cycle_ratio_lists
        else:
            from moc.cycle_ratio import max_cycle_ratio_arrays as solve
        ratio, cycle = solve(len(self.actor), self.u, self.v, self.w, self.h, least=True,
                             **warm)
        if "critical" in warm:
            # its float policy, where a warm start follows it
            self.critical = warm["critical"][0] if warm["critical"] else None
        self.solved = ratio                       # in the units of w and h
        return (None if ratio is None else ratio * Fraction(self.h_unit, self.w_unit)), cycle

    def steps(self, cycle, ratio):
        """The edge of each step of ``cycle`` (node numbers): of parallel ones, the
        tightest at ``ratio`` (None: the lowest), of equal ones the first."""
        cycle = list(cycle)
        after = list(zip(cycle, cycle[1:] + cycle[:1]))
        edges = edges_on(len(self.actor), self.u, self.v, cycle)
        w, h = take(self.w, edges), take(self.h, edges)
        if ratio is None:
            slack = [-x for x in h]
        else:
            # w_unit·D·slack, with N/D the ratio in the units of w and h
            unit = ratio * Fraction(self.w_unit, self.h_unit)
            slack = [a * unit.denominator - b * unit.numerator for a, b in zip(w, h)]
        chosen = tightest(edges, self.u, self.v, slack)
        return [chosen[step] for step in after]


def _units(actors, channels, durations, q, n):
    """What a component's constraint graphs share whatever ``K``: the units of weights
    and heights, each actor's phase times in weight units and each channel's tokens of
    one iteration."""
    w_unit, phase_ticks = _phase_ticks(actors, durations, n)
    # heights x/R = m·K_a/r_a − m'·K_b/r_b (r: cycles of phases per iteration) are
    # whole in units of 1/lcm(r), far coarser than 1/lcm(R) with large rates
    h_unit = math.lcm(*(q[a] // n[a] for a in actors))
    made = [Cumulative(ch.prod, n[ch.src])(q[ch.src]) for ch in channels]
    return w_unit, h_unit, phase_ticks, made


def _phase_ticks(actors, durations, n):
    """``(unit, ticks)``: each actor's phase times as whole ticks of ``1/unit``
    (:func:`moc.exact_times.ticks`)."""
    return exact_times.ticks(
        {a: [phase_value(durations[a], k) for k in range(n[a])] for a in actors})


def _channel_edges(ch, size_a, size_b, ticks, made, h_unit, kinds, small=False):
    """The edges of channel ``ch`` for patterns of ``size_a`` and ``size_b`` firings at
    its ends: ``(totals, ja, jb, w, h, x)``, the tokens of one pattern at each end, the
    pattern positions of producer and consumer, weights (the producer's phase time
    where starts alone stand for firings, else 0), heights in ``h_unit`` and ``x``
    (Python lists where ``small``, else numpy arrays)."""
    P, C = Cumulative(ch.prod, size_a), Cumulative(ch.cons, size_b)
    g = math.gcd(P.total, C.total)
    if small:
        rows = list(_pairs(ch, P, C, g))
        ja, xs = [r[1] for r in rows], [r[2] for r in rows]
        w = [0] * len(ja) if kinds == 2 else [ticks[a % len(ticks)] for a in ja]
        return ((P.total, C.total), ja, [r[0] for r in rows], w,
                [_height(x, h_unit, made) for x in xs], xs)
    import numpy as np
    blocks = []
    for jb, ja, xs in _channel_pairs(ch, P, C, g):
        if xs.dtype != object and _kind(made + h_unit * (1 + int(
                np.abs(xs).max(initial=0)))) is object:
            xs = xs.astype(object)
        w = np.zeros(len(ja), dtype=np.int64) if kinds == 2 else \
            np.array(ticks, dtype=_kind(max(map(abs, ticks))))[ja % len(ticks)]
        blocks.append((ja, jb, w, _height(xs, h_unit, made), xs))
    if not blocks:
        empty = np.zeros(0, dtype=np.int64)
        return (P.total, C.total), empty, empty, empty, empty, empty
    return ((P.total, C.total),
            *(np.concatenate([b[k] for b in blocks]) for k in range(5)))


def _height(x, h_unit, made):
    """The height ``−x/R`` of an edge of ``x`` in units of ``1/h_unit`` iterations
    (``made``: ``R``, the tokens of one iteration)."""
    return -x * h_unit // made


def _pairs(ch, P, C, g):
    """The edges ``(jb, ja, x_max)`` of channel ``ch`` (:func:`_channel_pairs`) on
    Python lists, every writing position tried for each reading one."""
    prefix, read = P.prefix, C.prefix
    writes = [a for a in range(len(prefix) - 1) if prefix[a + 1] > prefix[a]]
    for b in range(len(read) - 1):
        if read[b + 1] > read[b]:
            top = read[b + 1] - ch.delay
            for a in writes:
                x = x_max(top - prefix[a], g)
                if x >= top - prefix[a + 1]:
                    yield b, a, x


def _channel_pairs(ch, P, C, g):
    """Blocks of edges ``(jb, ja, x_max)`` of channel ``ch`` (pattern positions of its
    consumer and producer, cumulative rates ``P`` and ``C``) as numpy arrays: per
    reading position, the windows of the writing positions tile ``[top − P(N_a), top −
    1]``, so either each writing position is tried (``N_a`` of them, as :func:`_pairs`)
    or each multiple of ``g`` there (``P(N_a)/g``), whichever is fewer; the multiple
    tried first for a position is its largest."""
    import numpy as np
    # int64 where no value here (tokens, and x down to −P(N_a)) can overflow
    kind = _kind(P.total + C.total + abs(ch.delay) + g)
    prefix = np.array(P.prefix, dtype=kind)
    read_prefix = np.array(C.prefix, dtype=kind)
    reads = np.flatnonzero(np.diff(read_prefix) > 0)
    tops = read_prefix[reads + 1] - ch.delay
    writes = np.flatnonzero(prefix[1:] > prefix[:-1])
    multiples = P.total // g
    width = min(len(writes), multiples)
    step = max(1, 1_000_000 // max(width, 1))
    for first in range(0, len(reads), step):
        jb, top = reads[first:first + step], tops[first:first + step][:, None]
        if len(writes) <= multiples:
            low, high = prefix[writes], prefix[writes + 1]
            x = x_max(top - low[None, :], g)
            rows, cols = np.nonzero(x >= top - high[None, :])
            yield jb[rows], writes[cols], x[rows, cols]
            continue
        # the multiples of g from the largest below top down, each in one window
        x = x_max(top, g) - g * np.arange(multiples, dtype=kind)[None, :]
        ja = np.searchsorted(prefix, (top - x).ravel(), side="left").reshape(x.shape) - 1
        keys = np.repeat(np.arange(len(jb)), multiples) * len(prefix) + ja.ravel()
        keys, first_of = np.unique(keys.astype(np.int64), return_index=True)
        yield jb[keys // len(prefix)], keys % len(prefix), x.ravel()[first_of]


def _kind(largest):
    """int64 for integers up to ``largest`` in size (with room for a few sums and
    products by small factors), else Python integers in object arrays."""
    import numpy as np
    return np.int64 if abs(largest) < 2 ** 58 else object


def _edge_count(K_a, n_a, K_b, n_b, totals):
    """The pairs :func:`_channel_pairs` tries for ``K`` cycles of ``n`` phases at each
    end (``totals``: the tokens of one cycle of phases at each end)."""
    written, read = totals[0] * K_a, totals[1] * K_b
    return K_b * n_b * min(K_a * n_a, written // math.gcd(written, read))


def _follow(found, cycle, edges, origins=None):
    """How far the chain of precedences ``edges`` around ``cycle`` moves: None unless
    its firings repeat (the chain from firing ``m`` of the first node's pattern reaches
    firing ``m + shift`` of it, and can start again there), else ``shift`` in
    patterns (``origins``: ``found.origins(edges)``, where known)."""
    start = here = (0, 1)                           # m = A + B·s
    origins = found.origins(edges) if origins is None else origins
    for e, known, wraps in zip(edges, origins, take(found.h, edges)):
        if known is None:                           # the actor's own order
            if wraps:                               # into its next pattern
                here = (here[0] + 1, here[1])
            continue
        c, x = known
        PN, CN = found.totals[c]
        # m' = (m·P(N_a) − x)/C(N_b) must be whole
        solved = solve_congruence(PN * here[1], x - PN * here[0], CN)
        if solved is None:
            return None
        start, here = substitute(start, solved), substitute(here, solved)
        here = ((PN * here[0] - x) // CN, PN * here[1] // CN)
    if here[1] != start[1] or (here[0] - start[0]) % start[1]:
        return None
    return (here[0] - start[0]) // start[1]


def _component_period(graph, actors, channels, durations, q, n, order, feasible=False,
                      symbolic=None):
    """Kiter's iteration on one strongly connected component (module docstring);
    ``feasible``: stop at the first ``K`` that admits a schedule, or once ``symbolic``
    (a :class:`_Symbolic`, consulted at each ``K`` that admits none) proves the graph
    live."""
    K = {a: 1 for a in actors}
    cycles = {a: q[a] // n[a] for a in actors}
    totals = {ch.name: (cycle_total(ch.prod, n[ch.src]), cycle_total(ch.cons, n[ch.dst]))
              for ch in channels}
    best = None                 # the least period of a schedule found, and its circuit
    pairs = {}                  # per channel and K at its ends, its pairs of firings
    steps = 0

    def size_at(K):
        return sum(K[a] * n[a] for a in actors) + sum(
            _edge_count(K[ch.src], n[ch.src], K[ch.dst], n[ch.dst], totals[ch.name])
            for ch in channels)
    whole = size_at(cycles)
    before = None               # the constraint graph of the K before
    while True:
        steps += 1
        size = size_at(K)
        if K != cycles and whole_at_once(steps, size, whole):
            if before is None and whole >= WARM_SIZE and not feasible:
                before = _Constraints(actors, channels, durations, q, n, K, order, pairs)
            K, size = dict(cycles), whole
        if size > limits.MAX_FIRINGS and best is not None:
            return bounded(best, actors, channels, durations, q, n)
        if size > limits.MAX_FIRINGS:
            raise too_large(graph, actors, size)
        # the whole iteration's channel edges are not kept (no later K reads them);
        # the units are the component's whatever K
        found = _Constraints(actors, channels, durations, q, n, K, order,
                             pairs if K != cycles else
                             {"units": pairs["units"]} if "units" in pairs else None)
        try:
            ratio, cycle = _warm_ratio(found, None if feasible else before, K, cycles)
        except UnboundedCycleError as exc:
            if symbolic is not None and symbolic.live(size) and feasible:
                return 0, (), K, frozenset()
            cycle = list(exc.cycle)
            edges = found.steps(cycle, None)
            shift = _follow(found, cycle, edges)
            if shift is not None and shift <= 0:
                _deadlock(graph, found, cycle, edges, symbolic)
        else:
            if ratio is None or feasible:
                return 0, (), K, frozenset()
            edges = found.steps(cycle, ratio)
            origins = found.origins(edges)         # a Python pair per edge: made once
            shift = _follow(found, cycle, edges, origins)
            circuit = found.names(cycle)
            result = (ratio, named(circuit, actors), dict(K),
                      frozenset(found.through(edges, origins)))
            if ratio == 0 or (shift is not None and shift > 0) or \
                    covers(K, [a for a, _ in circuit], cycles):
                return result
            if best is None or ratio < best[0]:
                best = result
        before = found
        on_circuit = list(dict.fromkeys(a for a, _ in found.names(cycle)))
        grown = grow(K, on_circuit, cycles)
        if grown is None:
            # the whole iteration of every actor on it: its precedences are real
            if ratio_unbounded(found, cycle):
                _deadlock(graph, found, cycle, found.steps(cycle, None), symbolic)
            raise AssertionError(f"K-periodic iteration stalled on {on_circuit}")
        K.update(grown)


def _warm_ratio(found, before, K, cycles):
    """``found.ratio()``, its float iteration started from the policy of ``before`` (a
    smaller ``K``'s graph of the same component, :func:`moc.warm_start.preferred`)
    where ``found`` is large, and from the heaviest edges where that start gave up.
    The ratio is exact and the cycle :mod:`moc.critical_cycle`'s either way."""
    # a graph short of the whole iteration keeps what a warm start after it reads
    keep = {} if found.small or K == cycles else {"critical": []}
    if before is None or found.small or len(found.actor) + len(found.u) < WARM_SIZE:
        return found.ratio(**keep)
    known = critical_of(before)
    if known is None:
        return found.ratio(**keep)
    critical = []
    found_ratio = found.ratio(start=preferred(before, known, found), critical=critical,
                              near=float(before.solved or 0))
    if critical and critical[0] is None:          # it passed its steps
        return found.ratio(**keep)
    return found_ratio


def ratio_unbounded(found, cycle) -> bool:
    """Whether ``cycle`` has height zero or less along its lowest edges."""
    return sum(found.h[e] for e in found.steps(cycle, None)) <= 0


def _deadlock(graph, found, cycle, edges, symbolic=None):
    """Raise :class:`DeadlockError` at the circuit of waits of ``symbolic`` where it
    stalls within :data:`NAMING_CHECKS` (:meth:`_Symbolic.name`), else at this circuit
    of precedences without tokens: its actors and its channels."""
    if symbolic is not None:
        symbolic.name()
    actors = list(dict.fromkeys(a for a, _ in found.names(cycle)))
    raise_deadlock(graph, actors, None, set(found.through(edges)))
