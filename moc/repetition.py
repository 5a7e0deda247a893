"""Consistency and the repetition vector of an SDF graph (Lee & Messerschmitt, 1987)."""
from __future__ import annotations

import math
from collections import deque
from fractions import Fraction

from moc.errors import InconsistentGraphError
from moc.graph import SDFGraph


def repetition_vector(graph: SDFGraph) -> dict[str, int]:
    """The smallest positive integers ``q`` with ``prod(e)·q(src) = cons(e)·q(dst)``.

    Solved exactly with fractions, one connected component at a time (each component is
    scaled to its own smallest integer solution).  ``graph`` must be bound (integer rates).
    Raises :class:`InconsistentGraphError` naming a channel whose balance equation fails.
    """
    incident: dict[str, list] = {name: [] for name in graph.actors}
    for ch in graph.channels.values():
        incident[ch.src].append(ch)
        incident[ch.dst].append(ch)

    q: dict[str, int] = {}
    for component in graph.components():
        root = component[0]
        rate = {root: Fraction(1)}
        queue = deque([root])
        while queue:
            actor = queue.popleft()
            for ch in incident[actor]:
                # Balance equation: prod·q(src) = cons·q(dst).
                if ch.src == actor:
                    other, value = ch.dst, rate[actor] * ch.prod / ch.cons
                else:
                    other, value = ch.src, rate[actor] * ch.cons / ch.prod
                if other not in rate:
                    rate[other] = value
                    queue.append(other)
                elif rate[other] != value:
                    _raise_inconsistent(ch, rate)
        scale = math.lcm(*(r.denominator for r in rate.values()))
        ints = {a: int(r * scale) for a, r in rate.items()}
        divisor = math.gcd(*ints.values())
        for actor in component:
            q[actor] = ints[actor] // divisor
    return q


def _raise_inconsistent(ch, rate):
    ratio = rate[ch.dst] / rate[ch.src]
    raise InconsistentGraphError(
        f"inconsistent graph: the balance equation of channel '{ch.name}' "
        f"({ch.src} -> {ch.dst}, prod={ch.prod}, cons={ch.cons}) fails: the other channels "
        f"require q({ch.dst})/q({ch.src}) = {ratio}, but this one requires "
        f"{Fraction(ch.prod, ch.cons)}",
        ch.name, ch.origin)
