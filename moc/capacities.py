"""Channel capacities as back-edges (Stuijk, Geilen & Basten, DAC 2006; SDF3's
``--algo buffersize``): the least capacity each channel needs alone and the step
between capacities that differ (:func:`capacity_bounds`), and the graph whose
back-edges bound its channels (:func:`bounded_graph`), which :mod:`moc.tradeoff`
times distribution by distribution."""
from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType

from moc.errors import SDFError
from moc.graph import Channel, SDFGraph
from moc.phases import InitialPhases, is_phased, phase_counts, phase_value
from moc.record import replace

#: the attribute that marks a back-edge as the free space of the channel it names
SPACE_OF = "space_of"


def capacity_bounds(graph: SDFGraph) -> dict[str, tuple[int, int]]:
    """Per channel of the bound ``graph``, ``(lower, step)``: the least capacity with
    which it alone lets its endpoints fire, ``p + c − g + M0 mod g`` and at least ``M0``
    (``g = gcd(p, c)``), and the step ``g`` between capacities that differ (tokens and
    space stay ≡ ``M0`` modulo ``g``).  A self-loop gets ``p + max(c, M0)`` (SDF3), a
    cyclo-static one :func:`_loop_capacity` over its phases.  Per phase (SDF3's
    cyclo-static buffer sizing): the least of that bound over the first ``gcd`` (of the
    two numbers of phases) pairs of phase rates, and the gcd of all the rates as the
    step.  A channel one of whose actors has initialisation phases
    (:mod:`moc.initial_phases`): see :func:`_initialised_bounds`."""
    bounds, n = {}, None
    for ch in graph.channels.values():
        if graph.actors[ch.src].initial_phases is not None or \
                graph.actors[ch.dst].initial_phases is not None:
            n = phase_counts(graph) if n is None else n
            bounds[ch.name] = _initialised_bounds(graph, ch, n)
            continue
        prods = ch.prod if is_phased(ch.prod) else (ch.prod,)
        conss = ch.cons if is_phased(ch.cons) else (ch.cons,)
        t = ch.delay
        if ch.src == ch.dst and (is_phased(ch.prod) or is_phased(ch.cons)):
            n = phase_counts(graph) if n is None else n
            phases = range(n[ch.src])
            bounds[ch.name] = (_loop_capacity([phase_value(ch.prod, k) for k in phases],
                                              [phase_value(ch.cons, k) for k in phases], t),
                               math.gcd(*prods, *conss))
            continue
        lower = None
        for i in range(math.gcd(len(prods), len(conss))):
            p, c = prods[i % len(prods)], conss[i % len(conss)]
            g = math.gcd(p, c)
            if ch.src == ch.dst:
                bound = p + max(c, t)
            else:
                bound = max(p + c - g + (t % g if g else 0), t)
            lower = bound if lower is None else min(lower, bound)
        bounds[ch.name] = (lower, math.gcd(*prods, *conss))
    return bounds


def _initialised_bounds(graph, ch, n) -> tuple[int, int]:
    """``(lower, step)`` of channel ``ch`` where an actor of it has initialisation
    phases (``n``: per actor its periodic phases), whose rates need not be multiples
    of the periodic ones' gcd: the step is the gcd ``g`` of every rate of the channel,
    initialisation phases included (tokens and space stay ≡ ``M0`` modulo ``g``, so a
    capacity acts as the largest below it ≡ ``M0``), and the lower bound the least
    capacity ≡ ``M0`` holding the initial tokens and every rate of a phase (a firing
    claims its tokens or its space whole).
    A self-loop: the capacity with which its actor's firings run one at a time, the
    most over its initialisation phases and one cycle of periodic ones of the tokens
    left before a firing plus those it writes (SDF3's ``p + max(c, M0)`` where every
    phase reads and writes ``p = c ≤ M0``)."""
    src, dst = graph.actors[ch.src].initial_phases, graph.actors[ch.dst].initial_phases
    prods = (src.rates("prod", ch.name) if src else ()) + \
        tuple(phase_value(ch.prod, k) for k in range(n[ch.src]))
    conss = (dst.rates("cons", ch.name) if dst else ()) + \
        tuple(phase_value(ch.cons, k) for k in range(n[ch.dst]))
    g = math.gcd(*prods, *conss)
    if ch.src == ch.dst:
        return _loop_capacity(prods, conss, ch.delay), g
    need = max(ch.delay, *prods, *conss)
    return ch.delay + -(-(need - ch.delay) // g) * g, g


def _loop_capacity(prods, conss, tokens) -> int:
    """The capacity of a self-loop with which its actor's firings run one at a time:
    the most, over the phases ``(p, c)`` a firing goes through in turn from ``tokens``
    initial tokens, of the tokens left before a firing plus those it writes (a firing
    holds what it reads and claims what it writes until it ends).  SDF3's ``p +
    max(c, M0)`` where every phase reads and writes ``p = c ≤ M0``; SDF3 takes the
    least of that over a cyclo-static loop's phases, a capacity with which a phase
    that writes more than the least may never fire."""
    most = 0
    for p, c in zip(prods, conss):
        most, tokens = max(most, tokens + p), tokens + p - c
    return most


def bounded_graph(graph: SDFGraph, capacities: Mapping[str, int]) -> SDFGraph:
    """``graph`` with a back-edge per channel named in ``capacities``: from its consumer
    to its producer, ``prod`` and ``cons`` swapped, ``capacity − delay`` initial tokens,
    ``size = 0`` (it carries no data) and attribute :data:`SPACE_OF` naming the channel.
    The back-edge is called ``NAME_space`` (with a number added if that is taken).  An
    actor's initialisation phases claim and free space as its periodic ones do: they
    read on a back-edge what they write on its channel, and write what they read."""
    out = SDFGraph(graph.name, graph.params, graph.origin)
    out.actors.update(graph.actors)
    out.channels.update(graph.channels)
    spaces = {}
    for name, capacity in capacities.items():
        ch = graph.channels[name]
        space = capacity - ch.delay
        if space < 0:
            raise SDFError(f"channel '{name}': a capacity of {capacity} tokens is below its "
                           f"{ch.delay} initial tokens", ch.origin)
        label, n = f"{name}_space", 1
        while label in out.channels:
            n += 1
            label = f"{name}_space{n}"
        out.channels[label] = Channel(label, ch.dst, ch.src, ch.cons, ch.prod, space, 0,
                                      MappingProxyType({SPACE_OF: name}), ch.origin)
        spaces[label] = ch
    for a, actor in graph.actors.items():
        init = actor.initial_phases
        if init is None:
            continue
        prod, cons = dict(init.prod), dict(init.cons)
        for label, ch in spaces.items():
            if ch.dst == a and ch.name in init.cons:
                prod[label] = init.cons[ch.name]
            if ch.src == a and ch.name in init.prod:
                cons[label] = init.prod[ch.name]
        out.actors[a] = replace(actor, initial_phases=InitialPhases(
            init.count, init.attrs, prod, cons))
    return out
