"""Deadlock: can one iteration execute from the initial tokens?

An SDF graph is conflict-free (firing an actor never disables another), so every maximal
execution in which actor ``a`` fires at most ``q(a)`` times ends with the same firing
counts; the iteration completes iff those counts are ``q``.  :func:`iteration_firings`
computes them one strongly connected component at a time, in topological order: a
component's inputs from upstream are then final, so they only cap how often each of its
actors may fire.  Inside a component, tokens that ping-pong around a cycle make the
number of firing runs grow with ``q``; the token state then recurs after a bounded
number of rounds, and the rounds between two equal states repeat until an actor runs
out of firings, so they are taken all at once.  Where no state recurs within
``moc.limits.MAX_FIRINGS`` firing runs, the check stops with a :class:`LimitError`.
A cyclo-static actor fires phase by phase (a run is as many firings in a row as the
cumulative rates of its inputs allow, and the state holds its phase too).  Where every
actor's firings are coprime to the others' the state recurs only with the iteration,
so the runs follow the firings; the command line therefore decides a cyclo-static
graph's liveness by its K-periodic schedules (:func:`moc.liveness.check_live`), whose
work follows the periodicity, and takes this execution (:class:`SymbolicExecution`, a
number of runs at a time) beside them for the deadlocks: it stalls after the firings
that precede the deadlock, where the schedules need ``K`` grown until a circuit is a
chain of real precedences, and :func:`raise_stalled_circuit` names a circuit of waits
where it stalls.
"""
from __future__ import annotations

import heapq
import math
import operator
import sys
from collections import deque

from moc import limits
from moc.errors import DeadlockError, LimitError, SDFError
from moc.graph import SDFGraph
from moc.phases import Cumulative, cumulative, cyclo_static, phase_counts, phase_value, \
    tokens_after
from moc.repetition import repetition_vector


def iteration_firings(graph: SDFGraph, q: dict[str, int] | None = None) -> dict[str, int]:
    """How often each actor fires in a maximal execution from the initial tokens in which
    actor ``a`` fires at most ``q(a)`` times (``q`` defaults to the repetition vector),
    phase by phase for a cyclo-static actor.

    Raises :class:`LimitError` past ``moc.limits.MAX_FIRINGS`` simulated firing runs.
    """
    execution = SymbolicExecution(graph, q)
    fired = execution.advance(runs=limits.MAX_FIRINGS)
    if fired is None:
        raise LimitError(f"deadlock check of '{graph.name}' stopped: its cycles need at "
                         f"least {limits.MAX_FIRINGS + 1} firing runs to simulate",
                         "firings", limits.MAX_FIRINGS, graph.origin)
    return fired


class SymbolicExecution:
    """The execution of :func:`iteration_firings`, taken a part at a time, so that a
    caller can weigh it against another proof (the K-periodic schedules of
    :mod:`moc.csdf_kperiodic`, which prove a graph live in time that follows its
    periodicity, where this one proves a deadlock in time that follows the firings
    before it)."""

    def __init__(self, graph: SDFGraph, q: dict[str, int] | None = None):
        self.graph = graph
        self.q = repetition_vector(graph) if q is None else q
        self._left = [0, 0]
        #: the firing runs and checks given so far, in all
        self.given = [0, 0]
        self._steps = _execution(graph, self.q, self._left)
        self.fired = None

    @property
    def spent(self) -> tuple:
        """The firing runs and checks taken so far (once ended: up to its last round
        that fired), the same whatever amounts they were given in."""
        return self.given[0] - self._left[0], self.given[1] - self._left[1]

    def advance(self, runs: float = math.inf, checks: float = math.inf
                ) -> dict[str, int] | None:
        """Go on for at most ``runs`` more firing runs and ``checks`` more checks of
        an actor's input channels (each actor a round looks at costs one check and one
        per input, firing or not: the work): the firing counts once the execution has
        ended, else None."""
        if self.fired is None:
            self._left[0] += runs
            self._left[1] += checks
            self.given[0] += runs
            self.given[1] += checks
            try:
                next(self._steps)
            except StopIteration as done:
                self.fired = done.value
        return self.fired


