"""Throughput of the self-timed execution by K-periodic scheduling (Bodin, Munier-Kordon &
de Dinechin, "Optimal and fast throughput evaluation of CSDF", DAC 2016, as the Kiter
tool computes it): no HSDF expansion, one node per firing of a periodic pattern.

A K-periodic schedule starts firing ``k + m·K_t`` of actor ``t`` (``k = 1..K_t``) at
``s(t, k) + m·K_t·Ω/q_t``: the pattern of ``K_t`` firings repeats every ``K_t/q_t``
iterations of period ``Ω``.  Its precedences form a constraint graph whose maximum cycle
ratio is the smallest feasible ``Ω``; ``K_t = q_t`` gives the HSDF bound, the exact
period of the self-timed execution, and much smaller ``K`` usually already does.
As in Kiter, ``K`` starts at 1 and grows on the critical circuit only, to
``lcm(K_t, q_t/g)`` with ``g`` the gcd of ``q`` over the circuit's actors.  It stops at
the paper's rule (:func:`covers`): once every ``K_t`` on the critical circuit is a
multiple of ``q_t/g`` the ratio is optimal.  Proof: the circuit's actors and channels
alone form a strongly connected graph of repetition vector ``q_t/g``, for which such
``K`` are whole iterations, exact; its constraint graph is a part of the whole one
(a channel's edges depend on the ``K`` of its ends only) and holds the circuit, so
``Ω_K(G)``, the circuit's ratio, ``≤ Ω_K(circuit alone) = Ω(circuit alone) ≤ Ω(G) ≤
Ω_K(G)``.  ``K`` far below ``q`` often meets it (a graph of Kiter's generator: ``K``
summing to 284 for 8·10^7 firings an iteration).  Elsewhere a
critical circuit that is a chain of real precedences repeating (:func:`_realizable`)
is optimal too, and where neither holds ``K`` grows, to ``q_t`` where the ``lcm``
changes nothing.
"""
from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from fractions import Fraction
from types import MappingProxyType

from moc.deadlock import check_deadlock, strongly_connected_components
from moc.errors import LimitError, UnboundedCycleError
from moc.exact_times import ticks
from moc.graph import SDFGraph
from moc.howard_exact import cycle_edge_list, max_cycle_ratio_lists, on_lists, take
from moc.hsdf import token_writer
from moc import limits
from moc.record import record
from moc.self_loops import busiest, busy_time


#: growth steps of ``K`` on critical circuits after which a component's whole iteration
#: is taken at once (its exact pattern), where that is within the limit firings: one
#: large step costs less than thousands of small ones (Kiter's autogen4: 2,364 steps)
STEPS_BEFORE_WHOLE = 16
#: nodes and edges up to which (or up to :data:`WHOLE_FACTOR` times the current
#: ``K``'s) the whole iteration is taken at once: one exact solve of a small graph
#: costs less than steps
SMALL_WHOLE = 20_000
#: a step of ``K`` whose graph has negative heights costs far more per edge than the
#: whole iteration's (measured when circuits without tokens were sought by Bellman-Ford,
#: before the policy iteration of :mod:`moc.cycle_ratio`): Kiter's JPEG2000_sized
#: took nine steps of 0.6-1.5 s each before its whole iteration, solved in 0.6 s
WHOLE_FACTOR = 16


@record
class KPeriodicThroughput:
    """``period``: time of one graph iteration in the periodic regime (0 when no cycle
    bounds it); ``critical_cycle``: the actors of a critical circuit, in order (of
    equally critical ones, that of :mod:`moc.critical_cycle`'s rule, which ``K`` grows
    on too);
    ``periodicity``: the ``K`` that proved it; ``actor_periods``: per actor, the period
    of its own firings, the largest over the components upstream of it;
    ``critical_channels``: the channels whose precedences close that circuit (where
    parallel ones are equally tight, all of them); ``optimal``: False where a larger
    ``K`` would pass the limit firings, ``period`` then the least of the K-periodic
    schedules found, an upper bound of the self-timed one; ``floor``: a lower bound of
    the period (the period itself where ``optimal``), 0 where none is known."""

    period: Fraction | float
    critical_cycle: tuple
    periodicity: Mapping[str, int]
    actor_periods: Mapping[str, Fraction | float]
    critical_channels: frozenset = frozenset()
    optimal: bool = True
    floor: Fraction | float | None = None

    def __post_init__(self):
        if self.floor is None:
            object.__setattr__(self, "floor", self.period if self.optimal else 0)


