"""The whole iteration's Howard iteration started from the ``K`` before it (issue 42).

A cyclo-static graph's whole iteration (:mod:`moc.csdf_kperiodic`) is one large
constraint graph whose float policy iteration took 90-105 steps from the heaviest
edges on seed 24's ``g0049`` and ``g0077`` and seed 28's ``g0019``.  The graph of a
smaller ``K`` is its folding: firing ``j`` of an actor's whole pattern is firing
``j mod K_t·n_t`` of the smaller one, and each edge of the whole graph goes along the
same channel (or the same step of the actor's own order) between the folded firings.
So the smaller graph's final policy, unfolded (:func:`preferred`), is a start close to
the end: 4-17 steps there.

The start changes the float steps, not the answer: the ratio is certified exactly
and the printed cycle is chosen among the tight edges by a rule of its own
(:mod:`moc.critical_cycle`), so a warm start applies wherever the graph is large.
"""
from __future__ import annotations

#: nodes and edges of a constraint graph from which its iteration is warmed up
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
    """The final float policy of the constraint graph ``found`` (the ``critical`` of
    :func:`moc.cycle_ratio.max_cycle_ratio_arrays`): kept from its solve on arrays,
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
