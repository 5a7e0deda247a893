"""The reference evaluator: one metric of one mapping."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping as MappingT, Sequence

from moa import Architecture, ArchitectureError
from moc import SDFGraph
import numpy as np

from mapping.semantics.aggregation import Aggregation, aggregator
from dsl.mappings import Mapping
from mapping.errors import MappingError
from mapping.semantics.metrics import (SYSTEM, check_metric, compose_system, is_charged,
                                      performance, rule, system_metrics, total_ops,
                                      unvalued)
from mapping.semantics.problem import Problem, bind_problem
from mapping.semantics.routing import place_tokens, validate_mapping
from mapping.evaluation.timing import timing_tables
from mapping.semantics.traffic import charged_paid, split_charged, tokens_by_pe


@dataclass(frozen=True)
class ElementValue:
    """One element's share: ``tokens`` handled, their total ``quanta``, and its ``value``
    of the metric (before ``lambda``; 0 when unmodelled).  A PE's ``tokens`` and
    ``value`` include the communication charged to it (``lambda`` applied, see
    :func:`element_values`)."""

    name: str
    kind: str
    tokens: int
    quanta: float
    value: float


@dataclass(frozen=True)
class Evaluation:
    """The result of evaluating a mapping; ``to_dict()`` gives the JSON of ``mapeval eval``."""

    application: str
    architecture: str
    mapping: str
    metric: str
    aggregate: str
    lambda_: float
    params: MappingT[str, Any]
    repetitions: MappingT[str, int]
    value: float
    throughput: float | None
    performance: float | None
    bottleneck: str | None
    unmodelled: tuple[str, ...]
    elements: tuple[ElementValue, ...]
    #: a system metric's terms (``M[AGG]`` and the system metrics it uses) → their values
    terms: MappingT[str, float] = field(default_factory=dict)
    #: the units of the metric and of time (``arch.unit``): labels, nothing is converted
    unit: str | None = None
    time_unit: str | None = None

    def to_dict(self) -> dict:
        # field by field: dataclasses.asdict deep-copies, seconds for 100,000 elements
        extra = {"terms": dict(self.terms)} if self.terms else {}
        if self.unit is not None:
            extra["unit"] = self.unit
        return {**extra, "application": self.application, "architecture": self.architecture,
                "mapping": self.mapping, "metric": self.metric, "aggregate": self.aggregate,
                "lambda": self.lambda_, "params": dict(self.params),
                "repetitions": dict(self.repetitions), "value": self.value,
                "throughput": self.throughput, "performance": self.performance,
                "bottleneck": self.bottleneck, "unmodelled": list(self.unmodelled),
                "elements": [{"name": e.name, "kind": e.kind, "tokens": e.tokens,
                              "quanta": e.quanta, "value": e.value} for e in self.elements]}

    def __str__(self):
        lines = [f"{self.metric} of mapping '{self.mapping}' of '{self.application}' on "
                 f"'{self.architecture}' ({self.aggregate}, lambda = {self.lambda_:g}): "
                 f"{self.value:.6g}{_unit(self.unit)}"]
        per = self.time_unit or "time unit"
        if self.throughput is not None:
            lines.append(f"throughput: {self.throughput:.6g} iterations per {per}")
        if self.performance is not None:
            lines.append(f"performance: {self.performance:.6g} ops per {per}")
        if self.bottleneck:
            lines.append(f"bottleneck: {self.bottleneck}")
        for term, value in self.terms.items():
            lines.append(f"term {term}: {value:.6g}")
        if self.unmodelled:
            lines.append(f"unmodelled for {self.metric}: {', '.join(self.unmodelled)}")
        width = max([len(e.name) for e in self.elements] + [7])
        value = f"value ({self.unit})" if self.unit else "value"
        lines.append(f"{'element':<{width}}  kind  {'tokens':>8}  {'quanta':>12}  {value:>12}")
        for e in self.elements:
            lines.append(f"{e.name:<{width}}  {e.kind:<4}  {e.tokens:>8}  {e.quanta:>12.6g}  "
                         f"{e.value:>12.6g}")
        return "\n".join(lines)


def _unit(unit: str | None) -> str:
    return f" {unit}" if unit else ""


def evaluate(app: SDFGraph | Problem, arch: Architecture | Mapping, mapping: Mapping | None = None,
             metric: str = "time", aggregate: str | None = None,
             params: MappingT[str, Any] | None = None,
             problem: Problem | None = None) -> Evaluation:
    """Evaluate ``metric`` of ``mapping`` of ``app`` onto ``arch``.

    Tokens of one iteration go to the mapped PEs and to every CN of each channel's route;
    each element values its tokens by its rule for ``metric`` (:mod:`mapping.semantics.metrics`);
    the values combine by ``aggregate`` (the architecture's default when ``None``) with
    CNs scaled by lambda; a timed aggregation (``schedule``, ``period``) schedules the
    firings instead (:mod:`mapping.evaluation.timing`, no bottleneck element).  Pass a ``problem``
    from :func:`~mapping.semantics.problem.bind_problem` to skip re-binding, or call
    ``evaluate(problem, mapping, metric, aggregate)`` with a :class:`Problem` first.
    ``mapping`` may be a plain dict actor → PE.

    A metric that no element can value is an error listing the known metrics; so is a
    mapping whose tokens all sit on elements without a model for the metric (its value
    would be a meaningless 0).
    """
    if isinstance(app, Problem):
        problem = problem or app
        app, arch, mapping, metric, aggregate = _shifted(app, arch, mapping, metric,
                                                         aggregate, params)
    if mapping is None:
        raise MappingError("evaluate: no mapping given")
    if not isinstance(mapping, Mapping):
        mapping = Mapping("mapping", mapping)
    problem = problem or bind_problem(app, arch, params)
    app_b, arch_b = problem.app, problem.arch
    validate_mapping(app_b, arch_b, mapping)
    got = placed_value(arch_b, MappedTokens(problem, mapping), metric, aggregate,
                       problem.params)
    throughput = performance_ = None
    if metric == "time" and got.value > 0 and np.isfinite(got.value):
        throughput = 1.0 / got.value
        performance_ = performance(total_ops(problem.activity, app_b), got.value)
    return Evaluation(app_b.name, arch_b.name, mapping.name, metric, got.aggregate,
                      float(arch_b.lambda_), dict(problem.params), dict(problem.repetitions),
                      got.value, throughput, performance_, got.bottleneck,
                      tuple(got.unmodelled), got.elements(arch_b), got.terms,
                      unit=arch_b.unit(metric),
                      time_unit=None if got.aggregate == SYSTEM else arch_b.unit("time"))


class Placement:
    """Where the tokens of ``count`` alternatives sit: what :func:`placed_values` needs
    besides the rules and the aggregations.  ``what`` and ``origin`` name them in
    errors."""

    what: str = "the alternative"
    origin = None
    count: int = 1

    def tokens(self, metric: str) -> Sequence[MappingT[str, list]]:
        """Per alternative, element → its token groups when evaluating ``metric``."""
        raise NotImplementedError

    def shares(self, metric: str, placed: Sequence) -> Sequence[MappingT[str, MappingT]]:
        """Per alternative, PE → CN → the value of ``metric`` of the CN's tokens
        attributed to the PE (an aggregation that
        :attr:`~mapping.semantics.aggregation.Aggregation.needs_shares`)."""
        raise NotImplementedError

    def timed(self, metric: str, aggregate: str) -> np.ndarray:
        """The values of a timed aggregation (``schedule``, ``period``), ``(count,)``."""
        raise NotImplementedError


class MappedTokens(Placement):
    """The tokens of one iteration of ``problem``'s application under ``mapping``:
    processing tokens on the mapped PEs, communication tokens on every CN of their
    channel's route (charged to the end PEs for a charged metric)."""

    def __init__(self, problem: Problem, mapping: Mapping):
        self.problem, self.mapping = problem, mapping
        self.what, self.origin = f"mapping '{mapping.name}'", mapping.origin
        self._placed: dict[bool, MappingT[str, list]] = {}

    def tokens(self, metric):
        charge = is_charged(metric)
        got = self._placed.get(charge)
        if got is None:
            p = self.problem
            got = self._placed[charge] = place_tokens(p.app, p.arch, self.mapping,
                                                      p.activity, metric, charge=charge)
        return [got]

    def shares(self, metric, placed):
        return [pe_shares(self.problem.app, self.problem.arch, self.mapping, placed[0],
                          metric)]

    def timed(self, metric, aggregate):
        # the batch code with one mapping, routed as placed (its own ``via`` routes)
        timing = timing_tables(self.problem, metric, aggregate)
        inputs = timing.inputs_for(self.problem, self.mapping)
        return aggregator(aggregate).timed_value(timing, None, inputs)


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

    def elements(self, arch: Architecture) -> tuple[ElementValue, ...]:
        return tuple(
            ElementValue(name, arch.elements[name].kind,
                         sum(t.count for t in self.placed.get(name, ())),
                         float(sum(t.count * t.quanta for t in self.placed.get(name, ()))),
                         self.values.get(name, 0.0))
            for name in arch.elements)


@dataclass(frozen=True)
class PlacedValues:
    """:class:`PlacedValue` of ``n`` alternatives at once: ``value (n,)``, a
    ``bottleneck`` per alternative, ``values``: element → ``(n,)`` (a number when
    ``n`` is 1), ``terms``: term → ``(n,)``."""

    value: np.ndarray
    aggregate: str
    bottleneck: Sequence[str | None]
    placed: Sequence[MappingT[str, list]]
    values: MappingT[str, np.ndarray]
    unmodelled: Sequence[tuple[str, ...]]
    terms: MappingT[str, np.ndarray] = field(default_factory=dict)

    def one(self, k: int = 0) -> PlacedValue:
        """Alternative ``k`` alone."""
        return PlacedValue(float(self.value[k]), self.aggregate, self.bottleneck[k],
                           self.placed[k] if self.placed else {},
                           {name: v if isinstance(v, float) else float(v[k])
                            for name, v in self.values.items()},
                           self.unmodelled[k] if self.unmodelled else (),
                           {name: float(v[k]) for name, v in self.terms.items()})


def placed_value(arch: Architecture, placement: Placement, metric: str,
                 aggregate: str | None = None, params: MappingT[str, Any] | None = None
                 ) -> PlacedValue:
    """:func:`placed_values` of a placement of one alternative."""
    return placed_values(arch, placement, metric, aggregate, params).one(0)


def placed_values(arch: Architecture, placement: Placement, metric: str,
                  aggregate: str | None = None, params: MappingT[str, Any] | None = None
                  ) -> PlacedValues:
    """The values of ``metric`` for the alternatives of ``placement`` on the *bound*
    ``arch``: the semantic core every alternative goes through, a mapping
    (:func:`evaluate`) or per-element activity (:mod:`mapping.evaluation.activity`).

    Each element values its tokens by its rule for ``metric`` (:mod:`mapping.semantics.metrics`);
    the values combine by ``aggregate`` (the architecture's default when ``None``,
    :data:`~mapping.semantics.aggregation.AGGREGATIONS`) with CNs scaled by lambda; a timed
    aggregation asks the placement for its timing.  A system metric is its
    expression of the values of its terms ``M[AGG]`` (each this function again) and
    of the system metrics it uses, with the parameters ``params``."""
    check_metric(arch, metric)
    n = placement.count
    system = system_metrics(arch).get(metric)
    if system is not None:
        refuse_aggregate(arch, metric, aggregate)
        got: list[PlacedValues] = []      # the first term's elements stand for the metric

        def term(name: str, agg: str | None) -> np.ndarray:
            got.append(placed_values(arch, placement, name, agg, params))
            return got[-1].value
        value, terms = compose_system(arch, metric, term, params, n)
        first = got[0] if got else None
        if first is None:
            return PlacedValues(value, SYSTEM, [None] * n, (), {}, (), terms)
        return replace(first, value=value, aggregate=SYSTEM, terms=terms)
    aggregate = aggregate or arch.aggregate
    agg = aggregator(aggregate)
    if agg.timed:                # the timing's own checks (time only) come first
        timed = np.asarray(placement.timed(metric, aggregate), dtype=float)
    placed = placement.tokens(metric)
    per_row, unmodelled, rules = [], [], {}
    for tokens in placed:
        own, lacking = element_values(arch, tokens, metric, rules)
        check_modelled(tokens, lacking, metric, placement.what, placement.origin)
        per_row.append(own)
        unmodelled.append(tuple(lacking))
    values = per_row[0] if n == 1 else \
        {name: np.array([own[name] for own in per_row]) for name in arch.elements}
    if agg.timed:
        value, bottleneck = timed, [None] * n
    else:
        shares = placement.shares(metric, placed) if agg.needs_shares else None
        value, bottleneck = system_value(arch, values, agg, shares)
    return PlacedValues(value, aggregate, bottleneck, placed, values, tuple(unmodelled))


def _shifted(problem: Problem, arch_slot, mapping_slot, metric_slot, aggregate_slot, params):
    """``(app, arch, mapping, metric, aggregate)`` of a call
    ``evaluate(problem, mapping, metric, aggregate)``, whose arguments arrive one slot
    early (the metric in ``mapping``'s, the aggregation in ``metric``'s)."""
    if params is not None:
        raise MappingError("evaluate: with a Problem, give the parameters to it: "
                           "Problem(app, arch, params)")
    if mapping_slot is None:                # evaluate(problem, m, metric=..., aggregate=...)
        return problem.app, problem.arch, arch_slot, metric_slot, aggregate_slot
    if metric_slot != "time" and aggregate_slot is not None:
        raise MappingError("evaluate(problem, mapping, metric, aggregate): an argument "
                           "too many")
    aggregate = aggregate_slot if metric_slot == "time" else metric_slot
    return problem.app, problem.arch, arch_slot, mapping_slot, aggregate


def refuse_aggregate(arch: Architecture, metric: str, aggregate: str | None) -> None:
    """``--aggregate`` does not apply to a system metric: its terms name their own, so
    any aggregation given is refused (callers pass ``None`` when none was asked for)."""
    if aggregate is not None:
        raise MappingError(f"metric '{metric}' is a system metric: its terms name their own "
                           f"aggregations, so an aggregation ('{aggregate}') does not apply "
                           "to it (omit --aggregate)")


def element_values(arch: Architecture, placed: MappingT[str, list], metric: str,
                   rules: dict | None = None) -> tuple[dict[str, float], list[str]]:
    """Element → its value of ``metric`` over its ``placed`` tokens (0 when it has no
    rule for the metric), and the elements with tokens but no rule.

    Communication charged to a PE (:class:`~mapping.semantics.traffic.ChargedToken`, a CN with
    ``charge = ends | both``) is a communication cost: the PE's value gains
    ``lambda · v``, where ``v`` is the CN's own rule applied to the tokens that CN charges
    to that PE (``Σ`` of per-token costs for additive models).  PE values are thus
    before ``lambda`` for their own tokens and after it for charged ones, so that every
    aggregation (``sum``, ``max``, ``exclusive``) sees the charged cost on the PE at the
    same scale as it would on the CN.  ``rules`` keeps each element's rule between
    calls for the same ``metric``."""
    values, unmodelled = {}, []
    rules = {} if rules is None else rules
    lam, charging = float(arch.lambda_), arch.charging
    for name, element in arch.elements.items():
        tokens, charged = placed.get(name, []), None
        if charging and element.is_pe:
            tokens, charged = split_charged(tokens)
        r = rules.get(name, False)
        if r is False:
            r = rules[name] = rule(element, metric)
        if tokens:
            value = _element_value(element, tokens, metric, r)
        else:                    # an idle element's value is the same on every call
            key = (name, "idle")
            if key not in rules:
                rules[key] = _element_value(element, [], metric, r)
            value = rules[key]
        if value is None:
            if tokens:
                unmodelled.append(name)
            value = 0.0
        if charged:
            for cn, group in charged.items():
                value = with_charged(value, lam, _element_value(arch.elements[cn], group,
                                                                metric))
        values[name] = value
    return values, unmodelled


def with_charged(value, lambda_: float, cn_value):
    """A PE's ``value`` with the copies a CN charges to it, whose value by the CN's own
    rule is ``cn_value`` (``None``: the CN has no rule): ``value + lambda · cn_value``,
    communication scaled by ``lambda`` as on the CN itself.  Numbers or
    arrays of rows alike (:mod:`mapping.evaluation.row_batch`)."""
    return value if cn_value is None else value + charged_paid(lambda_, cn_value)


def check_modelled(placed: MappingT[str, list], unmodelled: list[str], metric: str,
                   what: str, origin=None) -> None:
    """Raise :class:`MappingError` when every element that handles tokens is unmodelled
    for ``metric``: the value would be a meaningless 0."""
    busy = [name for name, tokens in placed.items() if tokens]
    if unvalued(bool(busy), len(unmodelled) < len(busy)):
        raise MappingError(f"{what}: no element it uses has a model for metric '{metric}' "
                           f"(unmodelled: {', '.join(unmodelled)}); its value would be a "
                           "meaningless 0", origin)


def system_value(arch: Architecture, values: MappingT[str, Any], agg: Aggregation,
                 shares: Sequence[MappingT[str, MappingT[str, float]]] | None = None
                 ) -> tuple[np.ndarray, list[str | None]]:
    """The system values of element ``values`` (element → ``(n,)`` values of ``n``
    alternatives) by ``agg`` and their bottleneck elements; ``shares``: one table per
    alternative (PE → CN → value)."""
    pes, cns = arch.pes, arch.cns
    n = np.size(next(iter(values.values()))) if values else 1
    pe = np.array([values[p] for p in pes], dtype=float).reshape(len(pes), n)
    cn = np.array([values[k] for k in cns], dtype=float).reshape(len(cns), n)
    table = None
    if shares is not None:
        table = np.array([[[share.get(p, {}).get(k, 0.0) for share in shares] for k in cns]
                          for p in pes], dtype=float).reshape(len(pes), len(cns), n)
    value, where = agg.combine(pe, cn, float(arch.lambda_), table)
    names = pes + cns
    return np.asarray(value, dtype=float), [names[int(i)] if i >= 0 else None for i in where]


def pe_shares(app: SDFGraph, arch: Architecture, mapping: Mapping, placed, metric: str
              ) -> dict[str, dict[str, float]]:
    """PE → CN → the value of ``metric`` of the CN's tokens attributed to the PE
    (:func:`mapping.semantics.traffic.tokens_by_pe`), before ``lambda``."""
    shares: dict[str, dict[str, float]] = {}
    for pe, by_cn in tokens_by_pe(app, arch, mapping, placed).items():
        shares[pe] = {}
        for cn, tokens in by_cn.items():
            value = _element_value(arch.elements[cn], tokens, metric)
            shares[pe][cn] = value or 0.0
    return shares


def _element_value(element, tokens, metric, r=False):
    r = rule(element, metric) if r is False else r
    if r is None:
        return None
    try:
        return r.value(tokens)
    except (MappingError, ArchitectureError):
        raise
    except (ValueError, ZeroDivisionError) as exc:
        raise MappingError(f"element '{element.name}', metric '{metric}', model "
                           f"'{r.model.name}': {exc}", element.origin) from None
