"""Expansion of an SDF graph into its homogeneous (single-rate) equivalent."""
from __future__ import annotations

from moc.errors import ExpansionTooLargeError
from moc.graph import SDFGraph
from moc.repetition import repetition_vector

DEFAULT_MAX_FIRINGS = 100_000


def hsdf_expansion(graph: SDFGraph, max_firings: int = DEFAULT_MAX_FIRINGS) -> SDFGraph:
    """The HSDF graph with one actor ``a#k`` per firing ``k`` of ``a`` in an iteration.

    Token ``n`` (counting the ``delay`` initial tokens first) of channel ``e`` is written
    by firing ``(n - delay) // prod`` of its producer, possibly of an earlier iteration,
    and read by firing ``n // cons`` of its consumer: an edge joins them, carrying one
    initial token per iteration boundary crossed (Sriram & Bhattacharyya, ch. 3).  Parallel
    edges between the same firings are merged, keeping the largest delay that matters
    (the smallest one).  Refuses with :class:`ExpansionTooLargeError` past ``max_firings``.
    """
    q = repetition_vector(graph)
    total = sum(q.values())
    if total > max_firings:
        raise ExpansionTooLargeError(
            f"HSDF expansion of '{graph.name}' would have {total} firings, more than the "
            f"limit of {max_firings}; raise the limit to expand it")
    h = SDFGraph(f"{graph.name}_hsdf")
    for actor in graph.actors.values():
        for k in range(q[actor.name]):
            h.add_actor(f"{actor.name}#{k}", **dict(actor.attrs))
    edges: dict[tuple[str, str, str], int] = {}
    for ch in graph.channels.values():
        consumed = q[ch.dst] * ch.cons
        for n in range(consumed):
            reader = n // ch.cons
            produced_index = n - ch.delay
            iterations_back, index = divmod(produced_index, q[ch.src] * ch.prod)
            writer = index // ch.prod
            key = (ch.name, f"{ch.src}#{writer}", f"{ch.dst}#{reader}")
            delay = -iterations_back
            edges[key] = min(edges.get(key, delay), delay)
    for (name, src, dst), delay in edges.items():
        h.add_channel(src, dst, name=f"{name}:{src}->{dst}", delay=delay,
                      size=graph.channels[name].size)
    return h