def kperiodic_throughput(graph: SDFGraph, durations: Mapping[str, object],
                         q: Mapping[str, int]) -> KPeriodicThroughput:
    """The period of the self-timed execution of the bound, consistent, live SDF
    ``graph`` with firing times ``durations`` and repetition vector ``q``, component by
    component (:func:`by_component`; a cyclo-static graph is timed by
    :func:`moc.csdf_kperiodic.phased_kperiodic_throughput`, and
    :func:`moc.timing.self_timed_period` chooses).  A feasible K-periodic schedule proves
    the graph live, so the deadlock check (:func:`moc.deadlock.check_deadlock`, which
    raises :class:`DeadlockError`) runs only when some ``K`` admits none.
    """
    live = functools.cache(lambda: check_deadlock(graph, q))
    return by_component(graph, lambda actors, channels: _component_period(
        graph, actors, channels, durations, q, live))


def by_component(graph: SDFGraph, component_period) -> KPeriodicThroughput:
    """The period of ``graph`` from those of its strongly connected components:
    ``component_period(actors, channels)`` gives ``(period, critical actors, K,
    critical channels[, optimal[, floor]])`` of a component with channels inside (one
    without bounds nothing); the graph's period is the largest, as is its floor (a
    lower bound of the period where it is not optimal; a floor at the period proves
    it), and an actor fires no faster than any component upstream of it."""
    components = strongly_connected_components(graph)
    component_of = {a: i for i, actors in enumerate(components) for a in actors}
    inside = [[] for _ in components]
    for ch in graph.channels.values():
        if component_of[ch.src] == component_of[ch.dst]:
            inside[component_of[ch.src]].append(ch)
    period, critical, periodicity, own = 0, (), {a: 1 for a in graph.actors}, []
    channels_of_critical, optimal, floor = frozenset(), True, 0
    for actors, channels in zip(components, inside):
        if not channels:
            own.append(0)
            continue
        value, cycle, K, through, *proven = component_period(actors, channels)
        exact = not proven or proven[0]
        optimal = optimal and exact
        floor = max(floor, value if exact else proven[1] if len(proven) > 1 else 0)
        periodicity.update(K)
        own.append(value)
        # a component bounded without a circuit (``cycle`` empty) is critical too
        if value > period or not critical and value == period:
            period, critical, channels_of_critical = value, cycle, through
    reach = list(own)
    upstream = [set() for _ in components]
    for ch in graph.channels.values():
        i, j = component_of[ch.src], component_of[ch.dst]
        if i != j:
            upstream[j].add(i)
    for j in range(len(components)):        # upstream components come first
        reach[j] = max([own[j]] + [reach[i] for i in upstream[j]])
    actor_periods = {a: reach[component_of[a]] for a in graph.actors}
    # a lower bound at the upper one proves it: an exact component's period at least
    # the bounds of the others (or a busiest actor's time at its bound)
    return KPeriodicThroughput(period, critical, MappingProxyType(periodicity),
                               MappingProxyType(actor_periods), channels_of_critical,
                               optimal or floor == period, floor)


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
    channels = list(channels)
    graph = _constraint_graph(channels, durations, q, K)
    for e in range(len(graph.u)):
        ch = channels[graph.channel[e]]
        yield (graph.name(graph.u[e]), graph.name(graph.v[e]),
               durations[ch.src], Fraction(int(graph.h[e]), graph.h_unit), ch)


@record
class _Graph:
    """The constraint graph as arrays (numpy's, or Python lists where small): node
    ``i`` is firing class ``k[i]`` of actor ``actors[actor[i]]``; edge ``e`` goes
    ``u[e] -> v[e]`` with weight ``w[e]/w_unit`` and height ``h[e]/h_unit`` (integers)
    and comes from ``channel[e]``."""

    actors: list
    actor: np.ndarray
    k: np.ndarray
    u: np.ndarray
    v: np.ndarray
    w: np.ndarray
    h: np.ndarray
    channel: np.ndarray
    w_unit: int
    h_unit: int

    def name(self, i):
        return self.actors[self.actor[i]], int(self.k[i])


