"""The storage-throughput trade-off of an SDF graph: the Pareto points (throughput, total
buffer storage in tokens) and, for each, every distribution of channel capacities that
attains it (Stuijk, Geilen & Basten, "Exploring trade-offs in buffer requirements and
throughput constraints for synchronous dataflow graphs", DAC 2006; SDF3's
``--algo buffersize``).

A channel of capacity ``C`` holding ``M0`` tokens is the channel plus a back-edge from its
consumer to its producer with ``C − M0`` initial tokens (its free space), ``prod`` and
``cons`` swapped: the producer claims space as a firing starts, the consumer frees it
as one ends.  A distribution's throughput is then that of the bounded graph.

The exploration is the paper's: start from the smallest capacity each channel needs
alone, ``p + c − g + M0 mod g`` (at least ``M0``; ``g = gcd(p, c)``; a self-loop
``p + max(c, M0)`` and never enlarged, as SDF3 does), visit distributions in order of
total size, and grow by one step ``g`` each channel that a distribution depends on.  The
dependencies are, timing a distribution by its bounded state space as SDF3 does, the
channels whose space a firing waited for on a cycle of waits of the periodic phase (or
of the deadlock), the cycles taken as strongly connected components (SDF3's search
misses some); or, timing it by K-periodic scheduling (Bodin et al., DAC 2016: the KDSE
of Kiter), the back-edges of the critical circuit.  At a deadlock, either way, the
channels whose space is waited for on one cycle of waits among the stuck actors.
Both are sound: a distribution that keeps those capacities keeps a critical circuit,
so its period is no smaller; hence every minimal distribution is reached from the lower
bound through such steps, and listing each explored size's best ones in order of size
gives the exact front.  Cyclo-static graphs are timed phase by phase, with capacities
and steps per channel over its phases (:func:`capacity_bounds`); an actor's firings
start and end in order (SDF3's rule), or, timed by K-periodic scheduling only, start
in order and wait each for the firings that write the last token it reads (Kiter's
rule; :data:`moc.csdf_kperiodic.ORDERS`).  A graph with initialisation phases
(:mod:`moc.initial_phases`) is timed by K-periodic scheduling of the periodic graph
after them, its buffers bounding the initialisation too (:func:`_kperiodic`;
capacities: :func:`moc.capacities.capacity_bounds`).  The search stops at the size whose
throughput is the most the graph can reach, or at a time budget; ``proven_size`` says
up to which total size the front given is then known to be exact, and a search for the
front's last point alone (:func:`front_top`), run in turns with it, bounds that point's
size from both sides.
"""
from __future__ import annotations

import math
import time
from collections import deque
from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType

from moc import limits
from moc.capacities import SPACE_OF, bounded_graph, capacity_bounds
from moc.deadlock import check_deadlock, circuit_of_waits, iteration_firings, \
    starving_channels, tarjan
from moc.errors import DeadlockError, LimitError, SDFError
from moc.exact_times import as_float, exact_string, throughput_of
from moc.graph import SDFGraph
from moc.phases import phase_counts, phase_value
from moc.record import record
from moc.repetition import repetition_vector
from moc.csdf_kperiodic import check_order
from moc.initial_phases import after_initial_phases, has_initial_phases, initial_times
from moc.liveness import check_live
from moc.timing import execution_times, has_floats, prepared, self_timed_period

STATE_SPACE, KPERIODIC, AUTO = "state-space", "kperiodic", "auto"
#: what ``method`` says of each way of timing a distribution
METHODS = {
    STATE_SPACE: "storage dependencies (Stuijk et al., DAC 2006): each distribution timed "
                 "by its bounded self-timed state space, growing the channels on cycles "
                 "of waits",
    KPERIODIC: "storage dependencies (Stuijk et al., DAC 2006): each distribution timed "
               "by K-periodic scheduling, growing the channels on its critical circuit "
               "(Bodin et al., DAC 2016; Kiter's KDSE)"}

#: why the state space times one order of an actor's firings only
STATE_SPACE_ORDER = "the bounded state space ends an actor's firings in order: " \
    "firings that only start in order (Kiter's rule) are timed by K-periodic scheduling"

