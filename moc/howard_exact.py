"""Howard's policy iteration in exact rationals on Python dictionaries, one strongly
connected component at a time: the last resort of
:func:`moc.cycle_ratio.max_cycle_ratio_arrays` where rounding spoiled the float
iteration and int64 cannot hold the exact steps from it."""
from __future__ import annotations

from fractions import Fraction


def howard(component, arcs, exact):
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
        # exact ratios by rank among the few distinct ones, keyed by (N, D): same order
        ranks = exact and {t: i for i, t in enumerate(sorted(set(nd.values()),
                                                             key=lambda t: Fraction(*t)))}
        rank = {u: ranks[t] for u, t in nd.items()} if exact else eta
        switched = False
        for u, choices in out.items():
            best = max(choices, key=lambda e: rank[e[0]])
            if rank[best[0]] > rank[u] + tol:
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
