"""The maximum cycle ratio of a weighted directed multigraph.

For edges ``(u, v, weight, height)`` the ratio of a cycle is ``Σweight / Σheight``; the
period of a timed event graph (weights: durations, heights: initial tokens) is the
maximum ratio over its cycles (Baccelli et al., *Synchronization and Linearity*, 1992).
"""
from __future__ import annotations

import math
import numbers
import sys
from collections.abc import Hashable, Iterable, Sequence
from fractions import Fraction

import numpy as np

from moc.deadlock import tarjan
from moc.errors import SDFError, UnboundedCycleError  # noqa: F401  (re-exported)
from moc.exact_times import ticks
from moc.group_first import first_per
from moc.policy_spread import CREEP_STEPS, IntoEdges, climb, frontier, spread
from moc.policy_sums import carried, doubling as _doubling, limb_path_sums, \
    limbs, path_sums as _path_sums, sums_to_roots as _sums_to_roots
from moc.critical_cycle import holds_cycle, least_cycle
from moc.howard_exact import any_cycle, exact_iteration
from moc.record import record


@record
class CycleRatio:
    """``ratio``: the maximum of ``Σweight/Σheight`` over cycles (None without a cycle);
    ``cycle``: the nodes of one cycle attaining it, in cycle order."""

    ratio: Fraction | float | None
    cycle: tuple


def max_cycle_ratio(nodes: Iterable[Hashable], edges: Iterable[Sequence],
                    least: bool = False) -> CycleRatio:
    """The maximum over cycles of ``Σweight/Σheight`` and one cycle attaining it.

    ``edges`` are ``(u, v, weight, height)``; parallel edges and self-loops are allowed.
    Exact when weights and heights are integers or fractions (the ratio is then a
    :class:`~fractions.Fraction`), a float otherwise.  Every cycle must have a positive
    height sum: one with a sum of zero or less raises :class:`UnboundedCycleError`.
    See :func:`max_cycle_ratio_arrays` for the method; with ``least`` (exact input
    only), the cycle is :func:`moc.critical_cycle.least_cycle`'s, the nodes numbered in
    the order given.
    """
    nodes = list(dict.fromkeys(nodes))
    index = {n: i for i, n in enumerate(nodes)}
    edges = [tuple(e) for e in edges]
    for u, v, _, _ in edges:
        for end in (u, v):
            if end not in index:
                raise SDFError(f"max_cycle_ratio: edge endpoint {end!r} is not a node")
    exact = all(_exact(w) and _exact(h) for _, _, w, h in edges)
    us = np.array([index[e[0]] for e in edges], dtype=np.int64)
    vs = np.array([index[e[1]] for e in edges], dtype=np.int64)
    unit = 1
    if exact:
        # integer weights and heights keep every sum exact
        ws, lw = _over_common_denominator([e[2] for e in edges])
        hs, lh = _over_common_denominator([e[3] for e in edges])
        unit = Fraction(lh, lw)
    else:
        ws = np.array([float(e[2]) for e in edges])
        hs = np.array([float(e[3]) for e in edges])
    try:
        ratio, cycle = max_cycle_ratio_arrays(len(nodes), us, vs, ws, hs,
                                              least=least and exact)
    except UnboundedCycleError as exc:
        names = [nodes[i] for i in exc.cycle]
        raise UnboundedCycleError(
            f"the cycle {' -> '.join(map(str, names + names[:1]))} has a height sum of "
            f"zero or less: its ratio is unbounded (a cycle without tokens deadlocks)",
            names) from None
    if ratio is None:
        return CycleRatio(None, ())
    return CycleRatio(ratio * unit, tuple(nodes[i] for i in cycle))