def _constraint_graph(channels, durations, q, K, cache=None, actors=None) -> _Graph:
    """The edges of :func:`constraint_edges` as integer arrays; ``cache`` keeps what
    does not depend on ``K`` and each channel's pairs and heights for the ``K`` of its
    ends, which mostly stay from one step of the iteration to the next.  The nodes go
    actor by actor in the order of ``actors`` (else as the channels meet them), each
    actor's classes ``k`` in increasing order."""
    import numpy as np
    from moc.cycle_ratio import integer_array
    cache = {} if cache is None else cache
    if "static" not in cache:
        actors = _node_order(channels, actors)
        where = {a: i for i, a in enumerate(actors)}
        w_unit, h_unit, factor, weights = _units(actors, channels, durations, q)
        p, c, m0 = (integer_array([getattr(ch, f) for ch in channels])
                    for f in ("prod", "cons", "delay"))
        # K = 1 at both ends: one pair, x_max from C0 = M0 + p − c, all channels at once
        plain = all(a.dtype == np.int64 for a in (p, c, m0)) and len(channels) and \
            int(m0.max()) + 2 * int(max(p.max(), c.max())) < 2 ** 60
        g = np.gcd(p, c) if plain else None
        single = _latest(p, c, m0, 1, 1, g) if plain else None
        cache["static"] = (
            actors, np.array([where[ch.src] for ch in channels], dtype=np.int64),
            np.array([where[ch.dst] for ch in channels], dtype=np.int64), w_unit, h_unit,
            factor, integer_array(weights), single)
    actors, src, dst, w_unit, h_unit, factor, weight, single = cache["static"]
    sizes = np.array([K[a] for a in actors], dtype=np.int64)
    offset = np.cumsum(sizes) - sizes
    ones = (sizes[src] == 1) & (sizes[dst] == 1) if single is not None else \
        np.zeros(len(channels), dtype=bool)
    parts = [(np.ones(int(ones.sum()), dtype=np.int64),) * 2 + (single[ones],)]
    rest = np.flatnonzero(~ones).tolist()
    for i in rest:
        ch = channels[i]
        key = (i, K[ch.src], K[ch.dst])
        if key not in cache:
            cache[key] = _channel_edges(ch, K[ch.src], K[ch.dst])
        parts.append(cache[key])
    channel = np.concatenate([np.flatnonzero(ones), np.repeat(
        np.array(rest, dtype=np.int64), [len(part[0]) for part in parts[1:]])])
    big = any(part[2].dtype == object for part in parts)
    ka, kb, x = (np.concatenate([part[j].astype(object) if big else part[j]
                                 for part in parts]) for j in range(3))
    order = np.argsort(channel, kind="stable")       # edges in channel order, as before
    channel, ka, kb, x = channel[order], ka[order], kb[order], x[order]
    if not big and len(x) and max(factor) * int(np.abs(x).max()) >= 2 ** 62:
        big, x = True, x.astype(object)
    scale = np.array(factor, dtype=object if big else np.int64)
    actor = np.repeat(np.arange(len(actors)), sizes)
    return _Graph(actors, actor, np.arange(int(sizes.sum())) - offset[actor] + 1,
                  (offset[src[channel]] + ka - 1).astype(np.int64),
                  (offset[dst[channel]] + kb - 1).astype(np.int64),
                  weight[channel], integer_array(-x * scale[channel]), channel, w_unit,
                  h_unit)


