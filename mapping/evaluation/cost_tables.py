"""The cost tables of the search's batch evaluator (:mod:`mapping.evaluation.batch`): the
rules of the semantic core (:func:`mapping.semantics.metrics.rule`) tabulated over the
token groups of one iteration, per actor or channel and element."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CostTables:
    """The cost tables a :class:`BatchEvaluator` compiles from the semantic core, before
    ``lambda``; the exact search and the symmetry reduction read these.

    - ``proc[a, p]``: the value of all processing tokens of actor ``a`` on PE ``p`` (PEs
      whose rule is additive; 0 for the others and unmodelled ones);
    - ``comm[c, k]``: the same for the communication tokens of channel ``c`` on CN ``k``;
    - ``route[s·P + d, k]``: 1 where CN ``k`` lies on the route from PE ``s`` to PE
      ``d`` (the PE's ``local`` CN on the diagonal); ``unroutable[s·P + d]``: no route;
    - ``src[c]``, ``dst[c]``: the actor indices of channel ``c``'s ends;
    - ``traffic_slope[p, k]``, ``traffic_base[p, k]``: the memory traffic ``D_p`` of PE
      ``p`` costs ``slope·D_p + base`` on CN ``k`` (``base`` only when ``D_p > 0``);
    - ``linear``: every element value is a sum of ``proc``, ``comm`` and ``charged``
      entries (additive rules everywhere, no memory traffic), so ``sum`` and ``max`` are
      linear programs;
    - ``charged[c, s·P + d]``: the cost (before ``lambda``) of channel ``c``'s tokens that
      the CNs of the route from ``s`` to ``d`` charge to *each* end PE (``charge = ends |
      both``); ``comm`` holds only the part that stays on the CNs.
    """

    proc: np.ndarray
    comm: np.ndarray
    route: np.ndarray
    unroutable: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    lambda_: float
    traffic_slope: np.ndarray
    traffic_base: np.ndarray
    linear: bool
    charged: np.ndarray | None = None


def tabulate(rules, tokens):
    """Tables of the element ``rules`` over the token groups ``tokens``: ``(table,
    finishes, features)``.  ``table[i, e]`` is the value of group ``i`` on element ``e``
    for additive rules (their finish is linear, so it applies token by token);
    ``features[f][i, e]`` the ``f``-th feature total of group ``i`` for the others, whose
    ``(elements, rule)`` are listed in ``finishes`` and finished on the summed totals (all
    the elements of a rule whose finish does not depend on the element at once)."""
    table = np.zeros((len(tokens), len(rules)))
    bad = np.zeros((len(tokens), len(rules)), dtype=bool)
    finishes, columns, shared = [], {}, {}
    for e, r in enumerate(rules):
        if r is None:
            continue
        F = np.zeros((len(tokens), r.width))
        for i, t in enumerate(tokens):
            try:
                F[i] = [t.count * f for f in r.features(t)]
            except (ValueError, TypeError, ZeroDivisionError):
                bad[i, e] = True        # the reference evaluator explains it, if used
        if bad[:, e].any() and not r.additive:
            raise ValueError("a bad token attribute under a non-additive rule")
        if r.additive:
            table[:, e] = r.finish(F.T)
        elif r.uniform:
            shared.setdefault(type(r), (np.zeros(0, dtype=np.intp), r))
            rows, first = shared[type(r)]
            shared[type(r)] = (np.append(rows, e), first)
            columns[e] = F
        else:
            finishes.append((np.array([e]), r))
            columns[e] = F
    finishes += list(shared.values())
    table[bad] = np.inf
    bad = bad if bad.any() else None
    if not finishes:
        return table, finishes, None, bad
    width = max(r.width for _, r in finishes)
    features = np.zeros((width, len(tokens), len(rules)))
    for e, F in columns.items():
        features[:F.shape[1], :, e] = F.T
    return table, finishes, features, bad