def max_cycle_ratio_arrays(n: int, u, v, w, h, defer: bool = True, start=None,
                           critical=None, near=None, least: bool = False) -> tuple:
    """``(ratio, cycle)`` of the graph of nodes ``0..n-1`` and edges ``u[e] -> v[e]``
    of weight ``w[e]`` and height ``h[e]`` (numpy arrays: integers, exact, the ratio a
    :class:`~fractions.Fraction`; or floats); ``(None, ())`` without a cycle.  Raises
    :class:`UnboundedCycleError` (``cycle``: node numbers) on a cycle of height sum
    zero or less.

    Howard's policy iteration (Cochet-Terrasson, Cohen, Gaubert, McGettrick & Quadrat,
    1998), the fastest method in Dasdan's comparison (ACM TODAES 9(4), 2004), on every
    strongly connected component at once, each step a numpy operation over all nodes
    or edges, in floats.  Integer input is then certified exactly: with ``λ = N/D`` the
    ratio of the best cycle found, integer potentials ``y`` along the final policy must
    satisfy ``y[u] ≥ w·D − N·h + y[v]`` on every edge, which bounds every cycle's ratio
    by ``λ``; where rounding spoiled the policy, the exact policy iteration runs
    instead.  Where some integer height is zero or less and weights are ≥ 0, the
    search for a cycle of height sum zero or less comes after (``defer``): those
    potentials then prove there is none, and it runs first only where they do not.

    On one strongly connected component, ``start`` (a mask of edges) starts each node
    from its first marked edge (the same ratio; of equally critical cycles maybe
    another), ``near`` an estimate of the ratio in the units of ``w`` and ``h`` (where
    it is tiny, the heights are scaled by :func:`_toward_one`); and a
    list ``critical`` gets the final float policy (per node its edge), the start of a
    larger graph's (:mod:`moc.warm_start`), or None where a warm start passed
    :data:`WARM_STEPS`.  With ``least`` (integers), the cycle is
    :func:`moc.critical_cycle.least_cycle` of the edges tight under exact potentials
    (all critical cycles lie there): the same whatever the policy's path.
    """
    if not len(u):
        return None, ()
    exact = w.dtype != np.float64
    given, more = (u, v, w, h), {"start": start, "critical": critical, "near": near,
                                 "least": least}
    # edges by tail (stable: among equal choices the first given still wins), so that a
    # node's best edge is a segment's maximum (:func:`moc.group_first.first_per`);
    # renumbering the nodes kept below keeps that order
    order = np.argsort(u, kind="stable")
    u, v, h = u[order], v[order], h[order]
    # the search for a cycle of height sum ≤ 0 (a policy iteration of its own with
    # negative heights, seed 28's g0019: 5.2 s of 13; the components of the edges of
    # height 0 otherwise, autogen1: 0.2 s) deferred: the certificate of the one below
    # proves it vain (:func:`_certified`), and it runs first only where that fails
    deferred = defer and exact and h.min() <= 0 and w.min() >= 0
    bad = None if deferred else _nonpositive_cycle(n, u, v, h, exact, by_tail=True)
    if bad is not None:
        raise UnboundedCycleError("a cycle of height sum zero or less", bad)
    kept, local, label = _cyclic_part(n, u, v, by_tail=True)
    if not kept.any():
        return None, ()
    nodes = np.flatnonzero(local >= 0)
    if len(nodes) < n or not kept.all():       # else all kept, numbered as they are
        u, v, h, order = local[u[kept]], local[v[kept]], h[kept], order[kept]
        start = critical = None                    # warm only on one component
    w = w[order]
    start = None if start is None else start[order]
    if critical is None:
        order = None
    del kept, local                                # memory: the iteration's peak follows
    component = label[nodes]
    m = len(nodes)
    wf, hf = w.astype(np.float64), h.astype(np.float64)
    # a warm start's estimate is in the units of w and h: those are kept
    near = near if start is not None and (near or 0) > 0 else None
    if near is None:
        wf /= max(float(abs(wf).max()), 1.0)       # the same quotients, in place
    try:
        policy, converged = _policy_iteration(m, u, v, wf, hf, deferred, start, near)
    except _Unsafe:                                # a policy cycle of height ≤ 0
        return max_cycle_ratio_arrays(n, *given, defer=False, **more)
    if start is not None and not converged:
        critical.append(None)                      # no answer: solved again without
        return None, ()
    del wf, hf
    succ = v[policy]
    roots = _cycle_roots(succ)
    cycles = {int(r): _cycle(succ, int(r)) for r in roots}
    if not exact:
        ratio, cycle = max(((float(w[policy[c]].sum() / h[policy[c]].sum()), c)
                            for c in cycles.values()), key=lambda rc: rc[0])
        return ratio, tuple(int(nodes[i]) for i in cycle)
    try:
        exact_ratio = {r: Fraction(int(sum(w[policy[c]].tolist())),
                                   int(sum(h[policy[c]].tolist())))
                       for r, c in cycles.items()}
    except ZeroDivisionError:                      # where the search was deferred
        return max_cycle_ratio_arrays(n, *given, defer=False, **more)
    best = {}                                      # per component: its best cycle
    for r, value in exact_ratio.items():
        c = int(component[r])
        if c not in best or value > exact_ratio[best[c]]:
            best[c] = r
    top = max(best.values(), key=exact_ratio.__getitem__)
    ratio, cycle = exact_ratio[top], cycles[top]
    bound = {c: exact_ratio[r] for c, r in best.items()}
    tight = [] if deferred or least else None
    if not (converged and _certified(u, v, w, h, policy, roots, component, bound, tight)):
        # rounding left the policy short of optimal: go on from it exactly
        if tight is not None:
            tight.clear()
        found = _exact_from(u, v, w, h, policy, ratio, cycle, tight, deferred)
        if found is None and deferred:
            return max_cycle_ratio_arrays(n, *given, defer=False, **more)
        # int64 too narrow for those steps: the exact iteration in Python integers
        ratio, cycle = found or exact_iteration(m, u.tolist(), v.tolist(), w.tolist(),
                                                h.tolist(), tight)
        bound = {0: ratio}
    # where the search was deferred, the potentials prove N·Σh ≥ D·Σw on every cycle:
    # with N > 0 and weights ≥ 0 a cycle of height ≤ 0 has weight 0 and height 0, its
    # edges all tight and of weight 0
    if deferred and not (min(bound.values()) > 0 and tight and not holds_cycle(
            m, u[tight[-1] & (w == 0)], v[tight[-1] & (w == 0)])):
        return max_cycle_ratio_arrays(n, *given, defer=False, **more)
    if least:
        # the tight edges of the components of the largest ratio hold its cycles
        top = [c for c, r in bound.items() if r == ratio]
        mask = tight[-1] if len(bound) == 1 else \
            tight[-1] & np.isin(component[u], np.array(top, dtype=component.dtype))
        cycle = least_cycle(m, u, v, mask)
    if critical is not None:                       # in the numbering given
        critical.append(order[policy])
    return ratio, tuple(int(nodes[i]) for i in cycle)


