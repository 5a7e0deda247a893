"""The packing decision with the CNs (issue 43): where a CN carries nearly the
bottleneck, the decision of :mod:`mapping.search.packing` charges the channels to the
CNs as well.

The decision's master places each actor in a class of PEs (summed over the class's PEs)
or, in a class of at most :data:`~mapping.search.packing.SPLIT` PEs, on one PE of it.
Call each of those a *place*.  A channel between actors ``a`` and ``b`` costs a CN ``k``
at least ``W_k(u, v) = min`` over the PEs ``s`` of place ``u`` and ``d`` of place ``v``
of its cost with ends on ``(s, d)``; an actor's channels to itself likewise cost it at
least their least over its place's PEs.  The master charges these, level by level as
:func:`mapping.search.cpsat.charge` does, and asks every CN's charge to be at most ``T``.
Each term is at most the mapping's true load on the CN (all are non-negative), so a
mapping with every load at most ``T`` satisfies the master: "infeasible" still proves
that no mapping fits ``T``.  Costs are rounded down to the decision's unit; a term
loses less than one unit, so :attr:`Charges.terms` (the most terms a CN can have)
tells the proof how fine its unit must be.

Where the places are single PEs the CN loads are exact; only channels inside a pooled
class (charged at their least, usually nothing) are relaxed.  So a feasible decision's
packing is a mapping whose CN loads are at most ``T`` but for those channels: the proof
(:func:`~mapping.search.packing.prove`) walks down from the best mapping by such
decisions, each at most the mapping's value, until the packing's true value stops
falling.  On the stored ``a50_p8_s3`` (the bus at 99% of the bottleneck, a big core the
bottleneck) it went from 5.2967e-5 to 5.2579e-5 in 39 s, where CP-SAT from the best
mapping known found nothing better in 400 s (the research notes, h57comm).
"""
from __future__ import annotations

import numpy as np

from mapping.search.bounds import element_tables


class Charges:
    """The CN costs of the compiled ``max`` objective ``ev`` (``allowed``: the
    ``(A, P)`` mask) for the packing decision: :meth:`at` a unit gives the integer
    tables whose :meth:`Rows.add` puts the CN rows in a master."""

    def __init__(self, ev, allowed):
        own, own_cn, pairs = element_tables(ev)
        P = own.shape[1]
        self.ev = ev
        self.own_cn = np.where(np.isfinite(own_cn), own_cn, 0.0)
        # an unroutable pair of PEs costs nothing here: the master only loses rows
        self.pairs = {ab: np.where(np.isfinite(W[..., P:]), W[..., P:], 0.0)
                      for ab, W in pairs.items()}
        A, C = own_cn.shape[0], own_cn.shape[2]
        #: the most terms of one CN's row: a level per pair of places per channel pair,
        #: and one per actor (its channels to itself), bounded by ``P²`` and 1
        self.terms = len(self.pairs) * P * P + A
        self.C = C

    def value(self, row) -> float:
        """The mapping ``row``'s true value."""
        from mapping.search.exact import mapping_value
        return mapping_value(self.ev, np.asarray(row, dtype=np.intp))

    def at(self, unit: float, epsilon: float) -> "Rows":
        """The tables in whole units of ``unit``, rounded down (a little more where the
        quotient is within ``epsilon`` of a whole number, as the packing's sizes)."""
        down = lambda v: np.floor(v / unit * (1 - epsilon)).astype(np.int64)  # noqa: E731
        return Rows(down(self.own_cn), {ab: down(W) for ab, W in self.pairs.items()},
                    self.C)


class Rows:
    """The integer CN tables of :class:`Charges` at one unit."""

    def __init__(self, own_cn, pairs, C):
        self.own_cn, self.pairs, self.C = own_cn, pairs, C

    def add(self, model, places, on, capacity: int, slack) -> None:
        """The CN rows in ``model``: ``places`` the PEs of each place, ``on[a][j]`` the
        Boolean of actor ``a`` on place ``j`` (None where it may not be there), every
        CN's charge plus ``slack`` at most ``capacity``."""
        from mapping.search.cpsat import charge
        loads: list[list] = [[] for _ in range(self.C)]
        for a, row in enumerate(on):
            for j, v in enumerate(row):
                if v is not None:
                    for k in range(self.C):
                        c = int(self.own_cn[a, places[j], k].min())
                        if c > 0:
                            loads[k].append((c, v))
        for (a, b), W in self.pairs.items():
            for k in range(self.C):
                Wk = np.array([[W[np.ix_(u, v)][..., k].min() for v in places]
                               for u in places])
                if (Wk > 0).any():
                    charge(model, on[a], on[b], Wk, loads[k], [], a, b)
        for terms in loads:
            if terms:
                model.add(sum(c * u for c, u in terms) + slack <= capacity)
