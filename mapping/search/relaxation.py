"""The cluster relaxation of a bottleneck (``max``) mapping problem: a lower bound that
``exact`` proves on a much smaller program (issue 13).

PEs that are alike in the compiled tables (the same ``proc`` column, the same allowed
actors, the same routes to and from every other PE) merge into one PE whose load is the
members' average: ``proc[a, class] = proc[a, member] / |class|``.  A channel between
two classes uses the CNs of the route between any of their members; a channel inside a
class only the CNs common to every route within a member and between two members.
Projecting a mapping (each PE to its class) therefore never raises its value: a class's
average load is at most its largest member's, and every CN carries at most what it
carries in the mapping.  So the optimum of the merged problem bounds the optimum from
below; unlike the LP relaxation, in which fractional actors make communication nearly
free, it counts every channel between classes (the bus between the little and the big
cluster) exactly and relaxes only the balance within a class.

The classes are not those of :mod:`mapping.search.symmetry`, whose automorphisms may
permute CNs (a core's private CN with another's): averaging such members would mix the
loads of different CNs.  Here alike PEs see the very same CNs.

Only linear tables without communication charged to the cores (the charged part of a
channel would depend on which members its ends use) and without impossible actor-PE
pairs (``inf`` costs, which :class:`~mapping.search.delta.Delta` does not take) are
merged.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from mapping.evaluation.cost_tables import CostTables
from mapping.search.bounds import linear_bottleneck
from mapping.search.delta import Delta


def mergeable_classes(tables: CostTables, allowed: np.ndarray) -> list[list[int]]:
    """Classes of PEs that are alike in ``tables`` and the ``(actors, P)`` mask
    ``allowed`` (singletons included), each in index order, ordered by first member."""
    P = tables.proc.shape[1]
    route = tables.route.reshape(P, P, -1)
    unroutable = tables.unroutable.reshape(P, P)
    classes: list[list[int]] = []
    for p in range(P):
        for members in classes:
            q = members[0]
            others = [r for r in range(P) if r not in (p, q)]
            if np.array_equal(tables.proc[:, p], tables.proc[:, q]) \
                    and np.array_equal(allowed[:, p], allowed[:, q]) \
                    and np.array_equal(route[p, others], route[q, others]) \
                    and np.array_equal(route[others, p], route[others, q]) \
                    and np.array_equal(unroutable[p, others], unroutable[q, others]) \
                    and np.array_equal(unroutable[others, p], unroutable[others, q]):
                members.append(p)
                break
        else:
            classes.append([p])
    return classes


def merged_tables(tables: CostTables, classes: list[list[int]]) -> CostTables:
    """The tables of the merged problem: one PE per class (see the module)."""
    P = tables.proc.shape[1]
    S = len(classes)
    route = tables.route.reshape(P, P, -1)
    unroutable = tables.unroutable.reshape(P, P)
    proc = np.stack([tables.proc[:, c[0]] / len(c) for c in classes], axis=1)
    merged = np.zeros((S, S, route.shape[2]))
    blocked = np.zeros((S, S), dtype=tables.unroutable.dtype)
    for i, ci in enumerate(classes):
        for j, cj in enumerate(classes):
            if i != j:
                merged[i, j] = route[ci[0], cj[0]]
                blocked[i, j] = unroutable[ci[0], cj[0]]
                continue
            # within a class: a channel on one member or between two; the bound may
            # only count the CNs that every such route uses (the alike test compares
            # routes to the other PEs, not the members' own diagonals)
            inner = np.array(ci)
            usable = ~unroutable[np.ix_(inner, inner)]
            if usable.any():
                merged[i, i] = route[np.ix_(inner, inner)][usable].min(axis=0)
            else:
                blocked[i, i] = True
    return replace(tables, proc=proc, route=merged.reshape(S * S, -1),
                   unroutable=blocked.reshape(-1), charged=None)


class TablesEvaluator:
    """Values of mappings straight from linear cost ``tables`` (the loads of
    :meth:`Delta.loads` combined by ``aggregation``): the evaluator of a merged
    problem, which has no architecture of its own."""

    def __init__(self, tables: CostTables, aggregation, metric: str, cns: list[str],
                 pes: list[str]):
        self.tables, self.aggregation, self.metric = tables, aggregation, metric
        self.aggregate = getattr(aggregation, "name", "max")
        self.cns, self.pes = list(cns), list(pes)
        self.n_actors, self.n_pes = tables.proc.shape
        self._delta = Delta(self)

    def evaluate(self, X) -> np.ndarray:
        pe, cn, bad = self._delta.loads(np.atleast_2d(np.asarray(X, dtype=np.intp)))
        return self._delta.values(pe, cn, bad)


@dataclass(frozen=True)
class Relaxation:
    """A merged problem: its ``evaluator``, the ``allowed`` mask over its PEs, the
    ``classes`` of the original PEs and ``of_pe`` (original PE → its class)."""

    evaluator: TablesEvaluator
    allowed: np.ndarray
    classes: list
    of_pe: np.ndarray

    def project(self, row) -> np.ndarray:
        """The merged mapping of a mapping of the original problem."""
        return self.of_pe[np.asarray(row, dtype=np.intp)]


def relax(ev, allowed: np.ndarray) -> Relaxation | None:
    """The cluster relaxation of the compiled objective ``ev`` over the mask
    ``allowed``, or None where it does not apply (not a bottleneck aggregation, tables
    that are not linear or charge the cores, an impossible actor-PE pair, or no two PEs
    alike)."""
    t = ev.tables
    if not linear_bottleneck(ev) or (t.charged is not None and t.charged.any()) \
            or not np.isfinite(t.proc).all():
        return None
    classes = mergeable_classes(t, allowed)
    if len(classes) == t.proc.shape[1]:
        return None
    of_pe = np.empty(t.proc.shape[1], dtype=np.intp)
    for i, members in enumerate(classes):
        of_pe[members] = i
    names = ["+".join(ev.pes[p] for p in members) for members in classes]
    merged = TablesEvaluator(merged_tables(t, classes), ev.aggregation, ev.metric, ev.cns, names)
    return Relaxation(merged, np.stack([allowed[:, c[0]] for c in classes], axis=1),
                      classes, of_pe)
