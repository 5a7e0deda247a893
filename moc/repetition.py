"""Consistency and the repetition vector of an SDF graph (Lee & Messerschmitt, 1987)."""
from __future__ import annotations

import math
from collections import deque
from fractions import Fraction

from moc.errors import InconsistentGraphError
from moc.graph import SDFGraph
from moc.phases import cycle_total, phase_counts


def repetition_vector(graph: SDFGraph) -> dict[str, int]:
    """The smallest positive integers ``q`` with ``prod(e)·q(src) = cons(e)·q(dst)``.

    A cyclo-static actor of ``n`` phases completes whole cycles: with ``P(e)`` and
    ``C(e)`` the tokens of one cycle of its producer and consumer, the cycles ``r``
    solve ``P(e)·r(src) = C(e)·r(dst)`` and ``q(a) = n(a)·r(a)`` firings (Bilsen et al.
    1996); SDF is the case ``n = 1``.

    Solved exactly with fractions, one connected component at a time (each component is
    scaled to its own smallest integer solution).  ``graph`` must be bound (integer rates).
    Rates propagate along a spanning forest chosen in declaration order, so when the
    balance equations conflict, the channel reported is the first declared one that
    contradicts the channels before it.  Raises :class:`InconsistentGraphError`.
    """
    parent = {name: name for name in graph.actors}

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    tree: dict[str, list] = {name: [] for name in graph.actors}
    for ch in graph.channels.values():
        ra, rb = find(ch.src), find(ch.dst)
        if ra != rb:
            parent[ra] = rb
            tree[ch.src].append(ch)
            tree[ch.dst].append(ch)

    n = phase_counts(graph)
    totals = {ch.name: (cycle_total(ch.prod, n[ch.src]), cycle_total(ch.cons, n[ch.dst]))
              for ch in graph.channels.values()}
    # each actor's rate relative to its component's root: a fraction in lowest terms
    # (numerator, denominator), in integers (faster than Fraction)
    rate: dict[str, tuple[int, int]] = {}
    q: dict[str, int] = {}
    for component in graph.components():
        root = component[0]
        rate[root] = (1, 1)
        queue = deque([root])
        while queue:
            actor = queue.popleft()
            for ch in tree[actor]:
                # Balance equation: prod·q(src) = cons·q(dst).
                prod, cons = totals[ch.name]
                if ch.src == actor:
                    other, by, per = ch.dst, prod, cons
                else:
                    other, by, per = ch.src, cons, prod
                if other not in rate:
                    num, den = rate[actor]
                    num, den = num * by, den * per
                    common = math.gcd(num, den)
                    rate[other] = (num // common, den // common)
                    queue.append(other)
        scale = math.lcm(*(rate[a][1] for a in component))
        ints = [rate[a][0] * (scale // rate[a][1]) for a in component]
        divisor = math.gcd(*ints)
        for actor, value in zip(component, ints):
            q[actor] = value // divisor
    for ch in graph.channels.values():
        prod, cons = totals[ch.name]
        if prod * q[ch.src] != cons * q[ch.dst]:
            _raise_inconsistent(ch, rate, prod, cons)
    return {a: n[a] * cycles for a, cycles in q.items()}


def _raise_inconsistent(ch, rate, prod, cons):
    ratio = Fraction(*rate[ch.dst]) / Fraction(*rate[ch.src])
    raise InconsistentGraphError(
        f"inconsistent graph: the balance equation of channel '{ch.name}' "
        f"({ch.src} -> {ch.dst}, prod={ch.prod}, cons={ch.cons}) fails: the other channels "
        f"require q({ch.dst})/q({ch.src}) = {ratio}, but this one requires "
        f"{Fraction(prod, cons)}" + ("" if (prod, cons) == (ch.prod, ch.cons) else
                                     " (in cycles of phases)"),
        ch.name, ch.origin)