def integer_array(values) -> np.ndarray:
    """Integers (a list or an array) as int64 where all fit, else as Python integers in
    an object array."""
    values = values if isinstance(values, np.ndarray) else np.array(values, dtype=object)
    if values.dtype != object or not len(values):
        return values.astype(np.int64, copy=False)
    big = max(abs(int(values.max())), abs(int(values.min()))) >= 2 ** 62
    return values if big else values.astype(np.int64)


def sorted_unique(values) -> np.ndarray:
    """The distinct values of a 1-d array, sorted.  (``np.unique`` without a second
    result hashes, many times slower on 10^5 values and more, and imports ``numpy.ma``
    on its first call, a tenth of numpy's import.)"""
    values = np.sort(values)
    return values[np.append(True, values[1:] != values[:-1])] if len(values) else values


def cycle_edges(n: int, u, v, cycle) -> np.ndarray:
    """The positions of the edges ``u -> v`` (of ``n`` nodes) that join consecutive
    nodes of ``cycle`` (node numbers, the last joined to the first): all parallel edges
    of every step."""
    heads = np.asarray(cycle, dtype=np.int64)
    if not len(heads):
        return np.zeros(0, dtype=np.int64)
    after = np.full(n, -1, dtype=np.int64)
    after[heads] = np.roll(heads, -1)
    if np.count_nonzero(after >= 0) == len(heads):
        # a node once on the cycle: an edge is a step iff it goes to the node after its
        # tail (one gather, where a search of every edge among the steps cost 40 ms
        # on a million edges)
        return np.flatnonzero(after.take(u) == v)
    steps = np.sort(heads * n + np.roll(heads, -1))
    codes = u.astype(np.int64) * n + v
    at = np.minimum(np.searchsorted(steps, codes), len(steps) - 1)
    return np.flatnonzero(steps[at] == codes)


def _cyclic_part(n, u, v, by_tail=False):
    """The edges inside strongly connected components that hold a cycle, the new
    number of every node (-1 for the others) and its component (``by_tail``: the edges
    come sorted by tail)."""
    label = strong_labels(n, u, v, by_tail)
    if n > 1 and label.min() == label.max():
        # one component (a whole iteration's graph): every node and edge on a cycle
        return np.ones(len(u), dtype=bool), np.arange(n), label
    # an edge inside a component lies on a cycle: its component is kept
    keep = label[u] == label[v]
    cyclic = np.bincount(label, minlength=n) > 1
    cyclic[label[u[u == v]]] = True                  # a self-loop is a cycle
    node_kept = cyclic[label]
    local = np.full(n, -1, dtype=np.int64)
    local[node_kept] = np.arange(int(node_kept.sum()))
    return keep, local, label