def _execution(graph, q, left):
    """Generator of :class:`SymbolicExecution`: pauses whenever the firing runs
    ``left[0]`` or the checks ``left[1]`` are spent (the caller adds more) and returns
    the firing counts."""
    n = phase_counts(graph)
    inputs = {a: [] for a in graph.actors}
    for ch in graph.channels.values():
        inputs[ch.dst].append(ch)
    component_of: dict[str, int] = {}
    fired: dict[str, int] = {}
    for number, actors in enumerate(strongly_connected_components(graph)):
        for a in actors:
            component_of[a] = number
        caps = {}
        internal = []
        for a in actors:
            cap = q[a]
            for ch in inputs[a]:
                if component_of[ch.src] == number:
                    internal.append(ch)
                else:                                   # final: upstream is done
                    made = cumulative(ch.prod, n[ch.src], fired[ch.src])
                    cap = min(cap, Cumulative(ch.cons, n[a]).most(0, ch.delay + made))
            caps[a] = cap
        if len(actors) == 1:
            (a,) = actors
            fired[a] = min([caps[a]] + [_SelfLoop(ch, n[a]).most(0, ch.delay, caps[a])
                                        for ch in internal])
        else:
            fired.update((yield from _component_firings(actors, internal, caps, n, left)))
    return fired


class _SelfLoop:
    """A channel from an actor to itself: firing ``ν`` reads ``c(ν)`` as it starts and
    writes ``p(ν)`` as it ends.  A cycle of phases writes as many tokens as it reads
    (consistency), so whether the firings after ``start`` can go on repeats with the
    phases: ``n`` of them decide."""

    def __init__(self, ch, n):
        self.n = n
        self.made, self.read = Cumulative(ch.prod, n), Cumulative(ch.cons, n)
        # firing ν can start iff tokens − made(start) + read(start) + made(ν) −
        # read(ν + 1) ≥ 0, the last two periodic in ν: their least decides at once
        # where the loop has tokens enough for every phase
        self.lowest = min(self.made(k) - self.read(k + 1) for k in range(n))

    def most(self, start, tokens, cap):
        """The most firings, at most ``cap``, after the first ``start`` with ``tokens``
        on the loop before them."""
        base = tokens - self.made(start) + self.read(start)
        if base + self.lowest >= 0:
            return cap
        for j in range(min(cap, self.n)):
            if base + self.made(start + j) - self.read(start + j + 1) < 0:
                return j
        return cap


def strongly_connected_components(graph: SDFGraph) -> list[list[str]]:
    """The strongly connected components of ``graph``, upstream ones first, each in
    declaration order."""
    successors = {a: [] for a in graph.actors}
    for ch in graph.channels.values():
        successors[ch.src].append(ch.dst)
    order = {a: i for i, a in enumerate(graph.actors)}
    return [sorted(c, key=order.__getitem__) for c in tarjan(graph.actors, successors)[::-1]]


