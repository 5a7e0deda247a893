"""The maximum cycle ratio of a weighted directed multigraph.

For edges ``(u, v, weight, height)`` the ratio of a cycle is ``Σweight / Σheight``; the
period of a timed event graph (weights: durations, heights: initial tokens) is the
maximum ratio over its cycles (Baccelli et al., *Synchronization and Linearity*, 1992).
"""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Hashable, Iterable, Sequence

import networkx as nx
import numpy as np

from moc.errors import SDFError


class UnboundedCycleError(SDFError):
    """A cycle whose heights sum to zero or less: no finite ratio bounds it (in a
    dataflow graph, a cycle without tokens, that is a deadlock). ``cycle`` names it."""

    def __init__(self, message, cycle, origin=None):
        super().__init__(message, origin)
        self.cycle = tuple(cycle)


@dataclass(frozen=True)
class CycleRatio:
    """``ratio``: the maximum of ``Σweight/Σheight`` over cycles (None without a cycle);
    ``cycle``: the nodes of one cycle attaining it, in cycle order."""

    ratio: Fraction | float | None
    cycle: tuple


def max_cycle_ratio(nodes: Iterable[Hashable],
                    edges: Iterable[Sequence]) -> CycleRatio:
    """The maximum over cycles of ``Σweight/Σheight`` and one cycle attaining it.

    ``edges`` are ``(u, v, weight, height)``; parallel edges and self-loops are allowed.
    Exact when weights and heights are integers or fractions (the ratio is then a
    :class:`~fractions.Fraction`), a float otherwise.  Every cycle must have a positive
    height sum: one with a sum of zero or less raises :class:`UnboundedCycleError`.
    Howard's policy iteration (Cochet-Terrasson, Cohen, Gaubert, McGettrick & Quadrat,
    1998), the fastest method in Dasdan's comparison (ACM TODAES 9(4), 2004), run on each
    strongly connected component.
    """
    nodes = list(dict.fromkeys(nodes))
    index = {n: i for i, n in enumerate(nodes)}
    edges = [tuple(e) for e in edges]
    for u, v, _, _ in edges:
        for end in (u, v):
            if end not in index:
                raise SDFError(f"max_cycle_ratio: edge endpoint {end!r} is not a node")
    exact = all(_exact(w) and _exact(h) for _, _, w, h in edges)
    number = _rational if exact else float
    arcs = [(index[u], index[v], number(w), number(h)) for u, v, w, h in edges]
    bad = _nonpositive_cycle(len(nodes), arcs, exact)
    if bad is not None:
        names = [nodes[i] for i in bad]
        raise UnboundedCycleError(
            f"the cycle {' -> '.join(map(str, names + names[:1]))} has a height sum of "
            f"zero or less: its ratio is unbounded (a cycle without tokens deadlocks)", names)
    unit = 1
    if exact:
        # integer weights and heights keep the potentials in integer arithmetic
        lw = math.lcm(*(Fraction(w).denominator for _, _, w, _ in arcs))
        lh = math.lcm(*(Fraction(h).denominator for _, _, _, h in arcs))
        arcs = [(u, v, int(w * lw), int(h * lh)) for u, v, w, h in arcs]
        unit = Fraction(lh, lw)
    best = CycleRatio(None, ())
    for component in _components(len(nodes), arcs):
        ratio, cycle = _howard(component, arcs, exact)
        ratio = ratio * unit
        if best.ratio is None or ratio > best.ratio:
            best = CycleRatio(ratio, tuple(nodes[i] for i in cycle))
    return best


def _exact(x) -> bool:
    return isinstance(x, (int, Fraction)) or (isinstance(x, numbers.Rational)
                                              and not isinstance(x, float))


def _rational(x):
    """``x`` as a Python int or Fraction (a numpy integer too, whose sums would not
    stay exact otherwise)."""
    return int(x) if isinstance(x, numbers.Integral) else Fraction(x)


def _components(n, arcs):
    """The strongly connected components that hold a cycle, each as a set of nodes."""
    graph = nx.DiGraph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((u, v) for u, v, _, _ in arcs)
    return [c for c in nx.strongly_connected_components(graph)
            if len(c) > 1 or graph.has_edge(next(iter(c)), next(iter(c)))]


def _nonpositive_cycle(n, arcs, exact):
    """A cycle (node list) whose heights sum to zero or less, or None."""
    if all(h > 0 for _, _, _, h in arcs):
        return None
    if all(h >= 0 for _, _, _, h in arcs):
        # only cycles of zero-height edges can sum to zero
        return _any_cycle(n, [(u, v) for u, v, _, h in arcs if h == 0])
    # Bellman-Ford on integer costs that are negative exactly on cycles of height ≤ 0:
    # a cycle of L ≤ n edges costs (n+1)·scale·Σh − L
    if exact:
        scale = math.lcm(*(Fraction(h).denominator for _, _, _, h in arcs))
        costs = [(u, v, int(Fraction(h) * scale) * (n + 1) - 1) for u, v, _, h in arcs]
    else:
        costs = [(u, v, h) for u, v, _, h in arcs]          # floats: Σh < 0 only
    return _negative_cycle(n, costs)