def _units(actors, channels, durations, q):
    """The integer scales of the constraint graph: ``w_unit``, the least common
    denominator of the times (:func:`moc.exact_times.ticks`); ``h_unit``, the tokens of
    one iteration on every channel at once (the lcm of ``prod·q[src]``); per channel the
    factor that turns its tokens into ``h_unit``'s and its producer's time in
    ``w_unit``'s."""
    w_unit, tick = ticks({a: durations[a] for a in actors})
    h_unit = math.lcm(*(ch.prod * q[ch.src] for ch in channels))
    return (w_unit, h_unit, [h_unit // (ch.prod * q[ch.src]) for ch in channels],
            [tick[ch.src] for ch in channels])


def _node_order(channels, actors=None) -> list:
    """The actors of ``channels`` in the order of ``actors`` where given, else as the
    channels meet them."""
    met = dict.fromkeys(a for ch in channels for a in (ch.src, ch.dst))
    return list(met) if actors is None else [a for a in actors if a in met]


def _listed_graph(channels, durations, q, K, cache, actors=None) -> _Graph:
    """:func:`_constraint_graph` as Python lists, the same nodes and edges in the same
    order (channel after channel, each one's pairs ``(k_a, k_b)`` in order)."""
    if "listed" not in cache:
        actors = _node_order(channels, actors)
        where = {a: i for i, a in enumerate(actors)}
        cache["listed"] = (actors, where, *_units(actors, channels, durations, q))
    actors, where, w_unit, h_unit, factor, weight = cache["listed"]
    offset, actor, k = {}, [], []
    for i, a in enumerate(actors):
        offset[a] = len(actor)
        actor += [i] * K[a]
        k += range(1, K[a] + 1)
    u, v, w, h, channel = [], [], [], [], []
    for i, ch in enumerate(channels):
        key = ("listed", i, K[ch.src], K[ch.dst])
        if key not in cache:
            cache[key] = _listed_pairs(ch, K[ch.src], K[ch.dst])
        tail, head = offset[ch.src] - 1, offset[ch.dst] - 1
        for ka, kb, x in cache[key]:
            u.append(tail + ka)
            v.append(head + kb)
            w.append(weight[i])
            h.append(-x * factor[i])
            channel.append(i)
    return _Graph(actors, actor, k, u, v, w, h, channel, w_unit, h_unit)


def _listed_pairs(ch, K_a, K_b):
    """The pairs ``(k_a, k_b)`` of channel ``ch`` (:func:`_linked`) and their
    ``x_max``, as a list of triples."""
    p, c, m0 = ch.prod, ch.cons, ch.delay
    g = math.gcd(p * K_a, c * K_b)
    if g <= p:
        pairs = [(a, b) for a in range(1, K_a + 1) for b in range(1, K_b + 1)]
    else:
        span = p * K_a // g
        pairs = sorted({(_writer(p, c, m0, b + m * K_b, K_a), b)
                        for b in range(1, K_b + 1) for m in range(span)})
    return [(a, b, _latest(p, c, m0, a, b, g)) for a, b in pairs]


def _latest(p, c, m0, ka, kb, g):
    """``x_max`` of the pair ``(k_a, k_b)``: :func:`x_max` of ``p − C0``, ``C0 = M0 +
    p·k_a − c·k_b`` (:func:`constraint_edges`)."""
    return x_max(p - (m0 + p * ka - c * kb), g)


def x_max(span, g):
    """``g·⌊(span − 1)/g⌋``, the largest multiple of ``g`` below ``span``: the latest
    precedence ``x`` of a pair of firings whose tokens leave ``span`` to spare (the
    SDF pair here, a cyclo-static one in :mod:`moc.csdf_kperiodic`); Python integers
    or numpy arrays alike."""
    return g * ((span - 1) // g)


def _writer(p, c, m0, nu_b, K_a):
    """The class ``k_a`` of the firing ``⌈(c·ν_b − M0)/p⌉`` of the producer that firing
    ``ν_b`` of the consumer waits for (:func:`_linked`), the writer of its last token;
    integers or arrays alike."""
    return token_writer(c * nu_b - 1, p, m0) % K_a + 1


def _channel_edges(ch, K_a, K_b):
    """The pairs ``(k_a, k_b)`` of channel ``ch`` (:func:`_linked`) and their
    ``x_max``, as arrays."""
    p, c, m0 = ch.prod, ch.cons, ch.delay
    g = math.gcd(p * K_a, c * K_b)
    ka, kb = _linked(p, c, m0, K_a, K_b)
    return ka, kb, _latest(p, c, m0, ka, kb, g)


def _edge_count(p, c, K_a, K_b):
    """The pairs :func:`_linked` tries: all ``K_a·K_b`` where ``g ≤ p``, else
    ``K_b·α/g``."""
    g = math.gcd(p * K_a, c * K_b)
    return K_a * K_b if g <= p else K_b * (p * K_a // g)


def _linked(p, c, m0, K_a, K_b):
    """The pairs ``(k_a, k_b)`` joined by an edge, as two arrays: those with
    ``(C0 mod g) < p``.

    Where ``g ≤ p`` that is every pair.  Otherwise each firing ``ν_b = k_b + m·K_b``
    waits for ``ν_a = ⌈(c·ν_b − M0)/p⌉``, whose class modulo ``K_a`` repeats with ``m``
    every ``α/g`` steps, so ``K_b·α/g`` firings name every pair, far fewer than
    ``K_a·K_b`` when ``K`` follows the repetition vector (``α = β = g``: one pair per
    ``k_b``, the HSDF expansion's edges).  Numbers past int64 are Python integers:
    every number here and in :func:`_channel_edges` is at most ``M0 + (p + c)·(K_a +
    1)·(K_b + 1)`` in size (``c·ν_b ≤ c·K_a·K_b``, ``|C0| ≤ M0 + p·K_a + c·K_b``, and
    ``|x_max| ≤ |p − C0 − 1| + g`` with ``g ≤ p·K_a``)."""
    import numpy as np
    from moc.cycle_ratio import sorted_unique
    g = math.gcd(p * K_a, c * K_b)
    big = m0 + (p + c) * (K_a + 1) * (K_b + 1) >= 2 ** 62
    kind = object if big else np.int64
    if g <= p:
        return (np.repeat(np.arange(1, K_a + 1), K_b).astype(kind),
                np.tile(np.arange(1, K_b + 1), K_a).astype(kind))
    span = p * K_a // g
    kb = np.repeat(np.arange(1, K_b + 1), span).astype(kind)
    nu_b = kb + np.tile(np.arange(span), K_b).astype(kind) * K_b
    ka = _writer(p, c, m0, nu_b, K_a)
    pairs = sorted_unique(ka.astype(np.int64) * (K_b + 1) + kb.astype(np.int64))
    return (pairs // (K_b + 1)).astype(kind), (pairs % (K_b + 1)).astype(kind)


def _component_period(graph, actors, channels, durations, q, live):
    """Kiter's iteration: K = 1, then enlarge K on the critical circuit until that
    circuit is a true cycle of the self-timed execution (:func:`_realizable`), or take
    the component's whole iteration at once where :func:`whole_at_once` says so.  Where
    the next ``K`` would have more than ``moc.limits.MAX_FIRINGS`` nodes and tried
    pairs: the bounds of :func:`bounded` once a schedule was found, else
    :class:`LimitError`."""
    K = {a: 1 for a in actors}
    # the component's own repetition vector: K at it is exact on every circuit
    common = math.gcd(*(q[a] for a in actors))
    own = {a: q[a] // common for a in actors}
    cache: dict = {}

    def size_at(K):
        return sum(K.values()) + sum(
            1 if K[ch.src] == K[ch.dst] == 1 else
            _edge_count(ch.prod, ch.cons, K[ch.src], K[ch.dst]) for ch in channels)
    whole = size_at(own)
    steps = 0
    best = None                 # the least period of a schedule found, and its circuit
    while True:
        steps += 1
        size = size_at(K)
        if K != own and whole_at_once(steps, size, whole):
            K, size = dict(own), whole
        if size > limits.MAX_FIRINGS and best is not None:
            return bounded(best, actors, channels, durations, q, {a: 1 for a in actors})
        if size > limits.MAX_FIRINGS:
            raise too_large(graph, actors, size)
        if on_lists(size):
            found, solve = _listed_graph(channels, durations, q, K, cache, actors), \
                max_cycle_ratio_lists
        else:
            from moc.cycle_ratio import max_cycle_ratio_arrays as solve
            found = _constraint_graph(channels, durations, q, K, cache, actors)
        try:
            # the critical circuit by a rule of its own (:mod:`moc.critical_cycle`)
            ratio, cycle = solve(len(found.k), found.u, found.v, found.w, found.h,
                                 least=True)
        except UnboundedCycleError as exc:
            # no K-periodic schedule with this K: a deadlock, or the circuit needs more
            live()
            circuit = [found.name(i) for i in exc.cycle]
        else:
            ratio = ratio * Fraction(found.h_unit, found.w_unit)
            circuit = [found.name(i) for i in cycle]
            # no period is below 0, so a zero ratio needs no proof; nor does K at the
            # component's own repetition vector (its firings' precedences, exact)
            if ratio == 0 or K == own or \
                    covers(K, [a for a, _ in circuit], q) or \
                    _realizable(circuit, _tightest(found, cycle, channels), K):
                return (ratio, named(circuit, actors), K,
                        _circuit_channels(found, cycle, channels))
            if best is None or ratio < best[0]:
                best = (ratio, named(circuit, actors), dict(K),
                        _circuit_channels(found, cycle, channels))
        on_circuit = list(dict.fromkeys(a for a, _ in circuit))
        grown = grow(K, on_circuit, q)
        if grown is None:
            raise AssertionError(f"K-periodic iteration stalled on {on_circuit}")
        K.update(grown)


def whole_at_once(steps: int, size: int, whole: int) -> bool:
    """Whether a component's growth of ``K`` stops at its ``steps``-th step for its
    whole iteration (its exact pattern, of ``whole`` nodes and edges against ``size``
    for the current ``K``): within the limit firings, where that is small
    (:data:`SMALL_WHOLE`) or within :data:`WHOLE_FACTOR` times the current graph, or
    after :data:`STEPS_BEFORE_WHOLE` steps.  One large exact solve costs less than many
    growing ones (SDF3's generator's 20-actor graph of 153,877 firings: twelve steps
    of 80,000-140,000 nodes each, 9.4 s, where the whole iteration takes 0.5 s)."""
    return whole <= limits.MAX_FIRINGS and (
        steps > STEPS_BEFORE_WHOLE or whole <= max(WHOLE_FACTOR * size, SMALL_WHOLE))


def bounded(best, actors, channels, durations, q, n) -> tuple:
    """What a component gives where the next ``K`` would pass the limit firings after
    ``best`` (``(period, circuit, K, channels)``, the least K-periodic schedule found,
    which proves the graph live): the least upper bound of its period, that or
    :func:`one_at_a_time`, marked not optimal with the busiest actor's time as a lower
    bound (:func:`moc.self_loops.busiest`, per actor ``n`` phases); the busiest actor's
    loop as the critical circuit where its time meets the bound, which is then exact."""
    work = one_at_a_time(actors, durations, q, n)
    floor = busiest(actors, channels, durations, q, n)
    least = 0 if floor is None else floor[0]
    if floor is not None and least == min(work, best[0]):
        return least, (floor[1],), best[2], frozenset({floor[2]})
    if work < best[0]:
        return work, (), best[2], frozenset(), False, least
    return (*best, False, least)


def one_at_a_time(actors, durations, q, n) -> Fraction:
    """The time of one iteration's firings of ``actors`` run one after another,
    ``Σ_t (q_t/n_t)·Σ_p d(t, p)``: an upper bound of the period of a live graph's
    self-timed execution, which is never idle (while no firing runs, one can start, or
    the graph has deadlocked) and so completes an iteration's firings within their
    total time."""
    return sum((busy_time(durations[a], q[a], n[a]) for a in actors), Fraction(0))


def too_large(graph, actors, size) -> LimitError:
    """The error of a K-periodic constraint graph of ``size`` nodes and edges past
    ``moc.limits.MAX_FIRINGS`` for the component ``actors``."""
    return LimitError(
        f"the K-periodic constraint graph of '{graph.name}' (actors "
        f"{', '.join(map(repr, actors[:5]))}{', ...' if len(actors) > 5 else ''}) "
        f"would have {size} nodes and edges", "firings", limits.MAX_FIRINGS, graph.origin)


def grow(K, on_circuit, whole):
    """Kiter's step: ``K`` of the actors of a critical circuit grown to
    ``lcm(K_t, whole_t / gcd of whole on the circuit)``, or where that changes nothing
    to ``whole_t`` (the whole iteration's pattern, always exact); None where ``K``
    already is that."""
    common = math.gcd(*(whole[a] for a in on_circuit))
    grown = {a: math.lcm(K[a], whole[a] // common) for a in on_circuit}
    if all(grown[a] == K[a] for a in on_circuit):
        grown = {a: whole[a] for a in on_circuit}
    return None if all(grown[a] == K[a] for a in on_circuit) else grown


def covers(K, on_circuit, whole) -> bool:
    """The paper's stopping rule: whether every ``K_t`` on the critical circuit is a
    multiple of ``whole_t / gcd of whole on the circuit``, the repetition vector of the
    circuit's actors and channels taken alone, so that the circuit's ratio is optimal."""
    common = math.gcd(*(whole[a] for a in on_circuit))
    return all(K[a] % (whole[a] // common) == 0 for a in on_circuit)


def named(circuit, actors):
    """The actors of ``circuit`` in its order, from the one declared first."""
    place = {a: i for i, a in enumerate(actors)}
    start = min(range(len(circuit)), key=lambda i: (place[circuit[i][0]], circuit[i][1]))
    return tuple(dict.fromkeys(a for a, _ in circuit[start:] + circuit[:start]))


def _tightest(found, cycle, channels):
    """For each step of ``cycle`` (node numbers), the channel of its tightest edge: of
    parallel edges the critical one has the smallest height (same weight), of equal
    ones the first."""
    edges = edges_on(len(found.k), found.u, found.v, cycle)
    lowest = tightest(edges, found.u, found.v, [-h for h in take(found.h, edges)])
    name, cycle = found.name, list(cycle)
    return {(name(a), name(b)): channels[int(found.channel[lowest[a, b]])]
            for a, b in zip(cycle, cycle[1:] + cycle[:1])}


def tightest(edges, u, v, key) -> dict:
    """Per step ``(u, v)`` of the ``edges`` (positions in the lists or arrays ``u``,
    ``v``), the edge of the largest ``key`` (one per edge), of equal ones the first."""
    best: dict = {}
    for e, step, k in zip(edges, zip(take(u, edges), take(v, edges)), key):
        if step not in best or k > best[step][0]:
            best[step] = (k, e)
    return {step: e for step, (_, e) in best.items()}


def _circuit_channels(found, cycle, channels) -> frozenset:
    """The names of the channels whose edges close ``cycle`` (node numbers) at their
    smallest height (the critical ones among parallel edges; all of them where they
    tie): the channels whose capacity the storage-throughput trade-off grows."""
    n = len(found.k)
    lowest: dict = {}
    for e in edges_on(n, found.u, found.v, cycle):
        key, h, name = int(found.u[e]) * n + int(found.v[e]), found.h[e], \
            channels[found.channel[e]].name
        best = lowest.get(key)
        if best is None or h < best[0]:
            lowest[key] = (h, {name})
        elif h == best[0]:
            best[1].add(name)
    return frozenset(name for _, names in lowest.values() for name in names)


def edges_on(n: int, u, v, cycle) -> list:
    """The positions of the edges ``u → v`` (of ``n`` nodes) that join consecutive
    nodes of ``cycle``, ascending, of a constraint graph on Python lists or numpy
    arrays."""
    if isinstance(u, list):
        return cycle_edge_list(u, v, cycle)
    from moc.cycle_ratio import cycle_edges
    return cycle_edges(n, u, v, cycle).tolist()


def _realizable(circuit, tightest, K) -> bool:
    """Whether the critical circuit is a cycle of real precedences that repeats.

    A sufficient condition for optimality, checked rather than assumed: follow the
    firings ``ν_0 ≡ k_0 (mod K)`` around the circuit, each edge at its tightest
    ``x_max`` (firing ``ν_b = (M0 + p·ν_a − z)/c`` for ``z = C0 + x_max``, the channel
    ``tightest[step]``); the firings that can start it form an arithmetic progression,
    and if the firing reached at the end belongs to it, the chain repeats for ever.
    Its ratio is then a cycle mean of the HSDF expansion, at most the optimal period,
    while no K-periodic schedule beats the optimum: the two are equal.
    """
    start = (circuit[0][1], K[circuit[0][0]])      # ν_0 = A + B·s
    here = start
    for i, (a, ka) in enumerate(circuit):
        b, kb = circuit[(i + 1) % len(circuit)]
        ch = tightest[(a, ka), (b, kb)]
        p, c, m0 = ch.prod, ch.cons, ch.delay
        c0 = m0 + p * ka - c * kb
        g = math.gcd(p * K[a], c * K[b])
        z = c0 + g * ((p - c0 - 1) // g)
        # c divides m0 - z + p·ν_a
        step = solve_congruence(p * here[1], -(m0 - z + p * here[0]), c)
        if step is None:
            return False
        start, here = substitute(start, step), substitute(here, step)
        here = ((m0 - z + p * here[0]) // c, p * here[1] // c)
        # ν_b ≡ k_b (mod K_b)
        step = solve_congruence(here[1], kb - here[0], K[b])
        if step is None:
            return False
        start, here = substitute(start, step), substitute(here, step)
    shift = here[0] - start[0]
    return here[1] == start[1] and shift > 0 and shift % start[1] == 0


def solve_congruence(a, b, m):
    """``s ≡ s0 (mod m')`` solving ``a·s ≡ b (mod m)`` as ``(s0, m')``, or None."""
    g = math.gcd(a, m)
    if b % g:
        return None
    m2 = m // g
    return ((b // g) * pow(a // g, -1, m2) % m2 if m2 > 1 else 0), m2


def substitute(form, step):
    """The affine form ``A + B·s`` after ``s = s0 + m'·s'``."""
    (A, B), (s0, m2) = form, step
    return A + B * s0, B * m2