#: why the state space does not time a graph with initialisation phases
STATE_SPACE_INITIAL = "the bounded state space does not model initialisation phases: " \
    "such a graph is timed by K-periodic scheduling (--timing kperiodic or auto)"


@record
class StoragePoint:
    """A Pareto point: ``throughput`` (iterations per time unit), ``size`` (total
    capacity in tokens) and every explored ``distribution`` of that size that attains
    it (per channel, its capacity in tokens)."""

    throughput: Fraction | float
    size: int
    distributions: tuple[Mapping[str, int], ...]

    def to_dict(self) -> dict:
        return {"throughput": as_float(self.throughput),
                "exact": exact_string(self.throughput), "size": self.size,
                "distributions": [dict(d) for d in self.distributions]}


@record
class TradeOff:
    """The front, smallest size first.  ``complete``: the search ended, at
    ``max_throughput`` (the throughput with every buffer unbounded) or where no larger
    buffer can raise the throughput; otherwise ``proven_size`` is the largest total
    size up to which ``points`` is known to be the exact front (every distribution of at
    most that size was timed or cannot do better than one that was).
    ``explored``: distributions of the front whose throughput was computed.  ``order``:
    of a cyclo-static actor's own firings (:data:`moc.csdf_kperiodic.ORDERS`).
    ``top``: where the front stopped short of ``max_throughput``, a distribution found
    to reach it apart from the front (every capacity doubled until it does, then each
    cut back to the least that keeps it), and ``top_least`` (if found) the fewest
    tokens any distribution reaching it has: the front's last point has a size from
    ``max(top_least, proven_size + 1)`` to ``top.size``, exactly ``top.size`` where
    the two meet; else None."""

    points: tuple[StoragePoint, ...]
    max_throughput: Fraction | float
    complete: bool
    proven_size: int
    explored: int
    method: str = METHODS[STATE_SPACE]
    order: str = "ends"
    top: StoragePoint | None = None
    top_least: int | None = None

    @property
    def last_sizes(self) -> tuple[int, int] | None:
        """Where the front stopped short of ``max_throughput`` with ``top`` found: the
        sizes ``(low, high)`` its last point may have, from ``max(top_least,
        proven_size + 1)`` (``proven_size + 1`` where ``top_least`` was not found) to
        ``top.size``, ``low == high`` where that size is exact; else None."""
        if self.top is None:
            return None
        low = self.proven_size + 1 if self.top_least is None else \
            max(self.top_least, self.proven_size + 1)
        return min(low, self.top.size), self.top.size

    def to_dict(self) -> dict:
        return {
            "points": [p.to_dict() for p in self.points],
            "max_throughput": as_float(self.max_throughput),
            "complete": self.complete,
            "proven_size": self.proven_size,
            "explored": self.explored,
            "method": self.method,
            "csdf_order": self.order,
            "top": None if self.top is None else self.top.to_dict(),
            "top_least": self.top_least,
        }