def _any_cycle(n, pairs):
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


def _negative_cycle(n, costs):
    """A cycle of negative cost, or None: Bellman-Ford with every edge relaxed at once
    (numpy; each round is a vector operation over the edges), from distance 0 at every
    node.  A cycle of the parent pointers is checked exactly and returned when it is
    negative; rounds go on until none is left to relax (no negative cycle) or one is
    found, which takes at most ``n`` rounds more once every distance has settled."""
    if not costs:
        return None
    u, v, c = (np.array(column) for column in zip(*costs))
    integral = all(isinstance(x, int) for x in (c.max(), c.min())) or \
        np.issubdtype(c.dtype, np.integer)
    # int64 where no path sum can overflow, else Python numbers in object arrays
    bound = (n + 1) * max(abs(int(c.min())), abs(int(c.max()))) if integral else 0
    kind = np.int64 if integral and bound < 2 ** 62 else (object if integral else float)
    u, v, c = u.astype(np.int64), v.astype(np.int64), c.astype(kind)
    distance = np.zeros(n, dtype=kind)
    parent = np.full(n, -1, dtype=np.int64)
    check = 8
    for rounds in range(1, 2 * n + 2):
        candidate = distance[u] + c
        lowered = distance.copy()
        np.minimum.at(lowered, v, candidate)
        changed = lowered < distance
        if not changed.any():
            return None
        attained = changed[v] & (candidate == lowered[v])
        parent[v[attained]] = u[attained]
        distance = lowered
        if rounds >= check or rounds > n:
            check *= 2
            cycle = _parent_cycle(parent, u, v, c)
            if cycle is not None:
                return cycle
    raise AssertionError("Bellman-Ford found no negative cycle in 2n + 1 rounds")


def _parent_cycle(parent, u, v, c):
    """A cycle of the parent pointers whose cost (the cheapest edge of each step) is
    negative, or None: pointer doubling sends every node onto a cycle or a root."""
    n = len(parent)
    nodes = np.arange(n)
    step = np.where(parent < 0, nodes, parent)
    reach = step.copy()
    for _ in range(max(1, int(n).bit_length())):
        reach = reach[reach]
    for node in np.unique(reach[parent[reach] >= 0]):
        cycle, here = [int(node)], int(step[node])
        while here != node and len(cycle) <= n:
            cycle.append(here)
            here = int(step[here])
        if here != node:
            continue
        cycle.reverse()                                     # parents point backwards
        cost = 0
        for a, b in zip(cycle, cycle[1:] + cycle[:1]):
            cost += c[(u == a) & (v == b)].min()
        if cost < 0:
            return cycle
    return None


def _howard(component, arcs, exact):
    """Howard's policy iteration on one strongly connected component: each node keeps
    one out-edge (the policy); the cycles of the policy graph give ratios ``eta`` and
    potentials ``x`` (``x[u] = w - eta·h + x[v]`` along the policy); a node switches to
    an edge reaching a larger ``eta``, else to one improving ``x``, until none does.
    With integer weights and heights, ``eta = N/D`` and the potentials are kept as the
    integers ``D·x``."""
    out = {u: [] for u in component}
    for u, v, w, h in arcs:
        if u in component and v in component:
            out[u].append((v, w, h))
    tol = 0 if exact else 1e-9 * (1 + max(abs(w) for _, _, w, _ in arcs))
    # start from the heaviest edge of each node (Dasdan, 2004)
    policy = {u: max(out[u], key=lambda e: e[1]) for u in out}
    eta, x = {}, {}
    while True:
        eta, nd, x, cycles = _values(policy, eta, x, exact)
        switched = False
        for u, choices in out.items():
            best = max(choices, key=lambda e: eta[e[0]])
            if eta[best[0]] > eta[u] + tol:
                policy[u] = best
                switched = True
        if not switched:
            for u, choices in out.items():
                (n, d), best, value = nd[u], None, x[u]
                for e in choices:
                    v, w, h = e
                    if (nd[v] == nd[u]) if exact else abs(eta[v] - eta[u]) <= tol:
                        candidate = w * d - n * h + x[v]
                        if candidate > value + tol:
                            best, value = e, candidate
                if best is not None:
                    policy[u] = best
                    switched = True
        if not switched:
            root = max(cycles, key=lambda r: eta[r])
            return eta[root], cycles[root]


def _values(policy, eta_before, x_before, exact):
    """Ratios ``eta`` (also as ``(N, D)``: ``(eta, 1)`` for floats) and potentials
    ``D·x`` of the policy graph, and its cycles keyed by a root node.  A cycle that
    stays keeps the potential of its root (its smallest node): values then only grow,
    so no policy comes back and the iteration ends (Cochet-Terrasson et al. 1998)."""
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
            weight = sum(policy[u][1] for u in cycle)
            height = sum(policy[u][2] for u in cycle)
            ratio = Fraction(weight, height) if exact else weight / height
            n, d = (ratio.numerator, ratio.denominator) if exact else (ratio, 1)
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