def tarjan(nodes, successors) -> list[list]:
    """The strongly connected components of the graph of ``nodes`` whose edges go from
    ``u`` to each of ``successors[u]`` (a dict, or a list for nodes ``0..n-1``), in the
    order Tarjan's algorithm emits them: a component once every component it reaches
    has been, so that the reversed order is topological (iterative, no recursion)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    emitted: list[list] = []
    # a node emitted gets an index above all: no longer on the stack, it lowers none
    done = sys.maxsize
    for root in nodes:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        work = [(root, iter(successors[root]))]
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(successors[child])))
                    break
                if index[child] < low[node]:
                    low[node] = index[child]
            else:
                work.pop()
                if work and low[node] < low[work[-1][0]]:
                    low[work[-1][0]] = low[node]
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        index[member] = done
                        component.append(member)
                        if member == node:
                            break
                    emitted.append(component)
    return emitted


def _component_firings(actors, channels, caps, n, left):
    """Maximal firing counts of one strongly connected component, each actor at most
    ``caps[a]`` times: in rounds, each actor fires as many firings in a row as its
    inputs allow; rounds between two equal states (tokens and phases) are taken at
    once.  A generator: it pauses after a round once the runs ``left[0]`` or the checks
    ``left[1]`` are spent (a round costs a check per actor not finished and one per
    input of each, the work of looking at them all)."""
    index = {a: i for i, a in enumerate(actors)}
    tokens = [ch.delay for ch in channels]
    ins = [[] for _ in actors]
    outs = [[] for _ in actors]
    readers = [set() for _ in actors]
    for c, ch in enumerate(channels):
        a, b = index[ch.src], index[ch.dst]
        if a == b:
            ins[b].append((c, _SelfLoop(ch, n[ch.dst]), True))
        else:
            ins[b].append((c, Cumulative(ch.cons, n[ch.dst]), False))
            readers[a].add(b)
        outs[a].append((c, Cumulative(ch.prod, n[ch.src]), a == b))
    readers = [sorted(r) for r in readers]
    remaining = [caps[a] for a in actors]
    period = [n[a] for a in actors]
    fired = [0] * len(actors)
    weight = [1 + len(i) for i in ins]
    load = sum(w for w, r in zip(weight, remaining) if r)
    # Brent's cycle detection on the state, restarted whenever an actor finishes (the
    # rounds are a function of the state only while the set of finished ones stays)
    def state():
        return tuple(tokens) + tuple(map(operator.mod, fired, period))
    mark, mark_fired, power, length = state(), list(fired), 1, 0
    runs = checks = 0
    # an actor that could not fire again (its run ends where an input lacks tokens)
    # can only once one of its inputs has gained some: a round looks at those alone,
    # in the order of the actors, as a round over all of them would find them
    todo = [i for i, r in enumerate(remaining) if r]
    while True:
        progress = finished = False
        checks += load
        queued, after = set(todo), set()
        while todo:
            i = heapq.heappop(todo)
            f, m = fired[i], remaining[i]
            for c, rates, loop in ins[i]:
                m = rates.most(f, tokens[c], m) if loop else min(m, rates.most(f, tokens[c]))
                if m <= 0:
                    break
            if m <= 0:
                continue
            for c, rates, loop in ins[i]:
                tokens[c] -= (rates.read if loop else rates)(f + m) - \
                    (rates.read if loop else rates)(f)
            for c, made, _ in outs[i]:
                tokens[c] += made(f + m) - made(f)
            fired[i] += m
            remaining[i] -= m
            if not remaining[i]:
                finished = True
                load -= weight[i]
            progress = True
            runs += 1
            for j in readers[i]:
                if not remaining[j]:
                    continue
                if j < i:
                    after.add(j)
                elif j not in queued:
                    heapq.heappush(todo, j)
                    queued.add(j)
        if not progress:
            break
        todo = sorted(after)
        left[0] -= runs
        left[1] -= checks
        runs = checks = 0
        while left[0] < 0 or left[1] < 0:
            yield
        now = state()
        length += 1
        if not finished and now == mark:
            delta = [f - g for f, g in zip(fired, mark_fired)]
            times = min((r // d for r, d in zip(remaining, delta) if d), default=0) - 1
            if times > 0:
                for i, d in enumerate(delta):
                    fired[i] += times * d
                    remaining[i] -= times * d
        if finished or now == mark or length == power:
            if finished or now == mark:
                power = 1
            else:
                power *= 2
            mark, mark_fired, length = now, list(fired), 0
    return dict(zip(actors, fired))


def check_deadlock(graph: SDFGraph, q: dict[str, int] | None = None) -> None:
    """Raise :class:`DeadlockError` if one iteration cannot execute, naming the actors that
    cannot complete it and the channels they starve on."""
    q = repetition_vector(graph) if q is None else q
    waits = _waits(graph, iteration_firings(graph, q), q)
    if waits:
        raise_deadlock(graph, list(waits), None,
                       {ch.name for chs in waits.values() for ch in chs})


def starving_channels(graph: SDFGraph, fired: dict[str, int], q: dict[str, int]) -> list:
    """The channels, in declaration order, whose consumer fired fewer than ``q`` times
    after ``fired`` and whose tokens are below what its next firing reads."""
    n = phase_counts(graph)
    return [ch for ch in graph.channels.values() if fired[ch.dst] < q[ch.dst] and
            phase_value(ch.cons, fired[ch.dst]) >
            tokens_after(ch, fired[ch.src], fired[ch.dst], n[ch.src], n[ch.dst])]


def _waits(graph, fired, q):
    """Per actor that fired fewer than ``q`` times (in declaration order), the channels
    it starves on (:func:`starving_channels`)."""
    waits = {a: [] for a in graph.actors if fired[a] < q[a]}
    for ch in starving_channels(graph, fired, q):
        waits[ch.dst].append(ch)
    return waits


def raise_stalled_circuit(graph: SDFGraph, fired: dict[str, int], q: dict[str, int]):
    """Raise :class:`DeadlockError` at one circuit of waits of an execution that stopped
    at ``fired`` short of ``q``.  An actor that cannot complete ``q`` waits on each
    channel whose tokens are below what its next firing reads, and that channel's
    source cannot complete either (one that could would have left enough: ``P(q_src) =
    C(q_dst)``), so the waits hold circuits: the one :func:`circuit_of_waits` picks,
    each wait weighing one, named in the order tokens flow, with the first channel
    declared of each of its steps that lacks tokens."""
    circuit = circuit_of_waits({a: [(ch.src, ch.name) for ch in chs]
                                for a, chs in _waits(graph, fired, q).items()})
    raise_deadlock(graph, [a for a, _ in circuit], None, {name for _, name in circuit})


def circuit_of_waits(waits: dict, weight=None) -> list[tuple] | None:
    """A circuit of waits: ``waits[b]`` lists, for an actor ``b`` that waits, each
    ``(a, label)`` it waits for (actor ``a``; ``label`` tells the wait, e.g. its
    channel), an actor waiting for one that is not a key of ``waits`` lying on no
    circuit.  The circuit of least total ``weight(label)`` (nonnegative; one per wait
    without it); of those, one through the first actor (in the order of ``waits``)
    that lies on one; of those through it, the first found from it breadth first
    along the waits (Dijkstra's order: by weight so far, then as found; each actor's
    waits in the order listed, the first of parallel waits of least weight taken).
    Returned as ``[(actor, label), ...]`` from that actor in the order tokens flow
    (each next actor waits for the one before, the first for the last), ``label``
    that of the next actor's wait for ``actor``; None without a circuit."""
    weight = weight or (lambda label: 1)
    actors = list(waits)
    on = {b: [(a, label, weight(label)) for a, label in ws if a in waits]
          for b, ws in waits.items()}
    component = {a: k for k, c in enumerate(tarjan(
        actors, {b: [a for a, _, _ in ws] for b, ws in on.items()})) for a in c}
    best = None
    for start in actors:
        found = _circuit_through(start, on, component, None if best is None else best[0])
        if found is not None:
            best = found
    return None if best is None else best[1]


