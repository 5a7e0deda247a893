"""The valuation core: the values of one metric for ``n`` alternatives from their tokens.

Every engine that values placed tokens comes here, for one mapping
(:func:`mapping.evaluation.reference.evaluate`), counted activity
(:mod:`mapping.evaluation.activity`) or a million measured rows at once
(:class:`mapping.evaluation.row_batch.RowBatch`), so that each step of the semantics is
written once:

1. each element values its own tokens by its rule for the metric
   (:func:`mapping.semantics.metrics.rule`; ``0`` without one);
2. the copies a CN charges to an end PE (``charge = ends|both``) add ``lambda`` times
   their value by the CN's rule to the PE (:func:`with_charged`);
3. the missing-model rule: an alternative whose tokens are all on elements without a
   rule has no value (:func:`mapping.semantics.metrics.unvalued`; the placement says
   how it refuses one, :meth:`Placement.refuse`);
4. for ``exclusive``, each PE's share of each CN's tokens is valued by the CN's rule;
5. the aggregation's :meth:`~mapping.semantics.aggregation.Aggregation.combine`, or for a
   system metric the expression of its terms, each this core again
   (:func:`mapping.semantics.metrics.compose_system`).

What differs between engines is only where the tokens sit and how a rule reads them:
a :class:`Placement` gives, per metric, the :class:`Parts` of its tokens -- lists of
token objects each valued by the rule's ``value`` (the reference, plainly), or arrays
of tokens valued by the rule's features at once (the row batch).  A part's value and
its ``used`` mask are numbers for one alternative and ``(n,)`` arrays for ``n``: the
steps above are the same numpy expressions for both.

Timed aggregations (``schedule``, ``period``) are the one other path: a schedule is no
function of element values, so the core asks the placement for it
(:meth:`Placement.timed`) and still values the elements for the listing.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Mapping as MappingT, Sequence

import numpy as np

from mapping.errors import MappingError
from mapping.semantics.aggregation import Aggregation, aggregator
from mapping.semantics.metrics import (SYSTEM, check_metric, compose_system,
                                       system_metrics, unvalued)
from mapping.semantics.traffic import charged_paid


class Parts:
    """The tokens of one metric of ``n`` alternatives, in the parts the core values: each
    element's own (:meth:`own`, memory traffic on a CN included), the copies each CN
    charges to each PE (:meth:`charged`) and each PE's share of each CN (:meth:`shares`).
    A part is whatever :meth:`used` and :meth:`value` read."""

    #: per alternative, element → its token groups (the listing of a result), or empty
    placed: Sequence[MappingT[str, list]] = ()

    def own(self, name: str):
        raise NotImplementedError

    def charged(self) -> Iterable[tuple[str, str, Any]]:
        """``(pe, cn, part)`` of the charged copies some alternative has, PEs then CNs in
        the architecture's order."""
        raise NotImplementedError

    def shares(self) -> Iterable[tuple[str, str, Any]]:
        """``(cn, pe, part)``: the tokens of CN ``cn`` that belong to PE ``pe``."""
        raise NotImplementedError

    def used(self, part):
        """Whether each alternative has tokens in ``part``: a bool, or ``(n,)``."""
        raise NotImplementedError

    def value(self, key, element, part):
        """``element``'s rule applied to ``part`` (``key``: the element's name,
        ``("charged", pe, cn)`` or ``("share", cn, pe)``): a number or ``(n,)``, ``None``
        where the element has no rule."""
        raise NotImplementedError


class Placement:
    """Where the tokens of ``count`` alternatives sit: what :func:`placed_values` needs
    besides the rules and the aggregations.  ``what`` and ``origin`` name them in
    errors."""

    what: str = "the alternative"
    origin = None
    count: int = 1

    def parts(self, metric: str) -> Parts:
        raise NotImplementedError

    def timed(self, metric: str, aggregate: str) -> np.ndarray:
        """The values of a timed aggregation (``schedule``, ``period``), ``(count,)``."""
        raise NotImplementedError

    def refuse(self, metric: str, rows, unmodelled: MappingT[str, Any]) -> None:
        """The missing-model rule: the alternatives ``rows`` (a bool or ``(n,)``) have
        tokens on elements without a rule for ``metric`` only (``unmodelled``: element →
        its ``used``), so their value would be a meaningless 0."""
        k = int(np.flatnonzero(rows)[0]) if type(rows) is np.ndarray else 0
        names = [name for name, used in unmodelled.items() if _at(used, k)]
        raise MappingError(f"{self.what}: no element it uses has a model for metric "
                           f"'{metric}' (unmodelled: {', '.join(names)}); its value would "
                           "be a meaningless 0", self.origin)