#: nodes plus edges under which :func:`strong_labels` searches in Python: importing
#: scipy's graph routines costs more CPU time (0.15 s) than the search on a graph this size
SMALL_GRAPH = 20_000


def strong_labels(n: int, u, v, by_tail: bool = False) -> np.ndarray:
    """The strongly connected component of each node of ``0..n-1`` under the edges
    ``u[e] -> v[e]``, as one label per node (equal labels: one component):
    :func:`moc.deadlock.tarjan` on a small graph, scipy's on a large one (``by_tail``:
    the edges come sorted by tail, and its rows are read off them without scipy's sort
    of all edges)."""
    if n + len(u) >= SMALL_GRAPH:
        from scipy.sparse import coo_matrix, csr_matrix
        from scipy.sparse.csgraph import connected_components
        if by_tail:
            # scipy's index type where it fits: scipy then neither scans nor converts
            index = np.int32 if max(n, len(u)) < 2 ** 31 else np.int64
            rows = np.zeros(n + 1, dtype=index)
            np.cumsum(np.bincount(u, minlength=n), out=rows[1:])
            graph = csr_matrix((np.ones(len(u)), v.astype(index), rows), shape=(n, n))
            # scipy's search wants each row's heads sorted and distinct: it did not
            # end in minutes without
            graph.sum_duplicates()
        else:
            graph = coo_matrix((np.ones(len(u)), (u, v)), shape=(n, n)).tocsr()
        return connected_components(graph, directed=True, connection="strong")[1]
    successors: list[list[int]] = [[] for _ in range(n)]
    for a, b in zip(np.asarray(u).tolist(), np.asarray(v).tolist()):
        successors[a].append(b)
    label = np.empty(n, dtype=np.int64)
    for number, component in enumerate(tarjan(range(n), successors)):
        label[component] = number
    return label


#: steps after which a warm start (``start``) gives up
WARM_STEPS = 256
#: a ratio (estimated, or the first policy's best) below this has the heights scaled
#: down (:func:`_toward_one`)
SMALL_RATIO = 2.0 ** -16


class _Unsafe(Exception):
    """A policy cycle of height sum zero or less (where the search for one was
    deferred): no ratio of it means anything."""


