"""Lower bounds on the bottleneck (``max``) that count communication (issue 43).

Every element's load is a sum of non-negative terms, one per actor (its processing,
with what its own channels charge) and one per pair of actors joined by channels (the
tokens their channels put on each element, which depend on the pair of PEs of the two
ends).  Dropping terms never raises a load, so the optimum over *any subset of the
actors* — with only their own terms — is a lower bound on the optimum of the whole
problem.  :func:`pair_bound` takes the subsets of one actor and of two actors joined
by channels, which it solves exactly by enumerating the ``P²`` placements: a heavy
channel pays either its ends on one PE (both loads added) or its tokens on the CNs
between them — a bound the LP relaxation, where fractional actors make communication
free, does not see.  It is cheap (``channels × P² × elements``) and enters ``exact``
as a floor beside the cluster relaxation's (:mod:`mapping.search.relaxation`).
"""
from __future__ import annotations

import numpy as np

from mapping.semantics.traffic import charged_paid, end_counts


def linear_bottleneck(ev) -> bool:
    """Whether the compiled objective ``ev`` is a bottleneck aggregation (``max``) of
    loads linear in the tokens: where the bounds on the busiest element apply (this
    module's, the packing's, the cluster relaxation's and the partition bound's)."""
    agg = getattr(ev, "aggregation", None)
    return agg is not None and bool(agg.bottleneck) and bool(ev.tables.linear)


def element_tables(ev):
    """The loads of the compiled objective ``ev`` as tables: ``own (A, P)`` the load
    an actor puts on its PE (``inf``: impossible), ``own_cn (A, P, C)`` on the CNs
    (channels from an actor to itself), and ``pairs``: for each pair of actors
    ``(a, b)`` joined by channels, ``W (P, P, P + C)``: their cost on each element
    (PEs first, then CNs, after ``λ``) for the PEs ``(s, d)`` of ``a`` and ``b``
    (``inf`` where no route joins ``s`` to ``d``)."""
    t = ev.tables
    A, P = t.proc.shape
    C = t.comm.shape[1]
    lam = t.lambda_
    charged = t.charged if t.charged is not None else np.zeros((len(t.src), P * P))
    route = t.route.reshape(P, P, C)
    blocked = t.unroutable.reshape(P, P)
    own = t.proc.astype(float).copy()
    own_cn = np.zeros((A, P, C))
    diag = np.arange(P)
    ends = end_counts(P).reshape(P, P, P)                                   # (s, d, p): 0-2
    pairs: dict[tuple[int, int], np.ndarray] = {}
    for c in range(len(t.src)):
        a, b = int(t.src[c]), int(t.dst[c])
        pe = charged_paid(lam, charged[c].reshape(P, P))[:, :, None] * ends   # (s, d, p)
        cn = lam * t.comm[c][None, None, :] * route                           # (s, d, k)
        if a == b:
            own[a] += pe[diag, diag, diag]
            own_cn[a] += cn[diag, diag]
            own[a, blocked[diag, diag]] = np.inf
            continue
        W = np.concatenate([pe, cn], axis=2)
        W[blocked] = np.inf
        if a > b:
            a, b, W = b, a, W.transpose(1, 0, 2)
        pairs[(a, b)] = pairs[(a, b)] + W if (a, b) in pairs else W
    return own, own_cn, pairs


def pair_bound(own, own_cn, pairs, allowed) -> float:
    """The largest optimum, over single actors and pairs of actors joined by channels,
    of the bottleneck of that subset alone (see the module): a lower bound on the
    ``max`` optimum.  Arguments are :func:`element_tables`' and the ``(A, P)`` mask of
    allowed PEs."""
    A, P = own.shape
    own = np.where(allowed, own, np.inf)
    single = np.concatenate([np.where(np.eye(P, dtype=bool)[None], own[:, :, None], 0.0),
                             own_cn], axis=2)                       # (a, s, element)
    single[~np.isfinite(own)] = np.inf
    best = float(single.max(axis=2).min(axis=1).max()) if A else 0.0
    for (a, b), W in pairs.items():
        loads = single[a][:, None, :] + single[b][None, :, :] + W   # (s, d, element)
        best = max(best, float(loads.max(axis=2).min()))
    return best if np.isfinite(best) else 0.0


def communication_bound(ev, allowed) -> float:
    """:func:`pair_bound` of the compiled objective ``ev`` over the mask ``allowed``."""
    return pair_bound(*element_tables(ev), allowed)
