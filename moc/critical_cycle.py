"""The critical cycle that is printed: one cycle of the critical subgraph, chosen by a
rule of its own rather than by the path of the policy iteration that found the ratio.

With ``λ = N/D`` the maximum cycle ratio and integer potentials ``y`` that certify it
(``y[u] ≥ w·D − N·h + y[v]`` on every edge, :func:`moc.cycle_ratio._certified`), a
cycle's costs ``w·D − N·h`` sum to zero, its ratio is ``λ``, iff each of its edges is
tight (an equality): the tight edges hold every critical cycle and every cycle among
them is critical (Baccelli et al., *Synchronization and Linearity*, 1992, the critical
graph).  Which other edges are tight depends on the potentials, but the strongly
connected parts of the tight edges do not: an edge inside one lies on a cycle of tight
edges, a critical cycle, tight under any certificate.

The rule (:func:`least_cycle`): the least node (by number) on a cycle of tight edges,
and from it a breadth-first search over the tight edges of its strongly connected part,
each node's successors visited in increasing order; the cycle closes at the first node
so reached that has a tight edge back.  So it is the shortest critical cycle through
that node, the first of those in that search, and the same whichever policy, start or
order of edges the ratio came from.  Linear in the tight edges: on Python lists for
a small graph (the nodes without an edge in taken away one after the other, the search
from the least one left, and Tarjan's components only where that search does not come
back), scipy's strong components and breadth-first order (in C) for a large one.
"""
from __future__ import annotations

import sys

#: tight edges from which the search runs in scipy rather than Python, and from which
#: where scipy's graph routines are already imported (importing them costs 0.15 s)
LARGE = 20_000
LOADED = 500


def least_cycle(n: int, u, v, tight=None) -> tuple:
    """The critical cycle of the rule above (node numbers, from the least) among the
    edges ``u[e] → v[e]`` of nodes ``0..n-1`` where the mask ``tight`` holds (all
    without one); ``()`` where they hold no cycle.  Lists or numpy arrays alike."""
    if isinstance(u, list):
        pairs = list(zip(u, v)) if tight is None else \
            [(a, b) for a, b, t in zip(u, v, tight) if t]
        return _on_lists(n, pairs)
    import numpy as np
    if tight is not None:
        u, v = u[tight], v[tight]
    if len(u) < (LOADED if "scipy.sparse.csgraph" in sys.modules else LARGE):
        return _on_lists(n, list(zip(u.tolist(), v.tolist())))
    return _on_arrays(n, np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64))


def holds_cycle(n: int, u, v) -> bool:
    """Whether the edges ``u[e] → v[e]`` of nodes ``0..n-1`` hold a cycle: on lists
    :func:`_left`; on numpy arrays, only edges whose tail has an edge in and whose
    head one out can lie on one, so a few rounds keep those, then :func:`least_cycle`
    of the nodes left, numbered anew (the search's size)."""
    if isinstance(u, list):
        return bool(_left(_successors(zip(u, v))))
    import numpy as np
    for _ in range(4):
        if not len(u):
            return False
        keep = (np.bincount(v, minlength=n) > 0)[u] & (np.bincount(u, minlength=n) > 0)[v]
        u, v = u[keep], v[keep]
    used = np.zeros(n, dtype=bool)
    used[u], used[v] = True, True
    local = np.cumsum(used) - 1
    return bool(least_cycle(int(used.sum()), local[u], local[v]))


def _on_lists(n, pairs):
    successors = _successors(pairs)
    left = _left(successors)
    if not left:
        return ()
    # the least node left is on a cycle where the search from it comes back (the usual
    # case: a policy's tight edges lead from its trees into its cycles), else Tarjan's
    # components tell the least one on a cycle
    return _searched(successors, min(left)) or \
        _searched(successors, _least_on_cycle(successors))


def _successors(pairs):
    successors: dict = {}
    for a, b in pairs:
        if a in successors:
            successors[a].append(b)
        else:
            successors[a] = [b]
    return successors


def _left(successors):
    """The nodes that keep an edge in once those without one are taken away, one
    after the other (Kahn, 1962): every node on a cycle, and a cycle wherever one is
    left."""
    into = dict.fromkeys(successors, 0)
    for heads in successors.values():
        for b in heads:
            if b in into:
                into[b] += 1
    free = [x for x, k in into.items() if not k]
    for x in free:
        for b in successors[x]:
            if b in into:
                into[b] -= 1
                if not into[b]:
                    free.append(b)
    return [x for x, k in into.items() if k] if len(free) < len(into) else []


def _least_on_cycle(successors):
    """The least node of a strongly connected part that holds a cycle (Tarjan)."""
    from moc.deadlock import tarjan
    nodes = sorted(successors)
    edges = {x: [b for b in successors[x] if b in successors] for x in nodes}
    return min(min(c) for c in tarjan(nodes, edges) if len(c) > 1 or c[0] in edges[c[0]])


def _searched(successors, start):
    """The cycle of the breadth-first search from ``start`` (each node's successors
    in increasing order) closed by the first node reached with an edge back, or
    ``()``.  The search need not keep to the start's strongly connected part: a node
    outside it reaches none with a way back, so the order of those inside is the same."""
    parent = {start: None}
    queue = [start]
    for here in queue:                                # first in, first out
        for there in sorted(successors.get(here, ())):
            if there == start:
                return _path(parent, here)
            if there not in parent:
                parent[there] = here
                queue.append(there)
    return ()


def _path(parent, last):
    path = [last]
    while parent[path[-1]] is not None:
        path.append(parent[path[-1]])
    return tuple(path[::-1])


def _on_arrays(n, u, v):
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import breadth_first_order, connected_components
    # each step once, by tail then head: the rows scipy reads, heads in increasing order
    key = np.sort(u * n + v)
    key = key[np.concatenate(([True], key[1:] != key[:-1]))]
    u, v = key // n, key % n
    index = np.int32 if max(n, len(u)) < 2 ** 31 else np.int64
    rows = np.zeros(n + 1, dtype=index)
    np.cumsum(np.bincount(u, minlength=n), out=rows[1:])
    graph = csr_matrix((np.ones(len(u)), v.astype(index), rows), shape=(n, n))
    label = connected_components(graph, directed=True, connection="strong")[1]
    on = np.bincount(label, minlength=n)[label] > 1
    on[u[u == v]] = True
    if not on.any():
        return ()
    start = int(np.argmax(on))
    # scipy's search: a queue, each row's heads in their order, a node's predecessor
    # the first to reach it (as :func:`_on_lists`); no node it reaches outside the
    # start's strongly connected part comes before one inside on a way back to it
    order, parent = breadth_first_order(graph, start, directed=True,
                                        return_predecessors=True)
    place = np.full(n, len(order), dtype=np.int64)
    place[order] = np.arange(len(order))
    back = u[v == start]
    last = int(back[np.argmin(place[back])])
    path = [last]
    while path[-1] != start:
        path.append(int(parent[path[-1]]))
    return tuple(path[::-1])
