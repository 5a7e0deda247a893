"""Howard's policy iteration in exact rationals on Python lists and dictionaries, one
strongly connected component at a time: the maximum cycle ratio of a small graph
(:func:`max_cycle_ratio_lists`, where importing numpy would cost more than the whole
solve), and (:func:`exact_iteration`) the last resort of
:func:`moc.cycle_ratio.max_cycle_ratio_arrays` where rounding spoiled the float
iteration and int64 cannot hold the exact steps from it."""
from __future__ import annotations

import sys
from fractions import Fraction

from moc.critical_cycle import least_cycle
from moc.deadlock import tarjan
from moc.errors import UnboundedCycleError


#: the nodes and edges (or pairs of firings tried) up to which a K-periodic constraint
#: graph is made and solved on Python lists (:func:`max_cycle_ratio_lists`): numpy's
#: import (50 ms) costs more than such a graph's whole solve; and up to which where
#: numpy is already imported (the lists then cost 12 µs an edge, the arrays 9, on
#: graphs of 500-2,000 edges, against 3.2 and 3.6 ms a graph below 500)
SMALL_LISTS = 2_000
LOADED_LISTS = 500


def on_lists(work: int) -> bool:
    """Whether a constraint graph of ``work`` nodes and edges is made on lists."""
    return work <= (LOADED_LISTS if "numpy" in sys.modules else SMALL_LISTS)


def take(values, at) -> list:
    """``values[i]`` for each ``i`` of ``at`` as a list of Python numbers (``values``:
    a list or a numpy array)."""
    if isinstance(values, list):
        return [values[i] for i in at]
    import numpy as np
    return values[np.asarray(at, dtype=np.int64)].tolist()


def cycle_edge_list(u: list, v: list, cycle) -> list:
    """The positions of the edges ``u → v`` that join consecutive nodes of ``cycle``,
    ascending (:func:`moc.cycle_ratio.cycle_edges` on lists)."""
    cycle = list(cycle)
    steps = set(zip(cycle, cycle[1:] + cycle[:1]))
    return [e for e, step in enumerate(zip(u, v)) if step in steps]


def max_cycle_ratio_lists(n: int, u, v, w, h, least: bool = False) -> tuple:
    """:func:`moc.cycle_ratio.max_cycle_ratio_arrays` of integer weights and heights
    given as Python lists: the same ratio and cycle (the same starting policy, the same
    switches, and among equal ratios the cycle of least root; with ``least``,
    :func:`moc.critical_cycle.least_cycle` of the edges tight under the final exact
    potentials), by :func:`exact_iteration`."""
    if not u:
        return None, ()
    order = sorted(range(len(u)), key=u.__getitem__)       # by tail, stably
    u, v, w, h = ([x[e] for e in order] for x in (u, v, w, h))
    bad = _nonpositive_cycle(n, u, v, h)
    if bad is not None:
        raise UnboundedCycleError("a cycle of height sum zero or less", bad)
    tight = [] if least else None
    ratio, cycle = exact_iteration(n, u, v, w, h, tight)
    if least and ratio is not None:
        cycle = least_cycle(n, u, v, tight[-1])
    return ratio, cycle


def exact_iteration(n: int, u: list, v: list, w: list, h: list, tight=None) -> tuple:
    """``(ratio, cycle)`` by Howard's iteration in exact rationals (:func:`_iterate`)
    on each strongly connected component that holds a cycle, of integer weights and
    heights given as lists sorted by tail, every cycle of positive height: of the
    components in the order of their least roots the first of the largest ratio, its
    cycle of least root among those of that ratio; ``(None, ())`` without a cycle.  A
    list ``tight`` gets the mask of the edges tight under the final potentials inside
    the components of that ratio (where all its critical cycles lie)."""
    arcs = list(zip(u, v, w, h))
    label, components = _cyclic_components(n, u, v)
    found = []                     # per component: its least root, best ratio and cycle
    nd, x = {}, {}                 # per node (for ``tight``): its (N, D) and D·x
    for out in _out_edges(components, label, arcs):
        eta, cycles, nd_c, x_c = _iterate(out)
        roots = sorted(cycles)
        top = max(roots, key=eta.__getitem__)              # the least root of the best
        found.append((roots[0], eta[top], cycles[top], label[top]))
        if tight is not None:
            nd.update(nd_c)
            x.update(x_c)
    if not found:
        return None, ()
    # the components in the order of their least roots, the first of the best ratio
    _, ratio, cycle, _ = max(sorted(found, key=lambda f: f[0]), key=lambda f: f[1])
    if tight is not None:
        # one ratio over a component once no edge leads up
        top = {c for _, r, _, c in found if r == ratio}
        tight.append([label[a] == label[b] and label[a] in top
                      and x[a] == cw * nd[a][1] - nd[a][0] * ch + x[b]
                      for a, b, cw, ch in arcs])
    return ratio, cycle


def any_cycle(n, pairs):
    """A cycle (node list) of the graph of nodes ``0..n-1`` and edges ``pairs``, found
    by depth-first search from the least node, or None."""
    successors = [[] for _ in range(n)]
    for u, v in pairs:
        successors[u].append(v)
    state = [0] * n                                           # 0 new, 1 on path, 2 done
    for root in range(n):
        if state[root]:
            continue
        path, work = [root], [iter(successors[root])]
        state[root] = 1
        while work:
            for child in work[-1]:
                if state[child] == 1:
                    return path[path.index(child):]
                if state[child] == 0:
                    state[child] = 1
                    path.append(child)
                    work.append(iter(successors[child]))
                    break
            else:
                state[path.pop()] = 2
                work.pop()
    return None