def _at(x, k: int):
    return x[k] if type(x) is np.ndarray and x.ndim else x


def _any(x) -> bool:
    return x if type(x) is bool else bool(np.any(x))


def _where(used, value):
    """``value`` where ``used``, else 0 (one alternative: plain numbers)."""
    if type(used) is bool:
        return value if used else 0.0
    return np.where(used, value, 0.0)


@dataclass(frozen=True)
class PlacedValue:
    """The system ``value`` of one metric for one alternative, the ``aggregate`` that
    produced it (``system`` for a system metric), its ``bottleneck``, and the element
    ``values`` over the ``placed`` tokens with the ``unmodelled`` elements -- for a
    system metric those of its first term, with every term's value in ``terms``."""

    value: float
    aggregate: str
    bottleneck: str | None
    placed: MappingT[str, list]
    values: MappingT[str, float]
    unmodelled: tuple[str, ...]
    terms: MappingT[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class PlacedValues:
    """:class:`PlacedValue` of ``n`` alternatives at once: ``value (n,)``, a
    ``bottleneck`` per alternative (``None`` when not located), ``values``: element →
    its value (a number or ``(n,)``), ``unmodelled``: element with tokens but no rule
    → its ``used``, ``terms``: term → ``(n,)``."""

    value: np.ndarray
    aggregate: str
    bottleneck: Sequence[str | None] | None
    placed: Sequence[MappingT[str, list]]
    values: MappingT[str, Any]
    unmodelled: MappingT[str, Any]
    terms: MappingT[str, np.ndarray] = field(default_factory=dict)

    def one(self, k: int = 0) -> PlacedValue:
        """Alternative ``k`` alone."""
        return PlacedValue(float(self.value[k]), self.aggregate,
                           self.bottleneck[k] if self.bottleneck is not None else None,
                           self.placed[k] if self.placed else {},
                           {name: v if type(v) is float else float(_at(v, k))
                            for name, v in self.values.items()},
                           tuple(name for name, used in self.unmodelled.items()
                                 if _at(used, k)),
                           {name: float(v[k]) for name, v in self.terms.items()})


def placed_value(arch, placement: Placement, metric: str, aggregate: str | None = None,
                 params: MappingT[str, Any] | None = None) -> PlacedValue:
    """:func:`placed_values` of a placement of one alternative."""
    return placed_values(arch, placement, metric, aggregate, params).one(0)


def placed_values(arch, placement: Placement, metric: str, aggregate: str | None = None,
                  params: MappingT[str, Any] | None = None, *, locate: bool = True
                  ) -> PlacedValues:
    """The values of ``metric`` for the alternatives of ``placement`` on the *bound*
    ``arch`` (see the module doc); a system metric reads the parameters ``params``.
    Without ``locate`` no bottleneck is named (many rows need the values only)."""
    check_metric(arch, metric)
    n = placement.count
    if metric in system_metrics(arch):
        refuse_aggregate(arch, metric, aggregate)
        got: list[PlacedValues] = []      # the first term's elements stand for the metric

        def term(name: str, agg: str | None) -> np.ndarray:
            got.append(placed_values(arch, placement, name, agg, params, locate=locate))
            return got[-1].value
        value, terms = compose_system(arch, metric, term, params, n)
        if not got:
            return PlacedValues(value, SYSTEM, None, (), {}, {}, terms)
        return replace(got[0], value=value, aggregate=SYSTEM, terms=terms)
    aggregate = aggregate or arch.aggregate
    agg = aggregator(aggregate)
    if agg.timed:                # the timing's own checks (time only) come first
        timed = np.asarray(placement.timed(metric, aggregate), dtype=float)
    parts = placement.parts(metric)
    values, unmodelled = element_values(arch, parts, placement, metric)
    if agg.timed:
        return PlacedValues(timed, aggregate, [None] * n if locate else None, parts.placed,
                            values, unmodelled)
    shares = share_table(arch, parts, n) if agg.needs_shares else None
    value, bottleneck = system_value(arch, values, agg, shares, n, locate)
    return PlacedValues(value, aggregate, bottleneck, parts.placed, values, unmodelled)


def element_values(arch, parts: Parts, placement: Placement, metric: str
                   ) -> tuple[dict[str, Any], dict[str, Any]]:
    """Element → its value of ``metric`` (steps 1-3 of the module doc), and the elements
    with tokens but no rule → their ``used``.

    A PE's value is before ``lambda`` for its own tokens and after it for the copies
    charged to it, so that every aggregation (``sum``, ``max``, ``exclusive``) sees the
    charged cost on the PE at the scale it would have on the CN."""
    values: dict[str, Any] = {}
    unmodelled: dict[str, Any] = {}
    busy = modelled = False
    for name, element in arch.elements.items():
        part = parts.own(name)
        used = parts.used(part)
        v = parts.value(name, element, part)
        busy = busy | used
        if v is None:
            values[name] = 0.0
            unmodelled[name] = used
        else:
            values[name] = v
            modelled = modelled | used
    lam = float(arch.lambda_)
    for pe, cn, part in parts.charged():
        used = parts.used(part)
        v = parts.value(("charged", pe, cn), arch.elements[cn], part)
        busy = busy | used
        if v is not None:
            values[pe] = with_charged(values[pe], lam, _where(used, v))
            modelled = modelled | used
    rows = unvalued(busy, modelled)
    if _any(rows):
        placement.refuse(metric, rows, unmodelled)
    return values, {name: used for name, used in unmodelled.items() if _any(used)}


def with_charged(value, lambda_: float, cn_value):
    """A PE's ``value`` with the copies a CN charges to it, whose value by the CN's own
    rule is ``cn_value`` (``None``: the CN has no rule): ``value + lambda · cn_value``
    (:func:`mapping.semantics.traffic.charged_paid`).  Numbers or arrays alike."""
    return value if cn_value is None else value + charged_paid(lambda_, cn_value)


def share_table(arch, parts: Parts, n: int) -> np.ndarray:
    """``(P, C, n)``: the value of each CN's tokens that belong to each PE (step 4)."""
    pes, cns = {p: i for i, p in enumerate(arch.pes)}, {c: i for i, c in enumerate(arch.cns)}
    table = np.zeros((len(pes), len(cns), n))
    for cn, pe, part in parts.shares():
        v = parts.value(("share", cn, pe), arch.elements[cn], part)
        if v is not None:
            table[pes[pe], cns[cn]] = _where(parts.used(part), v)
    return table


def system_value(arch, values: MappingT[str, Any], agg: Aggregation,
                 shares: np.ndarray | None = None, n: int = 1, locate: bool = True
                 ) -> tuple[np.ndarray, list[str | None] | None]:
    """The system values ``(n,)`` of element ``values`` (element → a number or ``(n,)``)
    by ``agg``, and their bottleneck elements where ``locate``."""
    pes, cns = arch.pes, arch.cns
    pe, cn = _rows(values, pes, n), _rows(values, cns, n)
    value, where = agg.combine(pe, cn, float(arch.lambda_), shares, locate=locate)
    if not locate:
        return np.asarray(value, dtype=float), None
    names = pes + cns
    return np.asarray(value, dtype=float), [names[int(i)] if i >= 0 else None for i in where]


def _rows(values: MappingT[str, Any], names: Sequence[str], n: int) -> np.ndarray:
    """``(len(names), n)``: the values of ``names``, each a number or ``(n,)``; one
    alternative's in one array call rather than a row at a time."""
    if n == 1:
        return np.array([_at(values[x], 0) for x in names], dtype=float).reshape(len(names), 1)
    rows = np.empty((len(names), n))
    for i, x in enumerate(names):
        rows[i] = values[x]
    return rows


def refuse_aggregate(arch, metric: str, aggregate: str | None) -> None:
    """``--aggregate`` does not apply to a system metric: its terms name their own, so
    any aggregation given is refused (callers pass ``None`` when none was asked for)."""
    if aggregate is not None:
        raise MappingError(f"metric '{metric}' is a system metric: its terms name their own "
                           f"aggregations, so an aggregation ('{aggregate}') does not apply "
                           "to it (omit --aggregate)")