def _policy_iteration(n, u, v, w, h, guard=False, start=None, near=None):
    """Howard's iteration in floats: the final policy (an edge per node) and whether it
    converged within its bound of steps (edges sorted by tail ``u``; ``guard``: raise
    :class:`_Unsafe` at a policy cycle of height sum zero or less; ``start``: a mask of
    edges, each node's first marked one its first choice; ``near``: an estimate of the
    ratio, else the first policy's best, for :func:`_toward_one`)."""
    policy = np.empty(n, dtype=np.int64)
    # a value per node read at every edge out of it: a repeat, not a gather
    degree = np.bincount(u, minlength=n)
    chosen = first_per(u, w)                    # start from the heaviest edges (Dasdan)
    policy[u[chosen]] = chosen
    if start is not None and start.any():
        chosen = np.flatnonzero(start)
        chosen = chosen[np.concatenate(([True], u[chosen[1:]] != u[chosen[:-1]]))]
        policy[u[chosen]] = chosen
    tol = 1e-9
    eta = x = None
    last = {}
    packed = _packed(w, h)
    # most edges of a large constraint graph carry no tokens: value = w + x[v] there
    tokens = np.flatnonzero(h)
    ut, vt, wt, ht = u[tokens], v[tokens], w[tokens], h[tokens]
    into, creeping = None, 0    # the edges into each node; the small steps in a row
    # a warm start gives up early (seed 24's g0049 under "starts" stalled 5,120 steps
    # on ratios 1e-9 apart, below the tolerance that tells ratios apart)
    if near is not None and _toward_one(h, near):
        packed, ht = _packed(w, h), h[tokens]
    for step in range(WARM_STEPS if start is not None else max(100, 10 * int(math.isqrt(n)))):
        eta, x = _policy_values(n, v, w, h, policy, eta, x, tol, packed, last, guard)
        if step == 0 and near is None and _toward_one(h, float(np.abs(eta).max())):
            packed, ht = _packed(w, h), h[tokens]
            last.clear()
            eta, x = _policy_values(n, v, w, h, policy, None, None, tol, packed, last, guard)
        # one ratio everywhere (the usual case once it has spread): no edge leads up
        level = eta.min() == eta.max()
        if not level:
            ev = eta.take(v)
            slack = tol * (1 + np.abs(eta))
            edges = np.flatnonzero(ev > np.repeat(eta + slack, degree))
            if len(edges):
                # of ratios equal but for rounding, the first edge (as exactly)
                best = edges[first_per(u[edges], ev[edges],
                                       tol * (1 + float(np.abs(ev[edges]).max())))]
                policy[u[best]] = best
                into = into or IntoEdges(v, n)
                climb(u, v, eta, ev[best], policy, u[best], into, tol)
                continue
        # no edge leads up: |eta[v] − eta[u]| ≤ slack wherever eta[v] ≥ eta[u] − slack
        value = x.take(v)
        value += w
        value[tokens] = wt - eta[ut] * ht + x[vt]
        # potentials are sums of values as large as the largest one: a gain below
        # tol times it is rounding (a node flipping on it looped 1,410 steps)
        gain = np.repeat(x, degree)
        np.subtract(value, gain, out=gain)         # value − x[u], in place: one array less
        noise = tol * (1 + max(x.max(), -x.min()))      # max |x|, no array
        better = gain > noise
        del gain
        if not level:
            better &= ev >= np.repeat(eta - slack, degree)
        edges = np.flatnonzero(better)
        if not len(edges):
            return policy, True
        # of values equal but for rounding (potentials summed in another order), the
        # first edge, as the exact iteration takes it
        best = edges[first_per(u[edges], value[edges], noise)]
        if np.array_equal(policy[u[best]], best):
            # every node keeps its edge: the policy is a fixed point, which a gain of
            # rounding alone cannot move (a cycle's root gains its cycle's Σw − eta·Σh,
            # zero but for the rounding of sums far larger than any potential: SDF3's
            # generator's 10-actor graph with 10^9 tokens repeated one step 2,900 times)
            return policy, True
        policy[u[best]] = best
        creeping = creeping + 1 if level and len(best) <= frontier(n) else 0
        if creeping >= CREEP_STEPS:
            into = into or IntoEdges(v, n)
            ahead = x.copy()
            ahead[u[best]] = value[best]
            spread(u, v, w, h, float(eta[0]), ahead, policy, u[best], into, noise)
    return policy, False


def _toward_one(h, ratio: float) -> bool:
    """Where ``0 < ratio < SMALL_RATIO``, the heights (a float copy) times the power of
    two that brings ``ratio`` to about 1, in place, and True.  The iteration tells
    ratios apart to about 1e-9, a tolerance near 1: seed 41's g0039 (tokens of 3·10^11,
    ratios of 10^-11) went 2,000 steps without an end where every ratio looked the
    same, and seed 24's g0049 under "starts" (ratios 1e-9 apart) stalled 5,120.  Weights
    scaled up instead cancel against ratio times height with an error as large."""
    if not 0 < ratio < SMALL_RATIO:
        return False
    h *= 2.0 ** round(math.log2(ratio))
    return True


def _packed(w, h):
    """``(h·B + w, B)`` in int64 (``B`` a power of two above twice any sum of weights
    along a path) where weights and heights are whole and such sums below ``2**53``
    (so float sums are exact in any order) fit in one int64, else None."""
    if not len(w) or not (np.all(np.floor(w) == w) and np.all(np.floor(h) == h)):
        return None
    bound_w, bound_h = (min(len(a) * float(np.abs(a).max()), float(np.abs(a).sum()))
                        for a in (w, h))
    B = 2 ** (int(bound_w).bit_length() + 1)
    if max(bound_w, bound_h) >= 2 ** 53 or (bound_h + 1) * B >= 2 ** 62:
        return None
    return h.astype(np.int64) * B + w.astype(np.int64), B


