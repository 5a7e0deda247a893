"""How element values combine into one system value.

An aggregation is a small class, written once in numpy over ``n`` mappings at a time:
:meth:`Aggregation.combine` takes the element values ``pe (P, n)`` and ``cn (C, n)``
(before ``lambda``) and, for aggregations that need them (:attr:`Aggregation.needs_shares`),
``shares (P, C, n)``: the value of each CN's tokens attributed to each PE.  It returns
the system values ``(n,)`` and the index of the bottleneck element ``(n,)`` in the order
PEs then CNs (``-1``: none).  The reference evaluator calls it with ``n = 1``, the batch
evaluator with chunks of mappings.

Communication that a CN charges to the end PEs of its channels (``charge = ends |
both``) is already in the PE values, ``lambda`` applied
(:func:`mapping.evaluation.core.element_values`): ``sum`` counts it once per end, ``max``
sees it on the cores, and an ``exclusive`` phase includes the charged copies of its PE;
no aggregation special-cases it.

Aggregations declare the properties the batch evaluator's group tables and the exact
search rely on: :attr:`Aggregation.separable` (the value is the sum of the contributions
``pe`` and ``λ·cn``) or :attr:`Aggregation.bottleneck` (their maximum).  A new
aggregation is one class and one ``AGGREGATIONS`` line.

*Timed* aggregations (:attr:`Aggregation.timed`: ``schedule``, ``period``) are not
functions of element values: they schedule the firings of one iteration
(:mod:`mapping.evaluation.timing`).  Their :meth:`Timed.timed_value` takes the firing-level
tables; both evaluators dispatch on ``timed`` once.
"""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from mapping.errors import MappingError
from mapping.registry import Registry
from moa.errors import ArchitectureError


class Aggregation:
    name: ClassVar[str]
    #: value = Σ pe + λ·Σ cn: a sum of per-token contributions (group tables, MILP sum)
    separable: ClassVar[bool] = False
    #: value = max(max pe, λ·max cn): a bottleneck (group tables of rows, MILP epigraph)
    bottleneck: ClassVar[bool] = False
    #: ``combine`` reads ``shares``
    needs_shares: ClassVar[bool] = False
    #: the value is a timing of the mapped firings (:mod:`mapping.evaluation.timing`), computed by
    #: :meth:`timed_value` from the firing-level tables instead of element values
    timed: ClassVar[bool] = False

    def combine(self, pe: np.ndarray, cn: np.ndarray, lambda_: float,
                shares: np.ndarray | None = None, locate: bool = True
                ) -> tuple[np.ndarray, np.ndarray | None]:
        """``(values (n,), bottleneck (n,))``; without ``locate`` the bottleneck is None
        (the batch evaluator needs the values only)."""
        raise NotImplementedError


def contributions(pe: np.ndarray, cn: np.ndarray, lambda_: float) -> np.ndarray:
    """``(P + C, n)``: PE values, then CN values scaled by ``lambda``."""
    return np.concatenate([pe, lambda_ * cn])


def _first_largest(values: np.ndarray) -> np.ndarray:
    # Ties go to the first element in declaration order, PEs before CNs.
    if not len(values):
        return np.full(values.shape[1], -1, dtype=np.intp)
    return values.argmax(axis=0)


class Sum(Aggregation):
    """LSLA, everything serialized: ``Σ_PE + λ·Σ_CN`` (Pelcat et al. 2018, eq. 1); the
    bottleneck is the largest single contribution."""

    name = "sum"
    separable = True

    def combine(self, pe, cn, lambda_, shares=None, locate=True):
        value = pe.sum(axis=0) + lambda_ * cn.sum(axis=0)
        return value, (_first_largest(contributions(pe, cn, lambda_)) if locate else None)


class Max(Aggregation):
    """Everything concurrent: ``max(max_PE, λ·max_CN)`` (Gables eq. 14, bottleneck)."""

    name = "max"
    bottleneck = True

    def combine(self, pe, cn, lambda_, shares=None, locate=True):
        n = pe.shape[1]
        value = pe.max(axis=0) if len(pe) else np.zeros(n)
        if len(cn):
            value = np.maximum(value, lambda_ * cn.max(axis=0))
        return value, (_first_largest(contributions(pe, cn, lambda_)) if locate else None)


