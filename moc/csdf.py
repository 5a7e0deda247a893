"""The timing of the self-timed execution of a cyclo-static graph (:mod:`moc.phases`)
through the graph of the firings of one iteration (an expansion, as the HSDF expansion
of an SDF graph).

Firing ``k`` of actor ``a`` (phase ``k mod n(a)``) takes ``d(a, k)``; the firings of
an actor start in order and end in order (a firing that would end before the one
started before it ends with it), as in SDF3's cyclo-static state space
(``order="ends"``), or only start in order (``order="starts"``, Kiter's rule; see
:data:`moc.csdf_kperiodic.ORDERS`).  It reads the
``cons`` of its phase from each input at its start and writes the ``prod`` of its phase
at its end.  With ``P(ν)`` the tokens that the first ``ν`` firings of the producer
write and ``C(ν)`` those that the first ``ν`` of the consumer read, firing ``ν`` of the
consumer (if its phase reads any) waits for firing ``w`` of the producer, the least with
``M0 + P(w + 1) ≥ C(ν + 1)``; ``w`` below 0 or past the iteration is a firing of an
earlier or later iteration.  Each firing is two nodes of a timed event graph, its start
and its end; the maximum cycle ratio of that graph is the period (Bilsen et al. 1996;
Bodin, Munier-Kordon & de Dinechin, DAC 2016, for the precedences).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from types import MappingProxyType

from moc.cycle_ratio import UnboundedCycleError, max_cycle_ratio
from moc.deadlock import check_deadlock
from moc.graph import SDFGraph
from moc.hsdf import check_expansion_size
from moc.kperiodic import KPeriodicThroughput
from moc.phases import Cumulative, phase_counts, phase_value


def firing_graph(graph: SDFGraph, durations: Mapping[str, object], q: Mapping[str, int],
                 max_firings: int | None = None, order: str = "ends"):
    """The nodes ``(actor, k, "s"|"e")`` and edges ``(u, v, weight, height, channel)``
    of the timed event graph of one iteration's firings (see the module docstring,
    ``order`` of an actor's own firings);
    ``channel`` is None for the order of an actor's own firings.  Refuses with
    :class:`ExpansionTooLargeError` past ``moc.limits.MAX_FIRINGS`` firings."""
    check_expansion_size(graph, q, max_firings)
    n = phase_counts(graph)
    alone = _one_at_a_time(graph)
    nodes, edges = [], []
    for a in graph.actors:
        for k in range(q[a]):
            nodes.append((a, k, "s"))
            if a in alone:          # its self-loop already orders its firings
                continue
            nodes.append((a, k, "e"))
            edges.append(((a, k, "s"), (a, k, "e"), phase_value(durations[a], k), 0, None))
            back, wrap = (k - 1) % q[a], int(k == 0)
            edges.append(((a, back, "s"), (a, k, "s"), 0, wrap, None))
            if order == "ends":
                edges.append(((a, back, "e"), (a, k, "e"), 0, wrap, None))
    for ch in graph.channels.values():
        a, b = ch.src, ch.dst
        made, read = Cumulative(ch.prod, n[a]), Cumulative(ch.cons, n[b])
        for nu in range(q[b]):
            if phase_value(ch.cons, nu) == 0:
                continue
            w = made.writer(read(nu + 1) - ch.delay)
            back, k = divmod(w, q[a])
            # from the producer's end: its end node, or its start plus its time
            edge = ((a, k, "s"), (b, nu, "s"), phase_value(durations[a], k)) if a in alone \
                else ((a, k, "e"), (b, nu, "s"), 0)
            edges.append((*edge, -back, ch.name))
    return nodes, edges


def _one_at_a_time(graph) -> set:
    """The actors that a self-loop keeps to one firing at a time (it holds as many
    tokens as every phase reads and writes back): their firings start and end in
    order without the order's own nodes and edges."""
    return {ch.src for ch in graph.channels.values() if ch.src == ch.dst and ch.delay > 0
            and all(phase_value(ch.prod, k) == phase_value(ch.cons, k) == ch.delay
                    for k in range(max(len(v) if isinstance(v, tuple) else 1
                                       for v in (ch.prod, ch.cons))))}


def throughput(graph: SDFGraph, durations: Mapping[str, object], q: Mapping[str, int],
               order: str = "ends"):
    """The period of the self-timed execution as a
    :class:`moc.kperiodic.KPeriodicThroughput` (``periodicity``: ``q``, the whole
    iteration), by the maximum cycle ratio of :func:`firing_graph`.  A deadlock raises
    :class:`DeadlockError` (:func:`moc.deadlock.check_deadlock`)."""
    nodes, edges = firing_graph(graph, durations, q, order=order)
    try:
        found = max_cycle_ratio(nodes, [e[:4] for e in edges])
    except UnboundedCycleError:
        check_deadlock(graph, q)
        raise
    period = found.ratio or 0
    cycle = found.cycle
    channels = set()
    if cycle:
        pairs = {(u, cycle[(i + 1) % len(cycle)]) for i, u in enumerate(cycle)}
        channels = {e[4] for e in edges if (e[0], e[1]) in pairs and e[4] is not None}
    critical = tuple(dict.fromkeys(a for a, _, _ in cycle)) if period else ()
    return KPeriodicThroughput(period, critical, MappingProxyType(dict(q)),
                               MappingProxyType({a: period for a in graph.actors}),
                               frozenset(channels) if period else frozenset())


def first_iteration(graph: SDFGraph, durations: Mapping[str, object], q: Mapping[str, int],
                    order: str = "ends"):
    """Per actor, ``(start, end)`` of each firing of the first iteration of the
    self-timed execution (``order`` of an actor's own firings): the longest paths over
    the precedences inside it (those of height 0; initial tokens stand for the earlier
    ones)."""
    nodes, edges = firing_graph(graph, durations, q, order=order)
    succ = {v: [] for v in nodes}
    indegree = dict.fromkeys(nodes, 0)
    for u, v, w, h, _ in edges:
        if h == 0:
            succ[u].append((v, w))
            indegree[v] += 1
    time = dict.fromkeys(nodes, 0)
    ready = deque(v for v in nodes if indegree[v] == 0)
    while ready:
        u = ready.popleft()
        for v, w in succ[u]:
            time[v] = max(time[v], time[u] + w)
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
    return {a: tuple((time[(a, k, "s")], time.get((a, k, "e"), time[(a, k, "s")] +
                                                   phase_value(durations[a], k)))
                     for k in range(q[a])) for a in graph.actors}