def _components(n, pairs):
    """Per node its strongly connected component (a number) under the edges ``pairs``
    (tail and head)."""
    successors = [[] for _ in range(n)]
    for a, b in pairs:
        successors[a].append(b)
    label = [0] * n
    for number, component in enumerate(tarjan(range(n), successors)):
        for node in component:
            label[node] = number
    return label


def _cyclic_components(n, u, v):
    """:func:`_components` and the components that hold a cycle (those with an edge
    inside: two nodes or more, or a self-loop), each as a set of nodes, in the order
    of their least nodes."""
    label = _components(n, zip(u, v))
    cyclic = {label[a] for a, b in zip(u, v) if label[a] == label[b]}
    members: dict[int, set[int]] = {}
    for node, c in enumerate(label):
        if c in cyclic:
            members.setdefault(c, set()).add(node)
    return label, list(members.values())


def _nonpositive_cycle(n, u, v, h):
    """:func:`moc.cycle_ratio._nonpositive_cycle` on lists sorted by tail: a cycle of
    height sum zero or less, or None."""
    if all(x > 0 for x in h):
        return None
    if all(x >= 0 for x in h):
        # only cycles of zero-height edges can sum to zero: those inside their
        # strongly connected components hold every such cycle
        zero = [(a, b) for a, b, x in zip(u, v, h) if x == 0]
        label = _components(n, zero)
        kept = [(a, b) for a, b in zero if label[a] == label[b]]
        return any_cycle(n, kept) if kept else None
    # a cycle of mean height ≤ 0: the maximum cycle mean of −h (heights 1)
    ratio, cycle = max_cycle_ratio_lists(n, u, v, [-x for x in h], [1] * len(h))
    return list(cycle) if ratio is not None and ratio >= 0 else None


def _out_edges(components, label, arcs):
    """Per component of ``components`` (of ``label``) per node its edges ``(v, w, h)``
    inside it, in the order of ``arcs`` (one pass over them for all)."""
    outs = [{u: [] for u in component} for component in components]
    of = {label[next(iter(component))]: out for component, out in zip(components, outs)}
    for u, v, w, h in arcs:
        if label[u] == label[v] and label[u] in of:
            of[label[u]][u].append((v, w, h))
    return outs


def _iterate(out):
    """Howard's policy iteration on the out-edges ``out`` of a strongly connected
    component: each node keeps one out-edge (the policy); the cycles of the policy
    graph give ratios ``eta`` and potentials ``x`` (``x[u] = w - eta·h + x[v]`` along
    the policy); a node switches to an edge reaching a larger ``eta``, else to one
    improving ``x``, until none does.  With ``eta = N/D`` the potentials are kept as
    the integers ``D·x``.  The ratios of the final policy, its cycles by root, and the
    ratios as ``(N, D)`` and potentials ``D·x`` (:func:`_values`)."""
    # start from the heaviest edge of each node (Dasdan, 2004)
    policy = {u: max(out[u], key=lambda e: e[1]) for u in out}
    eta, x = {}, {}
    while True:
        eta, nd, x, cycles = _values(policy, eta, x)
        # ratios by rank among the few distinct ones, keyed by (N, D): the same order
        ranks = {t: i for i, t in enumerate(sorted(set(nd.values()),
                                                   key=lambda t: Fraction(*t)))}
        rank = {u: ranks[t] for u, t in nd.items()}
        switched = False
        for u, choices in out.items():
            best = max(choices, key=lambda e: rank[e[0]])
            if rank[best[0]] > rank[u]:
                policy[u] = best
                switched = True
        if not switched:
            for u, choices in out.items():
                (n, d), best, value = nd[u], None, x[u]
                for e in choices:
                    v, w, h = e
                    if nd[v] == nd[u]:
                        candidate = w * d - n * h + x[v]
                        if candidate > value:
                            best, value = e, candidate
                if best is not None:
                    policy[u] = best
                    switched = True
        if not switched:
            return eta, cycles, nd, x


def _values(policy, eta_before, x_before):
    """Ratios ``eta`` (also as ``(N, D)``) and potentials ``D·x`` of the policy graph,
    and its cycles keyed by a root node.  A cycle that stays keeps the potential of its
    root (its smallest node): values then only grow, so no policy comes back and the
    iteration ends (Cochet-Terrasson et al. 1998)."""
    eta, nd, x, cycles = {}, {}, {}, {}
    for start in policy:
        if start in eta:
            continue
        path, seen = [], {}
        node = start
        while node not in eta and node not in seen:
            seen[node] = len(path)
            path.append(node)
            node = policy[node][0]
        if node in seen:                                      # a new cycle
            cycle = path[seen[node]:]
            turn = cycle.index(min(cycle))
            cycle = cycle[turn:] + cycle[:turn]
            ratio = Fraction(sum(policy[u][1] for u in cycle),
                             sum(policy[u][2] for u in cycle))
            n, d = ratio.numerator, ratio.denominator
            root = cycle[0]
            same = eta_before.get(root) == ratio
            eta[root], nd[root], x[root] = ratio, (n, d), x_before[root] if same else 0
            cycles[root] = tuple(cycle)
            for u in reversed(cycle[1:]):
                v, w, h = policy[u]
                eta[u], nd[u], x[u] = ratio, (n, d), w * d - n * h + x[v]
            path = path[:seen[node]]
        for u in reversed(path):
            v, w, h = policy[u]
            (n, d) = nd[v]
            eta[u], nd[u], x[u] = eta[v], nd[v], w * d - n * h + x[v]
    return eta, nd, x, cycles
