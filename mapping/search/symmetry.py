"""Interchangeable PEs: classes of PEs that any permutation can exchange without changing
the value of any mapping, and the canonical mappings that represent each orbit.

Two PEs ``p`` and ``q`` are *interchangeable* when an automorphism of the architecture
graph swaps them, fixes every other PE and preserves the labels of all elements (kind,
cost models, attributes, ``local`` CN) — found with networkx's VF2 matcher, so that
CNs may move too (two accelerators with private stores) — and when the CN routes of
every PE pair map onto the routes of the swapped pair (checked on the route table, so
that name-based tie-breaking of routes never breaks the symmetry), and when the search
constraints treat them alike.  Transpositions compose, so the relation is an
equivalence whose classes carry the full symmetric group: a mapping is canonical when,
within each class, the PEs appear in first use (actor order) as the class's first,
second, ... member — a restricted-growth string per class.
"""
from __future__ import annotations

import networkx as nx
import numpy as np
from networkx.algorithms.isomorphism import DiGraphMatcher


def _label(element) -> tuple:
    costs = tuple(sorted((m, repr(model)) for m, model in element.costs.items()))
    attrs = tuple(sorted((k, repr(v)) for k, v in element.attrs.items()))
    return (element.kind, costs, attrs)


def _memories(arch) -> set[str]:
    out = set()
    for e in arch.elements.values():
        for model in e.costs.values():
            memory = getattr(getattr(model, "params", None), "memory", None)
            if isinstance(memory, str):
                out.add(memory)
    return out


def _graph(arch) -> nx.DiGraph:
    g = nx.DiGraph()
    memories = _memories(arch)
    for e in arch.elements.values():
        # a CN named as some model's memory must stay in place
        label = ("memory", e.name) if e.name in memories else _label(e)
        g.add_node(e.name, label=label)
    for a, b in arch.links:
        g.add_edge(a, b, kind="link")
        g.add_edge(b, a, kind="link")
    for e in arch.elements.values():
        if e.local:
            # a PE's own store: a directed edge distinct from links
            kind = "link+local" if g.has_edge(e.name, e.local) else "local"
            g.add_edge(e.name, e.local, kind=kind)
    return g


def _swap_automorphism(g: nx.DiGraph, pes: list[str], p: str, q: str) -> dict | None:
    """An automorphism swapping ``p`` and ``q`` and fixing every other PE, or None."""
    g1, g2 = g.copy(), g.copy()
    for h, (x, y) in ((g1, (p, q)), (g2, (q, p))):
        for name in pes:
            h.nodes[name]["label"] = ("fixed", name)
        base = g.nodes[p]["label"]
        h.nodes[x]["label"] = ("X", base)
        h.nodes[y]["label"] = ("Y", base)
    matcher = DiGraphMatcher(g1, g2, node_match=lambda a, b: a["label"] == b["label"],
                             edge_match=lambda a, b: a["kind"] == b["kind"])
    if matcher.is_isomorphic():
        return dict(matcher.mapping)
    return None