def _circuit_through(start, on, component, below):
    """``(weight, circuit)`` of :func:`circuit_of_waits` through ``start``, if its
    weight is below ``below`` (None: any); the search stays in the strongly connected
    ``component`` of ``start`` (only those actors lie on a circuit through it)."""
    dist, parent, closing = {start: 0}, {}, None
    heap, found = [(0, 0, start)], 1
    while heap:
        d, _, a = heapq.heappop(heap)
        if d > dist[a]:
            continue                                # improved since it was pushed
        if (closing is not None and d >= closing[0]) or (below is not None and d >= below):
            break
        for b, label, w in on[a]:
            if component[b] != component[start]:
                continue
            if b == start:
                if closing is None or d + w < closing[0]:
                    closing = (d + w, a, label)
            elif b not in dist or d + w < dist[b]:
                dist[b], parent[b] = d + w, (a, label)
                heapq.heappush(heap, (d + w, found, b))
                found += 1
    if closing is None or (below is not None and closing[0] >= below):
        return None
    circuit, (here, after, label) = [], (start, *closing[1:])
    while True:
        circuit.append((here, label))
        if after == start:
            return closing[0], circuit
        here, (after, label) = after, parent[after]


def raise_deadlock(graph, blocked, tokens, starving=None, task="one iteration"):
    """The error at the first starving channel declared: its source is blocked too (an
    unblocked one would have left it enough tokens), so it lies on a cycle lacking
    initial tokens, and its ``delay`` is one place to add them.  ``starving``: the names
    of the starving channels where the caller knows them (a cyclo-static graph's phase
    rates), else those whose tokens are below the consumption rate.  ``task``: what the
    actors cannot complete."""
    names = ", ".join(f"'{a}'" for a in blocked)
    blocked_set = set(blocked)
    if starving is None:
        starving = {ch.name for ch in graph.channels.values()
                    if ch.dst in blocked_set and tokens[ch.name] < ch.cons}
    starving = [ch for ch in graph.channels.values() if ch.name in starving]
    where = starving[0].origin if starving and starving[0].origin else \
        graph.actors[blocked[0]].origin
    raise DeadlockError(
        f"deadlock: actors {names} cannot complete {task} "
        f"(not enough initial tokens on {', '.join(sorted(ch.name for ch in starving))})",
        blocked, where, [ch.name for ch in starving])


