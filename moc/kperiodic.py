"""Throughput of the self-timed execution by K-periodic scheduling (Bodin, Munier-Kordon &
de Dinechin, "Optimal and fast throughput evaluation of CSDF", DAC 2016, as the Kiter
tool computes it): no HSDF expansion, one node per firing of a periodic pattern.

A K-periodic schedule starts firing ``k + m·K_t`` of actor ``t`` (``k = 1..K_t``) at
``s(t, k) + m·K_t·Ω/q_t``: the pattern of ``K_t`` firings repeats every ``K_t/q_t``
iterations of period ``Ω``.  Its precedences form a constraint graph whose maximum cycle
ratio is the smallest feasible ``Ω``; ``K_t = q_t`` gives the HSDF bound, the exact
period of the self-timed execution, and much smaller ``K`` usually already does.
As in Kiter, ``K`` starts at 1 and grows on the critical circuit only (to
``lcm(K_t, q_t/gcd of q on the circuit)``, then to ``q_t``); the test that stops it is
not the paper's but a sufficient condition proven and checked exactly here
(:func:`_realizable`).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType
from typing import Mapping

from moc.cycle_ratio import UnboundedCycleError, max_cycle_ratio
from moc.deadlock import check_deadlock, strongly_connected_components
from moc.graph import SDFGraph
from moc.phases import cyclo_static


@dataclass(frozen=True)
class KPeriodicThroughput:
    """``period``: time of one graph iteration in the periodic regime (0 when no cycle
    bounds it); ``critical_cycle``: the actors of a critical circuit, in order;
    ``periodicity``: the ``K`` that proved it; ``actor_periods``: per actor, the period
    of its own firings, the largest over the components upstream of it;
    ``critical_channels``: the channels whose precedences close that circuit (where
    parallel ones are equally tight, all of them)."""

    period: Fraction | float
    critical_cycle: tuple
    periodicity: Mapping[str, int]
    actor_periods: Mapping[str, Fraction | float]
    critical_channels: frozenset = frozenset()


def kperiodic_throughput(graph: SDFGraph, durations: Mapping[str, object],
                         q: Mapping[str, int]) -> KPeriodicThroughput:
    """The period of the self-timed execution of the bound, consistent, live ``graph``
    with firing times ``durations`` and repetition vector ``q``, component by component
    (a strongly connected component without a cycle bounds nothing).

    A cyclo-static graph is timed through the graph of its firings instead
    (:func:`moc.csdf.throughput`).  A feasible K-periodic schedule proves the graph
    live, so the deadlock check
    (:func:`moc.deadlock.check_deadlock`, which raises :class:`DeadlockError`) runs only
    when some ``K`` admits none.
    """
    if cyclo_static(graph):
        from moc.csdf import throughput
        return throughput(graph, durations, q)
    components = strongly_connected_components(graph)
    component_of = {a: i for i, actors in enumerate(components) for a in actors}
    inside = [[] for _ in components]
    for ch in graph.channels.values():
        if component_of[ch.src] == component_of[ch.dst]:
            inside[component_of[ch.src]].append(ch)
    period, critical, periodicity, own = 0, (), {a: 1 for a in graph.actors}, []
    channels_of_critical = frozenset()
    live = functools.cache(lambda: check_deadlock(graph, q))
    for actors, channels in zip(components, inside):
        if not channels:
            own.append(0)
            continue
        value, cycle, K, through = _component_period(actors, channels, durations, q, live)
        periodicity.update(K)
        own.append(value)
        if not critical or value > period:
            period, critical, channels_of_critical = value, cycle, through
    # upstream components come first: an actor fires no faster than anything before it
    reach = list(own)
    upstream = [set() for _ in components]
    for ch in graph.channels.values():
        i, j = component_of[ch.src], component_of[ch.dst]
        if i != j:
            upstream[j].add(i)
    for j in range(len(components)):
        reach[j] = max([own[j]] + [reach[i] for i in upstream[j]])
    actor_periods = {a: reach[component_of[a]] for a in graph.actors}
    return KPeriodicThroughput(period, critical, MappingProxyType(periodicity),
                               MappingProxyType(actor_periods), channels_of_critical)


def constraint_edges(channels, durations, q, K):
    """The edges ``((a, k_a), (b, k_b), d(a), height)`` of the K-periodic constraint
    graph (Bodin et al. 2016), with the channel each comes from.

    Firing ``ν_b`` of ``b`` waits for firing ``ν_a`` of ``a`` iff
    ``0 ≤ M0 + p·ν_a − c·ν_b < p`` (it produces the last token ``ν_b`` reads).  With
    ``ν = k + m·K`` that is ``0 ≤ C0 + x < p`` for ``C0 = M0 + p·k_a − c·k_b`` and
    ``x = α·m_a − β·m_b`` (``α = p·K_a``, ``β = c·K_b``), whose values are the multiples
    of ``g = gcd(α, β)``; the tightest is ``x_max = g·⌊(p − C0 − 1)/g⌋``, and the edge
    exists iff ``x_max ≥ −C0``.  The schedule requires
    ``s(b, k_b) − s(a, k_a) ≥ d(a) + Ω·x/R`` with ``R = p·q_a`` tokens per iteration,
    so the edge has height ``−x_max/R`` iterations.
    """
    for ch in channels:
        a, b, p, c, m0 = ch.src, ch.dst, ch.prod, ch.cons, ch.delay
        R = p * q[a]
        g = math.gcd(p * K[a], c * K[b])
        for ka in range(1, K[a] + 1):
            for kb in range(1, K[b] + 1):
                c0 = m0 + p * ka - c * kb
                x = g * ((p - c0 - 1) // g)
                if x >= -c0:
                    yield (a, ka), (b, kb), durations[a], Fraction(-x, R), ch


def _component_period(actors, channels, durations, q, live):
    """Kiter's iteration: K = 1, then enlarge K on the critical circuit until that
    circuit is a true cycle of the self-timed execution (:func:`_realizable`)."""
    K = {a: 1 for a in actors}
    while True:
        nodes = [(a, k) for a in actors for k in range(1, K[a] + 1)]
        edges = list(constraint_edges(channels, durations, q, K))
        try:
            found = max_cycle_ratio(nodes, [e[:4] for e in edges])
        except UnboundedCycleError as exc:
            # no K-periodic schedule with this K: a deadlock, or the circuit needs more
            live()
            circuit = exc.cycle
        else:
            circuit, ratio = found.cycle, found.ratio
            # no period is below 0, so a zero ratio needs no proof
            if ratio == 0 or _realizable(circuit, edges, K):
                return (ratio, tuple(dict.fromkeys(a for a, _ in circuit)), K,
                        _circuit_channels(circuit, edges))
        on_circuit = list(dict.fromkeys(a for a, _ in circuit))
        common = math.gcd(*(q[a] for a in on_circuit))
        grown = {a: math.lcm(K[a], q[a] // common) for a in on_circuit}
        if all(grown[a] == K[a] for a in on_circuit):
            grown = {a: q[a] for a in on_circuit}     # the HSDF pattern: always exact
        if all(grown[a] == K[a] for a in on_circuit):
            raise AssertionError(f"K-periodic iteration stalled on {on_circuit}")
        K.update(grown)


def _circuit_channels(circuit, edges) -> frozenset:
    """The names of the channels whose edges close ``circuit`` at their smallest
    height (the critical ones among parallel edges; all of them where they tie)."""
    pairs = {(u, circuit[(i + 1) % len(circuit)]) for i, u in enumerate(circuit)}
    lowest: dict = {}
    for u, v, _, h, ch in edges:
        if (u, v) in pairs:
            best = lowest.get((u, v))
            if best is None or h < best[0]:
                lowest[u, v] = (h, {ch.name})
            elif h == best[0]:
                best[1].add(ch.name)
    return frozenset(name for _, names in lowest.values() for name in names)


def _realizable(circuit, edges, K) -> bool:
    """Whether the critical circuit is a cycle of real precedences that repeats.

    A sufficient condition for optimality, checked rather than assumed: follow the
    firings ``ν_0 ≡ k_0 (mod K)`` around the circuit, each edge at its tightest
    ``x_max`` (firing ``ν_b = (M0 + p·ν_a − z)/c`` for ``z = C0 + x_max``); the
    firings that can start it form an arithmetic progression, and if the firing
    reached at the end belongs to it, the chain repeats for ever.  Its ratio is then a
    cycle mean of the HSDF expansion, at most the optimal period, while no K-periodic
    schedule beats the optimum: the two are equal.
    """
    tightest = {}
    for u, v, _, h, ch in edges:
        # of parallel edges the critical one has the smallest height (same weight d(u))
        if (u, v) not in tightest or h < tightest[u, v][0]:
            tightest[u, v] = (h, ch)
    start = (circuit[0][1], K[circuit[0][0]])      # ν_0 = A + B·s
    here = start
    for i, (a, ka) in enumerate(circuit):
        b, kb = circuit[(i + 1) % len(circuit)]
        _, ch = tightest[(a, ka), (b, kb)]
        p, c, m0 = ch.prod, ch.cons, ch.delay
        c0 = m0 + p * ka - c * kb
        g = math.gcd(p * K[a], c * K[b])
        z = c0 + g * ((p - c0 - 1) // g)
        # c divides m0 - z + p·ν_a
        step = _solve(p * here[1], -(m0 - z + p * here[0]), c)
        if step is None:
            return False
        start, here = _substitute(start, step), _substitute(here, step)
        here = ((m0 - z + p * here[0]) // c, p * here[1] // c)
        # ν_b ≡ k_b (mod K_b)
        step = _solve(here[1], kb - here[0], K[b])
        if step is None:
            return False
        start, here = _substitute(start, step), _substitute(here, step)
    shift = here[0] - start[0]
    return here[1] == start[1] and shift > 0 and shift % start[1] == 0


def _solve(a, b, m):
    """``s ≡ s0 (mod m')`` solving ``a·s ≡ b (mod m)`` as ``(s0, m')``, or None."""
    g = math.gcd(a, m)
    if b % g:
        return None
    m2 = m // g
    return ((b // g) * pow(a // g, -1, m2) % m2 if m2 > 1 else 0), m2


def _substitute(form, step):
    """The affine form ``A + B·s`` after ``s = s0 + m'·s'``."""
    (A, B), (s0, m2) = form, step
    return A + B * s0, B * m2
