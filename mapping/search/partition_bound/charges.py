"""The data of the set-partitioning bound's columns (:mod:`mapping.search.partition_bound`):
what a set of actors on one PE costs each element, and how a channel cut between two PEs
is charged to the CNs through a decomposition of the routes into cut functions.

A channel (a pair of actors joined by channels, with the costs
:func:`~mapping.search.bounds.element_tables` tabulates for each placement ``(s, d)`` of
its ends) costs on CN ``k`` at least ``v·D_k(s, d)``, where ``D_k(s, d) = w_k(s) + w_k(d)
+ Σ_G w_k(G)·[s ∈ G xor d ∈ G]`` is a non-negative combination of cut functions below the
architecture's routes (:func:`route_cuts`: on a tree of buses and bridges, exactly the
routes: a bus is charged half a channel by each end on a PE behind it and half by each
end beyond it) and ``v`` the largest volume with ``v·D_k ≤`` the channel's cost.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import linprog
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from mapping.search.bounds import element_tables

#: rounds of averaging the route weights over exchanges of alike PEs
SWEEPS = 4


def route_cuts(route: np.ndarray, unroutable: np.ndarray, P: int):
    """The cut decomposition of the routes: ``(groups, single, weight)``: ``groups`` a
    list of PE sets (two PEs or more, none the complement of one PE); ``single (C, P)``
    and ``weight (C, len(groups))`` the non-negative weights of the cut functions of
    each PE alone and of each group, the largest sum (over the pairs of PEs) whose
    ``D_k(s, d)`` stays at or below ``route_k`` both ways between ``s ≠ d``.  The
    candidate groups are the connected sets of PEs that reach each other without one
    CN (on a tree: the branches beyond it)."""
    C = route.shape[1]
    R = route.reshape(P, P, C)
    ok = ~unroutable.reshape(P, P)
    both = np.where((ok & ok.T)[:, :, None], np.minimum(R, R.transpose(1, 0, 2)),
                    np.where(ok[:, :, None], R, R.transpose(1, 0, 2)))   # (s, d, k)
    usable = (ok | ok.T) & ~np.eye(P, dtype=bool)
    groups: list[frozenset] = []
    for k in range(C):
        free = usable & (both[:, :, k] <= 0)
        _, label = connected_components(csr_matrix(free), directed=False)
        for part in (frozenset(np.flatnonzero(label == c).tolist())
                     for c in range(label.max() + 1)):
            if 2 <= len(part) <= P - 2:
                rest = frozenset(range(P)) - part
                if part not in groups and rest not in groups:
                    groups.append(part)
    s_idx, d_idx = np.nonzero(np.triu(usable, 1))
    member = np.array([[p in g for p in range(P)] for g in groups], dtype=float)
    cols = [np.eye(P)[s_idx] + np.eye(P)[d_idx]]                    # (pairs, P)
    if groups:
        cols.append(np.abs(member[:, s_idx] - member[:, d_idx]).T)  # (pairs, G)
    M = np.concatenate(cols, axis=1)
    single = np.zeros((C, P))
    weight = np.zeros((C, len(groups)))
    if not len(s_idx):
        return groups, single, weight
    swaps = _swaps(both, usable, groups, P)
    for k in range(C):
        res = linprog(-M.sum(axis=0), A_ub=M, b_ub=both[s_idx, d_idx, k],
                      bounds=(0, None), method="highs")
        if res.status == 0:
            w = np.maximum(res.x, 0.0)
            # an optimal vertex may favour one of two PEs alike in the routes; the
            # average over such swaps is optimal too, and keeps alike PEs in one class
            for _ in range(SWEEPS):
                for perm in swaps:
                    w = 0.5 * (w + w[perm])
            # the LP's tolerances: scale down until no pair is above its route
            over = M @ w
            lim = both[s_idx, d_idx, k]
            if (over > lim).any():
                w *= np.min(np.where(over > 0, lim / np.maximum(over, 1e-300), np.inf))
            single[k], weight[k] = w[:P], w[P:]
    return groups, single, weight


def _swaps(both, usable, groups, P) -> list[np.ndarray]:
    """The exchanges of two PEs that keep the routes (and so the groups), each as a
    permutation of the weights (PEs, then groups)."""
    index = {g: i for i, g in enumerate(groups)}
    out = []
    for p in range(P):
        for q in range(p + 1, P):
            perm = np.arange(P)
            perm[p], perm[q] = q, p
            if not (np.array_equal(both[np.ix_(perm, perm)], both)
                    and np.array_equal(usable[np.ix_(perm, perm)], usable)):
                continue
            image = []
            for g in groups:
                h = frozenset(int(perm[x]) for x in g)
                h = h if h in index else frozenset(range(P)) - h
                if h not in index:
                    break
                image.append(P + index[h])
            else:
                out.append(np.concatenate([perm, np.array(image, dtype=np.intp)]))
    return out


class Tables:
    """The column data of every PE, PEs alike in all of it grouped into classes."""

    def __init__(self, ev, allowed):
        t = ev.tables
        own, own_cn, pairs = element_tables(ev)
        A, P = own.shape
        C = own_cn.shape[2]
        self.A, self.P, self.C = A, P, C
        keys = sorted(pairs)
        J = len(keys)
        self.a = np.array([k[0] for k in keys], dtype=np.intp)
        self.b = np.array([k[1] for k in keys], dtype=np.intp)
        W = np.stack([pairs[k] for k in keys]) if J else np.zeros((0, P, P, P + C))
        usable = allowed & np.isfinite(own)
        self.usable = usable
        groups, single, weight = route_cuts(t.route, t.unroutable, P)
        self.groups = groups
        member = np.array([[p in g for g in groups] for p in range(P)], dtype=bool)
        # where both ends may go: (j, s, d)
        can = usable[self.a][:, :, None] & usable[self.b][:, None, :] \
            & np.isfinite(W[..., 0]) if J else np.zeros((0, P, P), dtype=bool)
        apart = can & ~np.eye(P, dtype=bool)[None]
        D = single.T[:, None, :] + single.T[None, :, :]                      # (s, d, k)
        if groups:
            cut = (member[:, None, :] != member[None, :, :]).astype(float)    # (s, d, G)
            D = D + cut @ weight.T
        cnW = W[..., P:]                                                      # (j, s, d, k)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(apart[..., None] & (D[None] > 0), cnW / D[None], np.inf)
        vol = ratio.min(axis=(1, 2)) if J else np.zeros((0, C))
        vol = np.where(np.isfinite(vol), vol, 0.0)                            # (j, k)
        self.vol = vol
        self.gweight = (vol[:, None, :] * weight.T[None]).transpose(1, 0, 2) \
            if groups else np.zeros((0, J, C))                                 # (G, j, k)
        data, self.classes = {}, []
        self.pe = []
        for p in range(P):
            pe_w = W[:, p, :, p] if J else np.zeros((0, P))
            a_out = np.where(apart[:, p, :], pe_w, np.inf).min(axis=1) if J else pe_w[:, 0]
            pe_w = W[:, :, p, p] if J else np.zeros((0, P))
            b_out = np.where(apart[:, :, p], pe_w, np.inf).min(axis=1) if J else pe_w[:, 0]
            inner_ok = can[:, p, p] if J else np.zeros(0, dtype=bool)
            col = PEColumns(
                work=np.where(usable[:, p], own[:, p], np.inf),
                own_cn=own_cn[:, p, :],
                inner_pe=np.where(inner_ok, W[:, p, p, p], 0.0) if J else np.zeros(0),
                inner_cn=np.where(inner_ok[:, None], W[:, p, p, P:], 0.0) if J
                else np.zeros((0, C)),
                inner_ok=inner_ok,
                a_out=np.where(np.isfinite(a_out), a_out, 0.0),
                b_out=np.where(np.isfinite(b_out), b_out, 0.0),
                cut_cn=vol * single[:, p][None, :],
                member=member[p])
            key = col.key()
            if key not in data:
                data[key] = len(self.classes)
                self.classes.append([])
                self.pe.append(col)
            self.classes[data[key]].append(p)


@dataclass
class PEColumns:
    work: np.ndarray        # (A,) the actor's load on the PE (inf: not there)
    own_cn: np.ndarray      # (A, C) its own channels' CN cost
    inner_pe: np.ndarray    # (J,) a pair on the PE: its load there
    inner_cn: np.ndarray    # (J, C) and on the CNs
    inner_ok: np.ndarray    # (J,) both ends may share the PE
    a_out: np.ndarray       # (J,) the least charged to the PE of ``a`` with ``b`` apart
    b_out: np.ndarray       # (J,) likewise with ``b`` here, ``a`` apart
    cut_cn: np.ndarray      # (J, C) a channel with one end here: the column's CN share
    member: np.ndarray      # (G,) the PE lies in each group

    def key(self) -> bytes:
        return b"".join(np.ascontiguousarray(v).tobytes() for v in vars(self).values())