class Exclusive(Aggregation):
    """Gables' serialized work: each PE works alone in its own phase, whose time is the
    max of its own value and of ``λ·share`` at every CN it uses (Gables eq. 18,
    generalized: ``T'_IP[i] = max(D_i/B_peak, D_i/B_i, C_i)``); the system value is the
    sum of the phases (Gables eq. 19).  The bottleneck is the element that sets the
    longest phase (the PE itself, or a CN where its traffic is the slower part)."""

    name = "exclusive"
    needs_shares = True

    def combine(self, pe, cn, lambda_, shares=None, locate=True):
        if shares is None:
            raise MappingError(shares_refusal("none was given"))
        P, n = pe.shape
        phase, cn_wins = pe, None
        if shares.shape[1]:
            top = lambda_ * shares.max(axis=1)                          # (P, n)
            cn_wins = top > pe
            phase = np.where(cn_wins, top, pe)
        value = phase.sum(axis=0)
        if not locate:
            return value, None
        limiter = np.broadcast_to(np.arange(P)[:, None], (P, n))
        if cn_wins is not None:
            limiter = np.where(cn_wins, P + shares.argmax(axis=1), limiter)
        if not P:
            return value, np.full(n, -1, dtype=np.intp)
        longest = phase.argmax(axis=0)
        cols = np.arange(n)
        bottleneck = np.where(phase[longest, cols] > 0, limiter[longest, cols], -1)
        return value, bottleneck


class Timed(Aggregation):
    """A timing of the firings of one iteration under a mapping: element
    values do not determine it, the firing-level tables of :mod:`mapping.evaluation.timing` do
    (:meth:`timed_value`).  It aggregates ``time`` only."""

    timed = True
    #: the :class:`mapping.evaluation.timing.TimingTables` quantity it is
    quantity: ClassVar[str]

    def combine(self, pe, cn, lambda_, shares=None, locate=True):
        raise MappingError(timed_refusal(self.name))

    def timed_value(self, timing, XT: np.ndarray, inputs=None) -> np.ndarray:
        """``(n,)`` values of the mappings ``XT (actors, n)`` from ``timing`` (its
        per-mapping ``inputs`` when given, e.g. a mapping's own routes)."""
        return timing.value(self.quantity, XT, inputs)


class Schedule(Timed):
    """The makespan of one iteration, list-scheduled from an idle start: firings on one
    PE never overlap, channels between PEs delay tokens by their route's ``time``
    (HLFET, Kwok & Ahmad 1999)."""

    name = "schedule"
    quantity = "makespan"


class Period(Timed):
    """The period of the self-timed execution where every PE repeats its list-scheduled
    static order (Sriram & Bhattacharyya): the maximum cycle ratio of the static-order
    graph; ``throughput = 1/period``."""

    name = "period"
    quantity = "period"


#: the aggregations, by name, that the command line offers (``--aggregate``)
AGGREGATIONS: Registry = Registry("aggregation", error=MappingError)
AGGREGATIONS.add("sum", Sum(), "LSLA, everything serialized: sum of PEs + lambda * sum of CNs")
AGGREGATIONS.add("max", Max(), "everything concurrent: the bottleneck element")
AGGREGATIONS.add("exclusive", Exclusive(),
                 "Gables' serialized work: each PE alone in its phase, phases summed")
AGGREGATIONS.add("schedule", Schedule(),
                 "makespan of one list-scheduled iteration (time only)")
AGGREGATIONS.add("period", Period(),
                 "period of the self-timed static-order execution, 1/throughput (time only)")


def aggregator(name: str) -> Aggregation:
    return AGGREGATIONS.get(name)


def untimed_names() -> str:
    """The aggregations of element values, as a message offers them instead of a
    timed one: the registered ones that are not timed ("sum, max or exclusive")."""
    names = [name for name in AGGREGATIONS if not AGGREGATIONS.get(name).timed]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def timed_refusal(aggregate: str) -> str:
    """Why element values alone cannot give the timed aggregation ``aggregate``."""
    return (f"aggregation '{aggregate}' schedules the firings of a mapping; element "
            "values alone (e.g. per-element activity) do not determine it: use "
            f"{untimed_names()}")


def shares_refusal(missing: str) -> str:
    """Why ``exclusive`` cannot be had without a mapping; ``missing`` says what the
    caller lacks."""
    return (f"aggregation '{Exclusive.name}' needs the share of each CN's tokens that "
            f"belongs to each PE (a mapping); {missing}")


def check_aggregate(arch) -> None:
    """The default aggregation of ``arch`` (``aggregate = NAME``) is registered; else an
    :class:`~moa.errors.ArchitectureError` at the name in its file."""
    if arch.aggregate not in AGGREGATIONS:
        raise ArchitectureError(f"architecture '{arch.name}': unknown aggregation "
                                f"'{arch.aggregate}' (known: {', '.join(AGGREGATIONS)})",
                                arch.aggregate_origin or arch.origin, "aggregate")