def _cycles(succ):
    """The cycles of the functional graph ``succ``: their smallest nodes (roots), the
    nodes on them, and the root of each of those."""
    # scipy already imported (a large graph came before, as the steps of K before a
    # whole iteration do): its components cost half the doubling's rounds from a few
    # thousand nodes on (the same cycles either way)
    if len(succ) >= SMALL_GRAPH or (len(succ) >= 1_000
                                     and "scipy.sparse.csgraph" in sys.modules):
        return _cycles_large(succ)
    roots, label, on = _cycle_roots(succ, labels=True)
    cyclic = np.flatnonzero(on)
    return roots, cyclic, label[cyclic]


def _cycle_roots(succ, labels=False):
    """The smallest node of every cycle of the functional graph ``succ`` (and, with
    ``labels``, per node the root of the cycle it reaches and whether it is on one)."""
    n = len(succ)
    if n >= SMALL_GRAPH and not labels:
        return _cycles_large(succ)[0]
    # the image of succ^m shrinks to the cycles' nodes; once two images agree it stays
    reach = succ.copy()
    on = np.zeros(n, dtype=bool)
    on[reach] = True
    for _ in range(_doubling(n)):
        reach = reach[reach]
        image = np.zeros(n, dtype=bool)
        image[reach] = True
        if np.array_equal(image, on):
            break
        on = image
    label = np.where(on, np.arange(n), n)
    step = succ.copy()
    # a round that changes no label changes none after it (each label is the least
    # along its window, and the windows of one round tile the cycle)
    for _ in range(_doubling(n)):
        after = np.minimum(label, label[step])
        if np.array_equal(after, label):
            break
        label = after
        step = step[step]
    roots = np.flatnonzero(on & (label == np.arange(n)))
    return (roots, label, on) if labels else roots