def interchangeable_classes(problem, route: np.ndarray, unroutable: np.ndarray,
                            allowed: np.ndarray, traffic: tuple = ()) -> list[list[int]]:
    """Classes of interchangeable PEs as lists of PE indices (singletons included),
    ordered by their first member.  ``route``/``unroutable`` (and the ``traffic`` tables)
    are those of :class:`~mapping.evaluation.batch.CostTables`; ``allowed`` the search mask."""
    arch = problem.arch
    pes, cns = arch.pes, arch.cns
    P = len(pes)
    cn_index = {k: i for i, k in enumerate(cns)}
    g = _graph(arch)
    labels = [g.nodes[p]["label"] for p in pes]
    parent = list(range(P))

    def find(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    reps: list[int] = []
    for q in range(P):
        for r in reps:
            if labels[r] != labels[q] or not np.array_equal(allowed[:, r], allowed[:, q]):
                continue
            sigma = _swap_automorphism(g, pes, pes[r], pes[q])
            if sigma is None or not _routes_commute(sigma, pes, cn_index, route, unroutable,
                                                     r, q, traffic):
                continue
            parent[q] = find(r)
            break
        else:
            reps.append(q)
    classes: dict[int, list[int]] = {}
    for i in range(P):
        classes.setdefault(find(i), []).append(i)
    return sorted(classes.values(), key=lambda c: c[0])


def _routes_commute(sigma, pes, cn_index, route, unroutable, p, q, traffic=()) -> bool:
    P = len(pes)
    perm = np.arange(P)
    perm[p], perm[q] = q, p
    cn_perm = np.array([cn_index[sigma[k]] for k in cn_index], dtype=np.intp) \
        if cn_index else np.zeros(0, dtype=np.intp)
    s, d = np.divmod(np.arange(P * P), P)
    moved = perm[s] * P + perm[d]
    # route(π s, π d) must be σ(route(s, d)) for every pair
    permuted = np.zeros_like(route)
    permuted[:, cn_perm] = route
    ok = np.array_equal(route[moved], permuted) and np.array_equal(unroutable[moved],
                                                                    unroutable)
    for table in traffic:       # (P, C) memory-traffic costs of each PE on each CN
        shifted = np.zeros_like(table)
        shifted[:, cn_perm] = table
        ok = ok and np.array_equal(table[perm], shifted)
    return bool(ok)


class Canonical:
    """Enumeration of canonical mappings (one per orbit) in lexicographic row order."""

    def __init__(self, classes: list[list[int]], allowed: np.ndarray):
        P = allowed.shape[1]
        self.allowed = allowed
        self.n_actors = allowed.shape[0]
        self.cls = np.zeros(P, dtype=np.intp)
        self.rank = np.zeros(P, dtype=np.intp)
        self.sizes = np.array([len(c) for c in classes], dtype=np.intp)
        for k, members in enumerate(classes):
            for r, p in enumerate(members):
                self.cls[p], self.rank[p] = k, r
        self.classes = classes

    def count(self, prefix_depth: int | None = None) -> int:
        """How many canonical mappings there are (dynamic programming on the number of
        members used per class)."""
        depth = self.n_actors if prefix_depth is None else prefix_depth
        states = {tuple([0] * len(self.classes)): 1}
        for a in range(depth):
            nxt: dict[tuple, int] = {}
            for u, n in states.items():
                for p in np.flatnonzero(self.allowed[a]):
                    k, r = self.cls[p], self.rank[p]
                    if r < u[k]:
                        nxt[u] = nxt.get(u, 0) + n
                    elif r == u[k]:
                        v = list(u)
                        v[k] += 1
                        v = tuple(v)
                        nxt[v] = nxt.get(v, 0) + n
            states = nxt
        return sum(states.values())

    def start(self):
        return (np.zeros((1, 0), dtype=np.intp),
                np.zeros((1, len(self.classes)), dtype=np.intp))

    def expand(self, X: np.ndarray, U: np.ndarray):
        """All canonical one-actor extensions of the partial mappings ``X`` (state ``U``:
        members used per class), ordered by parent then PE."""
        a = X.shape[1]
        parts = []
        for p in np.flatnonzero(self.allowed[a]):
            k, r = self.cls[p], self.rank[p]
            ok = np.flatnonzero(U[:, k] >= r)
            if len(ok):
                parts.append((ok, p, k, r))
        if not parts:
            return X[:0].copy(), U[:0].copy()
        parent = np.concatenate([ok for ok, *_ in parts])
        pe = np.concatenate([np.full(len(ok), p, dtype=np.intp) for ok, p, *_ in parts])
        order = np.lexsort((pe, parent))
        parent, pe = parent[order], pe[order]
        Xn = np.empty((len(parent), a + 1), dtype=np.intp)
        Xn[:, :a] = X[parent]
        Xn[:, a] = pe
        Un = U[parent].copy()
        k, r = self.cls[pe], self.rank[pe]
        grow = Un[np.arange(len(pe)), k] == r
        Un[np.flatnonzero(grow), k[grow]] += 1
        return Xn, Un

    def prefixes(self, depth: int):
        """Canonical partial mappings of the first ``depth`` actors with their states."""
        X, U = self.start()
        for _ in range(depth):
            X, U = self.expand(X, U)
        return X, U

    def batches(self, X=None, U=None, batch: int = 65536):
        """Complete canonical mappings extending ``X`` (default: the empty prefix), in
        lexicographic order, in arrays of at most ``batch`` rows (depth-first, so memory
        stays bounded)."""
        if X is None:
            X, U = self.start()
        buf, size = [], 0
        for block in self._walk(X, U, batch):
            buf.append(block)
            size += len(block)
            if size >= batch:
                yield np.concatenate(buf)
                buf, size = [], 0
        if buf:
            yield np.concatenate(buf)

    def _walk(self, X, U, batch):
        if X.shape[1] == self.n_actors:
            yield X
            return
        Xn, Un = self.expand(X, U)
        for i in range(0, len(Xn), batch):
            yield from self._walk(Xn[i:i + batch], Un[i:i + batch], batch)