def tradeoff(graph: SDFGraph, exec_attr: str = "exec", budget: float | None = None,
             max_throughput=None, method: str = AUTO,
             max_explored: int | None = None, order: str = "ends") -> TradeOff:
    """The storage-throughput Pareto front of ``graph`` (see the module docstring).

    ``budget``: seconds after which the search stops with the front found so far
    (``complete`` False); None: no limit.  A graph whose throughput grows without
    bound with its buffers (no cycle of its own bounds it) has no last point: give a
    budget.  ``max_throughput``: stop once it is reached (default: the throughput with
    unbounded buffers, self-loops at their fixed capacity).  ``method``: how each
    distribution is timed, ``"state-space"`` (the bounded self-timed execution until its
    state recurs, and its cycles of waits, as SDF3) or ``"kperiodic"`` (the K-periodic
    schedule of the graph with back-edges, and its critical circuit, as Kiter's KDSE);
    both give the same front, at costs that differ by orders of magnitude either way, so
    ``"auto"`` runs both in turn, each for as long as the other has run, and gives the
    first to end (at the budget, the one proven further).  ``max_explored``: stop, as at the
    budget, once that many distributions were timed.  ``order``: of a cyclo-static
    actor's own firings, ``"ends"`` (they start and end in order) or ``"starts"`` (only
    start in order, Kiter's rule: timed by K-periodic scheduling, ``"auto"`` then
    meaning ``"kperiodic"``).  Raises :class:`DeadlockError` where the graph deadlocks
    whatever its buffers."""
    check_order(order)
    if order != "ends" and method == STATE_SPACE:
        raise ValueError(STATE_SPACE_ORDER)
    graph, durations, q, floats = _prepared(graph, exec_attr)
    if durations is None and method == STATE_SPACE:
        raise SDFError(f"'{graph.name}': {STATE_SPACE_INITIAL}", graph.origin)
    if durations is None:
        method = KPERIODIC                  # the state space does not model them
    bounds = capacity_bounds(graph)
    names = list(graph.channels)
    loops = {n: bounds[n][0] for n, ch in graph.channels.items() if ch.src == ch.dst}
    if max_throughput is None:
        max_throughput = _kperiodic(bounded_graph(graph, loops), durations, q, order)[0]
    if max_throughput == math.inf and budget is None and max_explored is None:
        raise SDFError(f"the throughput of '{graph.name}' grows without bound with its "
                       f"buffers (no cycle of its own bounds it): its trade-off has no last "
                       f"point; give a budget", graph.origin)
    evaluators = {}
    if method == STATE_SPACE or (method == AUTO and order == "ends" and
                                 durations is not None):
        execution = _BoundedExecution(graph, durations, q)
        evaluators[STATE_SPACE] = lambda caps: execution.run([caps[n] for n in names])
    if method in (KPERIODIC, AUTO):
        evaluators[KPERIODIC] = lambda caps: _kperiodic(bounded_graph(graph, caps),
                                                        durations, q, order)
    if not evaluators:
        raise ValueError(f"unknown trade-off method {method!r}: {STATE_SPACE}, "
                         f"{KPERIODIC} or {AUTO}")
    deadline = None if budget is None else time.monotonic() + budget
    alone = _alone(graph, durations, q, order, loops)
    searches = {m: _Search(names, bounds, loops, e, max_throughput, alone)
                for m, e in evaluators.items()}
    spent = dict.fromkeys(searches, 0.0)
    # once the front has had TOP_AFTER seconds (or a quarter of the budget), the search
    # for its top takes its turn too
    top = None if deadline is None or max_throughput == math.inf else \
        _Top(names, bounds, loops, lambda caps: _kperiodic(bounded_graph(graph, caps),
                                                           durations, q, order),
             max_throughput, alone)
    while True:
        if top is not None and TOP not in spent and not top.done and \
                sum(spent.values()) > min(TOP_AFTER, budget / 4):
            spent[TOP] = min(spent.values())
        # the search that has had the least time goes on (auto: both, in turn)
        m = min(spent, key=spent.get)
        search = top if m == TOP else searches[m]
        if (deadline is not None and time.monotonic() > deadline) or \
                (max_explored is not None and m != TOP and search.explored >= max_explored):
            m = max(searches, key=lambda k: searches[k].proven)
            return _result(searches[m], max_throughput, names, floats, m, method, order,
                           top)
        start = time.monotonic()
        if search.step():
            if m == TOP:
                del spent[TOP]
                continue
            return _result(search, max_throughput, names, floats, m, method, order)
        spent[m] += time.monotonic() - start


def front_top(graph: SDFGraph, exec_attr: str = "exec", order: str = "ends"
              ) -> tuple[StoragePoint, int] | None:
    """Where the front of :func:`tradeoff` ends, without the front: a distribution that
    reaches the throughput with unbounded buffers (per channel cut back to the least
    capacity that keeps it), and the fewest tokens any distribution reaching it has,
    each channel's least capacity with the others unbounded (see :class:`_Top`; the
    front's last point lies between the two sizes).  None where that throughput is
    unbounded, or a distribution is too large to time.  Raises
    :class:`DeadlockError` where the graph deadlocks whatever its buffers."""
    check_order(order)
    graph, durations, q, _ = _prepared(graph, exec_attr)
    bounds = capacity_bounds(graph)
    loops = {n: bounds[n][0] for n, ch in graph.channels.items() if ch.src == ch.dst}
    most = _kperiodic(bounded_graph(graph, loops), durations, q, order)[0]
    if most == math.inf:
        return None
    top = _Top(list(graph.channels), bounds, loops,
               lambda caps: _kperiodic(bounded_graph(graph, caps), durations, q, order),
               most)
    while not top.step():
        pass
    return None if top.found is None else (top.found, top.least)