def _cycles_large(succ):
    """:func:`_cycles` by scipy's strong components, linear in ``n``: the cycles are
    the components of more than one node and the self-loops."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components
    n = len(succ)
    # scipy's own types (float64 weights, int32 indices where they fit): none copied
    index = np.int32 if n < 2 ** 31 else np.int64
    graph = csr_matrix((np.ones(n), succ.astype(index),
                        np.arange(n + 1, dtype=index)), shape=(n, n))
    _, strong = connected_components(graph, directed=True, connection="strong")
    # a node is on a cycle iff its one successor is in its component (a self-loop too)
    on = strong.take(succ) == strong
    cyclic = np.flatnonzero(on)
    label = strong[cyclic]
    # cyclic is ascending: a component's first node on it is its smallest
    first = np.ones(len(cyclic), dtype=bool)
    order = np.argsort(label, kind="stable")
    first[1:] = label[order][1:] != label[order][:-1]
    least = np.empty(int(strong.max()) + 1, dtype=np.int64)
    least[label[order][first]] = cyclic[order][first]
    return np.sort(cyclic[order][first]), cyclic, least[label]


def _cycle(succ, root):
    cycle = [root]
    while (here := int(succ[cycle[-1]])) != root:
        cycle.append(here)
    return cycle


def _policy_values(n, v, w, h, policy, eta_before=None, x_before=None, tol=0.0,
                   packed=None, last=None, guard=False):
    """Per node, the ratio ``eta`` of the policy cycle it reaches and its potential
    ``x`` (``x[u] = w − eta·h + x[v]`` along the policy).  A cycle's root (its smallest
    node) keeps its potential from before where its ratio stayed (within ``tol``), else
    gets 0: potentials then only grow, so no policy comes back (Cochet-Terrasson et al.
    1998; a root reset to 0 can loop).  ``packed``: :func:`_packed` of ``w``, ``h``;
    ``last``: a dict kept from step to step, the policy cycles of the step before."""
    succ = v[policy]
    values = (w[policy], h[policy]) if packed is None else (packed[0][policy],)
    found = None
    if last:
        # the cycles before whose nodes kept their edges are cycles still; where the
        # sums reach one of them from every node, no other exists, and the search is
        # spared; tried after a step where it would have held (g0049: 93 steps, 67 so)
        kept, roots, cyclic, rank = last["cycles"]
        broken = np.zeros(len(roots), dtype=bool)
        broken[rank[succ.take(cyclic) != kept]] = True
        guess = roots[~broken], cyclic[~broken[rank]], roots[rank[~broken[rank]]]
        if last["hold"]:
            sums, step = _sums_to_roots(succ, values, guess[0])
            reached = np.zeros(n, dtype=bool)
            reached[guess[0]] = True
            found = guess if reached.take(step).all() else None
    if found is None:
        found = _cycles(succ)
        sums, step = _sums_to_roots(succ, values, found[0])
    roots, cyclic, root = found
    # a cycle's ratio from the sums over its nodes, grouped by its root (bins numbered
    # as the roots: each bin adds its nodes in the same order as bins numbered as nodes)
    edge = policy[cyclic]
    rank = np.searchsorted(roots, root)
    tall = np.bincount(rank, h[edge], len(roots))
    if guard and tall.min() <= 0:
        raise _Unsafe
    ratio = np.bincount(rank, w[edge], len(roots)) / tall
    if last is not None:
        last["hold"] = bool(last) and np.array_equal(guess[0], roots)
        last["cycles"] = succ.take(cyclic), roots, cyclic, rank
    # Σ(w − eta·h) to the root is Σw − eta·Σh: eta is the root's all along the way
    if packed is None:
        weight, height = sums
    else:
        (both,) = sums
        # both = height·B + weight, |weight| < B/2, B a power of two: % and // as a
        # mask and a shift (the same integers)
        half = packed[1] // 2
        weight = ((both + half) & (packed[1] - 1)) - half
        height = (both - weight) >> (packed[1].bit_length() - 1)
        weight, height = weight.astype(float), height.astype(float)
    if len(roots) == 1:                           # the usual case late in the iteration
        eta = np.full(n, ratio[0])
    else:
        eta_root = np.zeros(n)
        eta_root[roots] = ratio
        eta = eta_root.take(step)
    x = eta * height
    np.subtract(weight, x, out=x)
    if eta_before is not None:
        same = np.abs(eta_before[roots] - ratio) <= tol * (1 + np.abs(ratio))
        if len(roots) == 1:
            if same[0]:
                x += x_before[roots[0]]
        elif same.any():
            base = np.zeros(n)
            base[roots[same]] = x_before[roots[same]]
            x += base.take(step)
    return eta, x


def _certified(u, v, w, h, policy, roots, component, bound, tight=None) -> bool:
    """Whether exact integer potentials along ``policy`` prove that no cycle of a
    component ``c`` has a ratio above ``bound[c] = N/D``: ``y[u] ≥ w·D − N·h + y[v]``
    on every edge, ``y`` summed along the policy from 0 at each cycle's root (a list
    ``tight`` gets the mask of the edges where that is an equality)."""
    keys = np.array(sorted(bound), dtype=np.int64)
    # one component: its N and D for every edge, without an array of each
    where = np.searchsorted(keys, component[u]) if len(keys) > 1 else 0
    # a cost is at most max|w|·D + max|h|·|N| in size (as :func:`_exact_from` bounds
    # it), y a sum of up to n of them and y[u] − y[v] − cost of 2n + 1: within int64
    # where n + 3 of them stay below 2**62 (seed 24's g0049 took 0.7 s in Python
    # integers under the bound (max|w| + max|h|)·(|N| + D)·(n + 1) used before)
    largest = int(np.abs(w).max()) * max(r.denominator for r in bound.values()) + \
        int(np.abs(h).max()) * max(abs(r.numerator) for r in bound.values())
    big = largest * (len(policy) + 3) >= 2 ** 62
    # costs within int64 whose sums are not: the sums in two int64 limbs (Python
    # integers took 23 s of 40 on a cyclo-static graph of 4.6 million firings)
    in_limbs = big and largest < 2 ** 62 and len(policy) < 2 ** 29
    kind = object if big and not in_limbs else np.int64
    N = np.array([bound[k].numerator for k in keys.tolist()], dtype=kind)[where]
    D = np.array([bound[k].denominator for k in keys.tolist()], dtype=kind)[where]
    cost = w.astype(kind, copy=False) * D - h.astype(kind, copy=False) * N
    if in_limbs:
        high, low = limb_path_sums(v[policy], cost[policy], roots)
        cost_high, cost_low = limbs(cost)
        # the slack's sign and zeros are its high limb's once the low one is carried
        slack, low = carried(high[u] - high[v] - cost_high, low[u] - low[v] - cost_low)
    else:
        y = _path_sums(v[policy], cost[policy], roots)
        slack, low = y[u] - y[v] - cost, None
    if tight is not None:
        tight.append(slack == 0 if low is None else (slack == 0) & (low == 0))
    return bool(np.all(slack >= 0))


def _exact_from(u, v, w, h, policy, ratio, cycle, tight=None, deferred=False):
    """``(ratio, cycle)`` by Howard's iteration in integers from ``policy``, or None
    where int64 could overflow (a sum of up to ``n + 1`` costs, each at most ``max|w|·D
    + max|h|·|N|``) or it runs long: with ``λ = N/D`` the best ratio so far, potentials
    ``y`` of the costs ``w·D − N·h`` along the policy (0 at each cycle's root); a policy
    cycle of positive cost raises ``λ`` to its ratio, else a node switches to the edge
    of largest ``cost + y[v]`` where that beats ``y[u]``; none does: every edge satisfies
    ``y[u] ≥ cost + y[v]``, so no cycle's ratio exceeds ``λ`` (a list ``tight`` then
    gets the mask of the edges where that is an equality; with ``deferred``, a policy
    cycle of height sum zero or less gives None)."""
    policy = policy.copy()
    largest_w, largest_h = int(np.abs(w).max()), int(np.abs(h).max())
    for _ in range(4 * len(policy) + 100):
        N, D = ratio.numerator, ratio.denominator
        if (largest_w * D + largest_h * abs(N)) * (len(policy) + 1) >= 2 ** 62:
            return None
        cost = w * D - h * N
        succ = v[policy]
        roots = _cycle_roots(succ)
        y = _path_sums(succ, cost[policy], roots)
        around = cost[policy[roots]] + y[succ[roots]]
        if (around > 0).any():
            found = [_cycle(succ, int(r)) for r in roots[around > 0]]
            if deferred and min(int(sum(h[policy[c]].tolist()))
                                         for c in found) <= 0:
                return None
            ratio, cycle = max(((Fraction(int(w[policy[c]].sum()),
                                          int(h[policy[c]].sum())), c) for c in found),
                               key=lambda rc: rc[0])
            continue
        value = cost + y[v]
        better = np.flatnonzero(value > y[u])
        if not len(better):
            if tight is not None:
                tight.append(value == y[u])
            return ratio, cycle
        best = better[first_per(u[better], value[better])]
        policy[u[best]] = best
    return None


def _exact(x) -> bool:
    return isinstance(x, (int, Fraction)) or (isinstance(x, numbers.Rational)
                                              and not isinstance(x, float))


def _over_common_denominator(values) -> tuple[np.ndarray, int]:
    """Exact ``values`` as the integers ``x·d`` (:func:`integer_array`) over their least
    common denominator ``d``, and ``d``: :func:`moc.exact_times.ticks`' rule, for
    heights as for weights.  Each distinct object is converted once (the edges of a
    large graph share a few weights)."""
    d, scaled = ticks({id(x): x for x in values})
    return integer_array([scaled[id(x)] for x in values]), d


def _nonpositive_cycle(n, u, v, h, exact, by_tail=False):
    """A cycle (node list) whose heights sum to zero or less, or None (``by_tail``:
    the edges come sorted by tail, stably)."""
    if not len(h) or (h > 0).all():
        return None
    if (h >= 0).all():
        # only cycles of zero-height edges can sum to zero; sorted by tail, each node's
        # successors keep their order for :func:`any_cycle`
        if not by_tail:
            order = np.argsort(u, kind="stable")
            u, v, h = u[order], v[order], h[order]
        zero = h == 0
        u, v = u[zero], v[zero]
        label = strong_labels(n, u, v, by_tail=True)
        # the usual answer, none, told by the components' sizes before any edge array
        if np.bincount(label).max() <= 1 and not (u == v).any():
            return None
        kept = label[u] == label[v]                # on a cycle inside a component
        return any_cycle(n, list(zip(u[kept].tolist(), v[kept].tolist())))
    # a cycle of height sum ≤ 0 (< 0 in floats) is one of mean height ≤ 0: the maximum
    # cycle mean of −h (heights 1) by the policy iteration above (exact for integers),
    # whose iterations are few in practice (Dasdan, 2004), where Bellman-Ford's rounds
    # follow the longest shortest path (seed 28's g0019: 609,560 nodes, no such cycle)
    ratio, cycle = max_cycle_ratio_arrays(n, u, v, -h, np.ones(len(h), dtype=np.int64))
    if ratio is not None and (ratio >= 0 if exact else ratio > 0):
        return list(cycle)
    return None