def firing_sequence(graph: SDFGraph, q: dict[str, int] | None = None) -> list[tuple[str, int]]:
    """A sequential schedule of one iteration as ``(actor, n)`` runs: ``actor`` fires
    ``n`` times in a row.

    An actor fires as often as its inputs allow, bounded by what remains of ``q``; only
    the consumers of channels that received tokens are looked at again, so the work is
    proportional to the number of runs times the degree, not to the number of firings.
    Raises :class:`DeadlockError` naming the actors that cannot complete the iteration,
    and :class:`LimitError` past ``moc.limits.MAX_FIRINGS`` runs (the schedule itself
    has that many entries).
    """
    q = repetition_vector(graph) if q is None else q
    if cyclo_static(graph):
        raise SDFError(f"'{graph.name}' is cyclo-static: a sequential schedule in runs "
                       f"of one actor is for SDF graphs", graph.origin)
    limit = limits.MAX_FIRINGS
    tokens = {name: ch.delay for name, ch in graph.channels.items()}
    inputs = {a: [] for a in graph.actors}
    outputs = {a: [] for a in graph.actors}
    for ch in graph.channels.values():
        inputs[ch.dst].append(ch)
        outputs[ch.src].append(ch)
    remaining = dict(q)
    queue = deque(graph.actors)
    queued = set(graph.actors)
    sequence = []
    while queue:
        actor = queue.popleft()
        queued.discard(actor)
        n = remaining[actor]
        for ch in inputs[actor]:
            if ch.src == ch.dst:
                if tokens[ch.name] < ch.cons:
                    n = 0
            else:
                n = min(n, tokens[ch.name] // ch.cons)
        if n <= 0:
            continue
        for ch in inputs[actor]:
            tokens[ch.name] -= n * ch.cons
        for ch in outputs[actor]:
            tokens[ch.name] += n * ch.prod
            if ch.dst not in queued and remaining[ch.dst] > 0:
                queue.append(ch.dst)
                queued.add(ch.dst)
        remaining[actor] -= n
        sequence.append((actor, n))
        if len(sequence) > limit:
            raise LimitError(f"the sequential schedule of '{graph.name}' has at least "
                             f"{limit + 1} firing runs", "firings", limit, graph.origin)
    blocked = [a for a in graph.actors if remaining[a] > 0]
    if blocked:
        raise_deadlock(graph, blocked, tokens)
    return sequence