def _prepared(graph, exec_attr):
    """``(graph, durations, q, floats)`` as :func:`moc.timing.prepared` gives them,
    the graph checked live; a graph with initialisation phases has None as its
    durations (each distribution is timed after them, :func:`_kperiodic`)."""
    if not has_initial_phases(graph):
        graph, durations, q, floats = prepared(graph, exec_attr, "the buffer trade-off")
        check_deadlock(graph, q)
        return graph, durations, q, floats
    graph = graph.bind()
    check_live(graph)
    floats = has_floats([*execution_times(graph, exec_attr).values(),
                         *initial_times(graph, exec_attr).values()])
    return graph, None, repetition_vector(graph), floats


def _alone(graph, durations, q, order, loops):
    """``alone(name, capacity)``: the throughput with channel ``name`` alone bounded
    (self-loops at ``loops``), by K-periodic scheduling, each once."""
    known = {}

    def alone(name, capacity):
        if (name, capacity) not in known:
            known[name, capacity] = _kperiodic(bounded_graph(
                graph, {**loops, name: capacity}), durations, q, order)[0]
        return known[name, capacity]
    return alone


class _Search:
    """The exploration of distributions in order of total size, one timed per
    :meth:`step`; ``proven``: every distribution smaller than the size at hand was
    timed (or cannot do better than one that was).

    A distribution whose throughput one channel alone bounded at its capacity already
    gives (``alone``) depends on that channel alone: every larger distribution that
    keeps it has that bound, so no more throughput."""

    def __init__(self, names, bounds, loops, evaluate, max_throughput, alone=None):
        self.names, self.bounds, self.loops = names, bounds, loops
        self.evaluate, self.max_throughput = evaluate, max_throughput
        self.alone = alone
        lower = tuple(bounds[n][0] for n in names)
        self.pending: dict[int, dict[tuple, None]] = {sum(lower): {lower: None}}
        self.points: list[StoragePoint] = []
        self.explored, self.best, self.complete = 0, None, False
        self._open()

    def _open(self):
        self.size = min(self.pending)
        self.queue = deque(self.pending.pop(self.size))
        self.found = []
        self.proven = self.size - 1

    def step(self) -> bool:
        """Time one distribution; True once the search is over."""
        dist = self.queue.popleft()
        capacities = dict(zip(self.names, dist))
        value, depends = self.evaluate(capacities)
        if self.alone is not None and 0 < value < self.max_throughput:
            depends = self._narrowed(value, depends, capacities)
        self.explored += 1
        self.found.append((value, capacities))
        for i, name in enumerate(self.names):
            if name in depends and name not in self.loops:
                step = self.bounds[name][1]
                child = dist[:i] + (dist[i] + step,) + dist[i + 1:]
                self.pending.setdefault(self.size + step, {})[child] = None
        if self.queue:
            return False
        # every distribution of this size is timed: is its best a Pareto point?
        top = max(v for v, _ in self.found)
        if self.best is None or top > self.best:
            self.best = top
            self.points.append(StoragePoint(top, self.size, tuple(
                MappingProxyType(c) for v, c in self.found if v == top)))
        self.proven = self.size
        if top >= self.max_throughput or not self.pending:
            self.complete = True
            return True
        self._open()
        return False

    def _narrowed(self, value, depends, capacities):
        for name in sorted(set(depends) - set(self.loops), key=self.names.index):
            try:
                if self.alone(name, capacities[name]) == value:
                    return {name}
            except LimitError:
                break
        return depends


#: the turn of the search for a distribution that reaches the maximal throughput, and
#: the seconds of the front's search after which it joins (graphs whose front ends
#: sooner never pay for it)
TOP, TOP_AFTER = "top", 1.0


