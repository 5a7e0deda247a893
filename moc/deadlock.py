"""Deadlock: can one iteration execute from the initial tokens?"""
from __future__ import annotations

from collections import deque

from moc.errors import DeadlockError
from moc.graph import SDFGraph
from moc.repetition import repetition_vector


def firing_sequence(graph: SDFGraph, q: dict[str, int] | None = None) -> list[tuple[str, int]]:
    """A sequential schedule of one iteration as ``(actor, n)`` runs: ``actor`` fires
    ``n`` times in a row.

    An actor fires as often as its inputs allow, bounded by what remains of ``q``; only
    the consumers of channels that received tokens are looked at again, so the work is
    proportional to the number of runs times the degree, not to the number of firings.
    Raises :class:`DeadlockError` naming the actors that cannot complete the iteration.
    """
    q = repetition_vector(graph) if q is None else q
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
                # A consistent self-loop has prod == cons: it only needs enough to start.
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
    blocked = [a for a in graph.actors if remaining[a] > 0]
    if blocked:
        names = ", ".join(f"'{a}'" for a in blocked)
        starving = sorted({ch.name for a in blocked for ch in inputs[a] if tokens[ch.name] < ch.cons})
        raise DeadlockError(
            f"deadlock: actors {names} cannot complete one iteration "
            f"(not enough initial tokens on {', '.join(starving)})",
            blocked, graph.actors[blocked[0]].origin)
    return sequence


def check_deadlock(graph: SDFGraph, q: dict[str, int] | None = None) -> None:
    """Raise :class:`DeadlockError` if one iteration cannot execute."""
    firing_sequence(graph, q)
