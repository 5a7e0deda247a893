"""The whole iteration's Howard iteration started from the ``K`` before it (issue 42).

A cyclo-static graph's whole iteration (:mod:`moc.csdf_kperiodic`) is one large
constraint graph whose float policy iteration took 90-105 steps from the heaviest
edges on seed 24's ``g0049`` and ``g0077`` and seed 28's ``g0019``.  The graph of a
smaller ``K`` is its folding: firing ``j`` of an actor's whole pattern is firing
``j mod K_t·n_t`` of the smaller one, and each edge of the whole graph goes along the
same channel (or the same step of the actor's own order) between the folded firings.
So the smaller graph's final policy, unfolded (:func:`preferred`), is a start close to
the end: 4-17 steps there.

Howard's float steps decide which of equally critical cycles comes out, and the cycle
is printed.  A warm start keeps the printed answer only where every critical cycle
prints alike (:func:`alike`); elsewhere the caller solves again from the heaviest
edges, as before.
"""
from __future__ import annotations

#: nodes and edges of a whole iteration from which its iteration is warmed up: below,
#: a second solve where the check fails costs more than the steps saved
WARM_SIZE = 100_000


def classes(found):
    """Per node of the constraint graph ``found`` (a ``_Constraints``) its place in
    the folding (actor, start or end, firing), and per edge its kind: 0-3 an actor's
    own order (start to start, to end, end to end), ``4 + c`` channel ``c``."""
    import numpy as np
    actor = np.asarray(found.actor, dtype=np.int64)
    j = np.asarray(found.j, dtype=np.int64)
    size = np.array([found.size[a] for a in found.actors], dtype=np.int64)
    kinds = len(actor) // int(size.sum())
    base = np.concatenate(([0], np.cumsum(kinds * size)[:-1]))
    end = (np.arange(len(actor)) - base[actor]) // size[actor]
    u = np.asarray(found.u, dtype=np.int64)
    v = np.asarray(found.v, dtype=np.int64)
    channel = found.channel_of(np.arange(len(u)))
    kind = np.where(channel < 0, 2 * end[u] + end[v], 4 + channel)
    return actor, end, j, base, size, u, v, kind


def critical_of(found):
    """``(tight, policy)`` of the constraint graph ``found`` solved (the ``critical``
    of :func:`moc.cycle_ratio.max_cycle_ratio_arrays`): kept from its solve on arrays,
    else solved on arrays (small, or not solved); None off one component."""
    if hasattr(found, "critical"):
        return found.critical
    import numpy as np
    from moc.cycle_ratio import integer_array, max_cycle_ratio_arrays
    from moc.errors import UnboundedCycleError
    critical = []
    try:
        found.solved = max_cycle_ratio_arrays(
            len(found.actor), np.array(found.u, dtype=np.int64),
            np.array(found.v, dtype=np.int64), integer_array(found.w),
            integer_array(found.h), critical=critical)[0]
    except UnboundedCycleError:
        return None
    return critical[0] if critical else None


def preferred(before, policy, whole):
    """The mask of ``whole``'s edges that unfold ``policy`` (per node its edge) of the
    constraint graph ``before`` (a smaller ``K`` of the same component): the edges
    whose tail, kind and head fold onto a node's chosen edge there."""
    actor, end, j, base, size, u, v, kind = classes(before)
    head, chosen = v[policy], kind[policy]
    w_actor, w_end, w_j, _, _, wu, wv, w_kind = classes(whole)
    folded = base[w_actor] + w_end * size[w_actor] + w_j % size[w_actor]
    tail = folded[wu]
    return (w_kind == chosen[tail]) & (folded[wv] == head[tail])


def alike(found, tight):
    """Whether every cycle of the edges ``tight`` of ``found`` (a mask; the edges of a
    critical cycle are tight under exact potentials, so every critical cycle lies
    there) is printed alike: the same channels (per step the first tight edge, as
    ``found.steps`` takes it) and the same actors in the same order.  So it is where
    every cycle passes every channel met there (none is left acyclic without one) and
    those channels, self-loops aside, join their actors in one simple circuit.  Those
    channels (numbers) where so, else None."""
    import numpy as np
    from moc.cycle_ratio import has_cycle, strong_labels
    e = np.flatnonzero(tight)
    u = np.asarray(found.u)[e]
    order = np.argsort(u, kind="stable")
    e, u = e[order], u[order]
    v = np.asarray(found.v)[e]
    n = len(found.actor)
    label = strong_labels(n, u, v, by_tail=True)
    size = np.bincount(label)
    inside = (label[u] == label[v]) & ((size[label[u]] > 1) | (u == v))
    e, u, v = e[inside], u[inside], v[inside]
    if not len(e):
        return None
    # per step (a pair of nodes) its first tight edge, the one printed
    key = u * n + v
    order = np.argsort(key, kind="stable")
    key, e = key[order], e[order]
    first = np.concatenate(([True], key[1:] != key[:-1]))
    key, e = key[first], e[first]
    nodes = np.unique(key // n)
    u, v = np.searchsorted(nodes, key // n), np.searchsorted(nodes, key % n)
    channel = found.channel_of(e)
    met = np.unique(channel[channel >= 0]).tolist()
    for c in met:
        keep = channel != c
        if has_cycle(len(nodes), u[keep], v[keep]):
            return None
    circuit = [found.channels[c] for c in met if found.channels[c].src !=
               found.channels[c].dst]
    if not circuit:
        actors = np.asarray(found.actor)[nodes]
        return met if actors.min() == actors.max() else None
    after = {ch.src: ch.dst for ch in circuit}
    if len(after) < len(circuit) or set(after.values()) != set(after):
        return None
    here, seen = circuit[0].src, 0
    while True:
        here, seen = after[here], seen + 1
        if here == circuit[0].src:
            return met if seen == len(circuit) else None


def likely(found, critical) -> bool:
    """Whether a warm start from the solved constraint graph ``found`` (``critical``:
    :func:`critical_of` it) is worth trying on a larger ``K``: its own critical cycles
    print alike, and through no self-loop, whose edges run beside the actor's own
    order (Kiter's autogen5: at the whole iteration a critical cycle through each of
    its five self-loops and one around them, 32 warm steps lost)."""
    met = alike(found, critical[0]) if critical and critical[0] is not None else None
    return met is not None and all(found.channels[c].src != found.channels[c].dst
                                   for c in met)
