"""Expansion of an SDF graph into its homogeneous (single-rate) equivalent."""
from __future__ import annotations

from types import MappingProxyType

from moc import limits
from moc.errors import ExpansionTooLargeError
from moc.graph import Channel, SDFGraph
from moc.phases import Cumulative, is_phased, phase_counts, phase_value
from moc.record import replace
from moc.repetition import repetition_vector


def firing_name(actor: str, k: int) -> str:
    """``"actor#k"``: the name of firing ``k`` (from 0) of ``actor``, an actor of the
    HSDF expansion and a row of a schedule."""
    return f"{actor}#{k}"


def firing_actor(name: str) -> str:
    """The actor of the firing named ``name`` by :func:`firing_name` (an actor's own
    name may hold ``#``: the index is what follows the last)."""
    return name.rpartition("#")[0]


def channel_label(channel: str, src: str, dst: str) -> str:
    """``"channel:src->dst"``: the label of the edge of the HSDF expansion from firing
    ``src`` to firing ``dst`` that ``channel`` of the SDF graph gives."""
    return f"{channel}:{src}->{dst}"


def channel_of(label: str, src: str, dst: str) -> str:
    """The SDF channel of the HSDF edge ``label`` from firing ``src`` to ``dst`` (its
    name may hold ``:`` and ``->``: what :func:`channel_label` put after it is cut)."""
    return label[:len(label) - len(channel_label("", src, dst))]


def token_writer(token, prod, delay):
    """The producer firing that writes token ``token`` of a channel of rate ``prod``
    and ``delay`` initial tokens, the initial tokens counted first: ``⌊(n − M0)/p⌋``, an
    earlier iteration's firing where negative (Sriram & Bhattacharyya, ch. 3); Python
    integers or numpy arrays alike."""
    return (token - delay) // prod


def check_expansion_size(graph: SDFGraph, q, max_firings: int | None = None) -> None:
    """Raise :class:`ExpansionTooLargeError` where one iteration has more firings than
    ``max_firings`` (default: ``moc.limits.MAX_FIRINGS`` when called)."""
    total = sum(q.values())
    limit = limits.MAX_FIRINGS if max_firings is None else max_firings
    if total > limit:
        raise ExpansionTooLargeError(
            f"HSDF expansion of '{graph.name}' would have {total} firings", "firings",
            limit, graph.origin)


def hsdf_expansion(graph: SDFGraph, max_firings: int | None = None) -> SDFGraph:
    """The HSDF graph with one actor ``a#k`` (:func:`firing_name`) per firing ``k`` of
    ``a`` in an iteration (of a cyclo-static actor, one per phase of each cycle, with that
    phase's attributes), and per edge a channel :func:`channel_label` names.

    Token ``n`` (counting the ``delay`` initial tokens first) of channel ``e`` is written
    by firing ``(n - delay) // prod`` of its producer, possibly of an earlier iteration,
    and read by firing ``n // cons`` of its consumer: an edge joins them, carrying one
    initial token per iteration boundary crossed (Sriram & Bhattacharyya, ch. 3).  Parallel
    edges between the same firings are merged, keeping the largest delay that matters
    (the smallest one).  Refuses with :class:`ExpansionTooLargeError` past ``max_firings``
    (default: ``moc.limits.MAX_FIRINGS`` when called).
    """
    q = repetition_vector(graph)
    check_expansion_size(graph, q, max_firings)
    h = SDFGraph(f"{graph.name}_hsdf")
    n = phase_counts(graph)
    # names are unique by construction, and the firings of an actor share its attributes
    # (those given per phase: the firing's phase's)
    for actor in graph.actors.values():
        phased = any(is_phased(v) for v in actor.attrs.values())
        for k in range(q[actor.name]):
            name = firing_name(actor.name, k)
            attrs = MappingProxyType({key: phase_value(v, k) for key, v in
                                      actor.attrs.items()}) if phased else actor.attrs
            h.actors[name] = replace(actor, name=name, attrs=attrs)
    edges: dict[tuple[str, str, str], int] = {}
    for ch in graph.channels.values():
        if is_phased(ch.prod) or is_phased(ch.cons):
            _phased_edges(ch, q, n, edges)
            continue
        # reader r reads tokens r·cons .. (r+1)·cons - 1, written by the producer firings
        # (n - delay) // prod, counted across iterations: one pass per (writer, reader) pair
        for reader in range(q[ch.dst]):
            first = token_writer(reader * ch.cons, ch.prod, ch.delay)
            last = token_writer((reader + 1) * ch.cons - 1, ch.prod, ch.delay)
            for firing in range(first, last + 1):
                iterations_back, writer = divmod(firing, q[ch.src])
                key = (ch.name, firing_name(ch.src, writer), firing_name(ch.dst, reader))
                delay = -iterations_back
                edges[key] = min(edges.get(key, delay), delay)
    no_attrs = MappingProxyType({})
    for (name, src, dst), delay in edges.items():
        label = channel_label(name, src, dst)
        h.channels[label] = Channel(label, src, dst, delay=delay,
                                    size=graph.channels[name].size, attrs=no_attrs)
    return h


def _phased_edges(ch, q, n, edges):
    """The edges of a channel with rates per phase: reader ``ν`` reads tokens
    ``C(ν) .. C(ν+1) − 1``; token ``t`` (initial tokens first) is written by the least
    firing ``w`` with ``M0 + P(w + 1) > t``."""
    made, read = Cumulative(ch.prod, n[ch.src]), Cumulative(ch.cons, n[ch.dst])
    for reader in range(q[ch.dst]):
        low, high = read(reader), read(reader + 1)
        if high == low:
            continue
        first = made.writer(low + 1 - ch.delay)
        last = made.writer(high - ch.delay)
        for firing in range(first, last + 1):
            if phase_value(ch.prod, firing) == 0:
                continue
            iterations_back, writer = divmod(firing, q[ch.src])
            key = (ch.name, firing_name(ch.src, writer), firing_name(ch.dst, reader))
            edges[key] = min(edges.get(key, -iterations_back), -iterations_back)