class _Top:
    """Where the front ends, one timing per :meth:`step`, by K-periodic scheduling (the
    other capacities may then stay unbounded).  The throughput never falls as a
    capacity grows (the self-timed execution is monotone in its initial tokens,
    max-plus), so: each channel that may grow, alone bounded, doubled until it reaches
    ``max_throughput`` and cut back by bisection to the least capacity that does, which
    every distribution reaching it needs (``least``: their sum, self-loops included);
    then those capacities together, doubled as one until they reach it, and each cut
    back in turn to the least that keeps it (``found``)."""

    def __init__(self, names, bounds, loops, evaluate, max_throughput, alone=None):
        self.found: StoragePoint | None = None
        self.least: int | None = None
        self.done = False
        self._steps = self._search(names, bounds, loops, evaluate, max_throughput, alone)

    def step(self) -> bool:
        try:
            next(self._steps)
        except StopIteration:
            self.done = True
        except LimitError:
            self.done = True                 # too large to time: no top
        return self.done

    def _search(self, names, bounds, loops, evaluate, max_throughput, alone):
        lower = {n: bounds[n][0] for n in names}
        grown = [n for n in names if n not in loops]

        def capacity(n, k):
            return lower[n] + bounds[n][1] * k

        def doubled(n, k):
            return k + max(1, -(-max(capacity(n, k), 1) // bounds[n][1]))

        def reaches(steps):
            if alone is not None and len(steps) == 1:
                ((n, k),) = steps.items()
                return alone(n, capacity(n, k)) >= max_throughput
            value, _ = evaluate({**loops, **{n: capacity(n, k) for n, k in steps.items()}})
            return value >= max_throughput

        def least(steps, n, high):
            low = steps[n]                   # least is in [low, high]: high reaches it
            while low < high:
                mid = (low + high) // 2
                reached = reaches({**steps, n: mid})
                yield
                low, high = (low, mid) if reached else (mid + 1, high)
            steps[n] = high

        steps = {}
        for n in grown:
            below, high = 0, 0
            while not reaches({n: high}):
                yield
                if high > 2 ** 40:
                    return                   # not reached in any size to time
                below, high = high + 1, doubled(n, high)
            yield
            only = {n: below}
            yield from least(only, n, high)
            steps[n] = only[n]
        self.least = sum(capacity(n, k) for n, k in steps.items()) + sum(loops.values())
        floor = dict(steps)
        while not reaches(steps):
            yield
            steps = {n: doubled(n, k) for n, k in steps.items()}
        yield
        for n in grown:
            high, steps[n] = steps[n], floor[n]
            yield from least(steps, n, high)
        capacities = {n: lower[n] + bounds[n][1] * steps.get(n, 0) for n in names}
        self.found = StoragePoint(max_throughput, sum(capacities.values()),
                                  (MappingProxyType(capacities),))


def _result(search, max_throughput, names, floats, used, method, order, top=None):
    points = list(search.points)
    if points and points[0].throughput == 0:
        # as SDF3: what deadlocks at the lower bounds has no throughput with no storage
        points[0] = StoragePoint(Fraction(0), 0,
                                 (MappingProxyType({n: 0 for n in names}),))
    if floats:
        points = [StoragePoint(float(p.throughput), p.size, p.distributions)
                  for p in points]
        max_throughput = float(max_throughput)
    said = METHODS[used] if method == used or order != "ends" else \
        f"{AUTO} (the first of both to end): {METHODS[used]}"
    found = None if top is None or search.complete else top.found
    if found is not None and floats:
        found = StoragePoint(float(found.throughput), found.size, found.distributions)
    least = None if top is None or search.complete else top.least
    return TradeOff(tuple(points), max_throughput, search.complete, search.proven,
                    search.explored, said, order, found, least)


def _kperiodic(bounded: SDFGraph, durations, q, order="ends"):
    """The throughput of the bounded graph and the channels whose capacity bounds it:
    those with a back-edge on the critical circuit (proven a true cycle of the
    self-timed execution by :mod:`moc.kperiodic`), or, where it deadlocks, those whose
    back-edge starves an actor that cannot finish the iteration.  ``durations`` None:
    ``bounded`` has initialisation phases, timed as the periodic graph after them
    (:func:`moc.initial_phases.after_initial_phases`), whose channels keep their names;
    where the initialisation itself cannot complete, those of the starving channels
    that are back-edges (every actor it leaves waiting waits for another: for tokens
    whatever the capacities, or for the space of one of these)."""
    try:
        if durations is None:
            try:
                after = after_initial_phases(bounded)
            except DeadlockError as exc:
                return 0, {bounded.channels[n].attrs[SPACE_OF] for n in exc.channels
                           if SPACE_OF in bounded.channels[n].attrs}
            bounded, durations, q, _ = prepared(after)
        found = self_timed_period(bounded, durations, q, order)
    except DeadlockError:
        return 0, _deadlocked(bounded, q)
    if found.period == 0:       # no cycle bounds it: no capacity does
        return throughput_of(found.period), set()
    return throughput_of(found.period), {bounded.channels[n].attrs[SPACE_OF]
                                        for n in found.critical_channels
                                        if SPACE_OF in bounded.channels[n].attrs}


def _deadlocked(bounded: SDFGraph, q) -> set:
    """The channels whose capacity a deadlock of ``bounded`` depends on: those whose
    space is waited for on a cycle of waits among the actors that cannot finish the
    iteration (:func:`_space_on_circuit`), else every channel whose space a stuck actor
    waits for."""
    fired = iteration_firings(bounded, q)
    waits = {a: [] for a in bounded.actors if fired[a] < q[a]}
    for ch in starving_channels(bounded, fired, q):
        waits[ch.dst].append((ch.src, ch.attrs.get(SPACE_OF)))
    return _space_on_circuit(waits)


def _space_on_circuit(waits) -> set:
    """Of the waits of stuck actors (:func:`moc.deadlock.circuit_of_waits`; labelled by
    the channel whose space is waited for, None for tokens), the channels whose space is
    waited for on the circuit with the fewest such waits, else on any wait.  No actor of
    a circuit of waits fires again whatever the other capacities (the first to would
    find its wait unchanged), so a deadlock depends on those channels alone."""
    circuit = circuit_of_waits(waits, lambda space: space is not None)
    steps = [step for ws in waits.values() for step in ws] if circuit is None else circuit
    return {space for _, space in steps if space is not None}


class _BoundedExecution:
    """The self-timed execution of a graph whose every channel has a capacity (SDF3's
    transition system of buffer sizing): a firing claims its input tokens and its
    output space as it starts, and produces the tokens and frees the space as it ends;
    the firings of an actor start and end in order, phase after phase.  The state is
    recorded each time the actor with the fewest firings per iteration completes an
    iteration; when one recurs, the throughput is the iterations between the two visits
    over the time between them, and the channels that bound it are those whose space
    held a firing back on a cycle of waits (Stuijk et al. 2006, with the cycles taken as
    strongly connected components)."""

    def __init__(self, graph: SDFGraph, durations, q):
        self.graph = graph
        self.actors = list(graph.actors)
        where = {a: i for i, a in enumerate(self.actors)}
        self.channels = list(graph.channels.values())
        self.ins = [[] for _ in self.actors]
        self.outs = [[] for _ in self.actors]
        for c, ch in enumerate(self.channels):
            self.ins[where[ch.dst]].append((c, ch.cons))
            self.outs[where[ch.src]].append((c, ch.prod))
        idle = [a for i, a in enumerate(self.actors) if not self.ins[i] and not self.outs[i]]
        if idle:
            raise SDFError(f"actor '{idle[0]}' of '{graph.name}' has no channel: it fires "
                           f"without limit, whatever the buffers",
                           graph.actors[idle[0]].origin)
        self.src = [where[ch.src] for ch in self.channels]
        self.dst = [where[ch.dst] for ch in self.channels]
        counts = phase_counts(graph)
        self.phases = [counts[a] for a in self.actors]
        self.phased = [counts[a] > 1 for a in self.actors]
        # per actor and phase: its duration, and (channel, tokens) read and written
        self.d = [[phase_value(durations[a], k) for k in range(counts[a])]
                  for a in self.actors]
        self.ins = [[[(c, phase_value(r, k)) for c, r in ins] for k in range(m)]
                    for ins, m in zip(self.ins, self.phases)]
        self.outs = [[[(c, phase_value(p, k)) for c, p in outs] for k in range(m)]
                     for outs, m in zip(self.outs, self.phases)]
        low = min(q.values())
        self.output = next(i for i, a in enumerate(self.actors) if q[a] == low)
        self.per_iteration = low

    def run(self, capacities):
        """``(throughput, names of the channels it depends on)`` with ``capacities`` (a
        capacity per channel, in channel order)."""
        n = len(self.actors)
        tokens = [ch.delay for ch in self.channels]
        space = [cap - t for cap, t in zip(capacities, tokens)]
        ending = [deque() for _ in range(n)]       # (end, phase), in start order
        started = [0] * n
        ins, outs, d, src, dst = self.ins, self.outs, self.d, self.src, self.dst
        phases, phased = self.phases, self.phased
        seen: dict = {}
        segments: list[set] = [set()]
        completed = iterations = 0
        now, still = 0, 0
        limit = limits.MAX_STATES
        while True:
            before_t, before_s = list(tokens), list(space)
            for i in range(n):
                queue = ending[i]
                while queue and queue[0][0] <= now:
                    k = queue.popleft()[1]
                    for c, p in outs[i][k]:
                        tokens[c] += p
                    for c, r in ins[i][k]:
                        space[c] += r
                    completed += i == self.output
            recurred = stored = None
            if completed >= self.per_iteration:
                done, completed = divmod(completed, self.per_iteration)
                iterations += done
                state = (tuple(tokens), tuple(space), completed,
                         tuple(s % m for s, m in zip(started, phases)),
                         tuple(tuple((t - now, k) for t, k in queue) for queue in ending))
                recurred = seen.get(state)
                if recurred is None:
                    # the waits of this instant's starts come from before the state:
                    # they close the segment that ends here, the next one opens after
                    stored = seen[state] = (now, iterations, len(segments))
                if len(seen) > limit:
                    raise LimitError(
                        f"the execution of '{self.graph.name}' with buffer capacities "
                        f"{dict(zip((ch.name for ch in self.channels), capacities))} has "
                        f"at least {limit + 1} states", "states", limit, self.graph.origin)
            waits = segments[-1]
            for i in range(n):
                while True:
                    k = started[i] % phases[i]
                    reads, writes = ins[i][k], outs[i][k]
                    if phased[i]:
                        fire = all(tokens[c] >= r for c, r in reads) and \
                            all(space[c] >= p for c, p in writes)
                    else:
                        fire = min([tokens[c] // r for c, r in reads if r] +
                                   [space[c] // p for c, p in writes if p])
                    if not fire:
                        break
                    fire = int(fire)
                    for c, r in reads:
                        tokens[c] -= fire * r
                        if before_t[c] < r:
                            waits.add((dst[c], src[c]))
                    for c, p in writes:
                        space[c] -= fire * p
                        if before_s[c] < p:
                            waits.add((src[c], dst[c]))
                    end = now + d[i][k]
                    if ending[i] and ending[i][-1][0] > end:
                        end = ending[i][-1][0]             # ends in order
                    ending[i].extend([(end, k)] * fire)
                    started[i] += fire
                    if not phased[i]:
                        break
            if recurred is not None:
                # one period: the starts after the first visit up to these ones
                t0, i0, s0 = recurred
                waits = set().union(*segments[s0:])
                return Fraction(iterations - i0) / (now - t0), self._bound(waits)
            if stored is not None:
                segments.append(set())
            upcoming = [queue[0][0] for queue in ending if queue]
            if not upcoming:
                # a deadlock: every actor waits, and one cycle of waits is enough
                waits = {i: [] for i in range(n)}
                for c, ch in enumerate(self.channels):
                    if tokens[c] < phase_value(ch.cons, started[dst[c]]):
                        waits[dst[c]].append((src[c], None))
                for c, ch in enumerate(self.channels):
                    if space[c] < phase_value(ch.prod, started[src[c]]):
                        waits[src[c]].append((dst[c], ch.name))
                return 0, _space_on_circuit(waits)
            later = min(upcoming)
            still = still + 1 if later == now else 0
            if still > limit:
                raise SDFError(f"the execution of '{self.graph.name}' fires without bound "
                               f"in zero time", self.graph.origin)
            now = later

    def _bound(self, waits) -> set:
        """The channels whose space an actor waited for on a cycle of waits."""
        successors = [[] for _ in self.actors]
        for a, b in waits:
            successors[a].append(b)
        component = {a: k for k, c in enumerate(tarjan(range(len(self.actors)), successors))
                     for a in c}
        return {ch.name for c, ch in enumerate(self.channels)
                if (self.src[c], self.dst[c]) in waits
                and component[self.src[c]] == component[self.dst[c]]}
