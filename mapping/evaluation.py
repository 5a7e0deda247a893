"""The reference evaluator: one metric of one mapping (SPEC §6)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping as MappingT

from moa import Architecture, ArchitectureError
from moc import SDFGraph
import numpy as np

from mapping.aggregation import Aggregation, aggregator
from dsl.mappings import Mapping
from mapping.errors import MappingError
from mapping.metrics import (SYSTEM, check_metric, is_charged, performance, rule, system_metrics,
                             system_value as system_metric_value, total_ops)
from mapping.problem import Problem, bind_problem
from mapping.routing import place_tokens, validate_mapping
from mapping.timing import timing_tables
from mapping.traffic import ChargedToken, tokens_by_pe


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
    each element values its tokens by its rule for ``metric`` (:mod:`mapping.metrics`);
    the values combine by ``aggregate`` (the architecture's default when ``None``) with
    CNs scaled by lambda; a timed aggregation (``schedule``, ``period``) schedules the
    firings instead (:mod:`mapping.timing`, no bottleneck element).  Pass a ``problem``
    from :func:`~mapping.problem.bind_problem` to skip re-binding, or call
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
    check_metric(arch_b, metric)
    if metric in system_metrics(arch_b):
        return _evaluate_system(problem, mapping, metric, aggregate)
    aggregate = aggregate or arch_b.aggregate
    agg = aggregator(aggregate)
    timing = timing_tables(problem, metric, aggregate) if agg.timed else None
    placed = place_tokens(app_b, arch_b, mapping, problem.activity, metric,
                          charge=is_charged(metric))
    values, unmodelled = element_values(arch_b, placed, metric)
    check_modelled(placed, unmodelled, metric, f"mapping '{mapping.name}'", mapping.origin)
    if timing is not None:
        # the batch code with one mapping, routed as placed (its own ``via`` routes)
        inputs = timing.inputs_for(problem, mapping)
        value = float(agg.timed_value(timing, None, inputs)[0])
        bottleneck = None
    else:
        shares = pe_shares(app_b, arch_b, mapping, placed, metric) if agg.needs_shares \
            else None
        value, bottleneck = system_value(arch_b, values, agg, shares)

    throughput = performance_ = None
    if metric == "time" and value > 0 and np.isfinite(value):
        throughput = 1.0 / value
        performance_ = performance(total_ops(problem.activity, app_b), value)
    elements = tuple(
        ElementValue(name, arch_b.elements[name].kind, sum(t.count for t in placed[name]),
                     float(sum(t.count * t.quanta for t in placed[name])), values[name])
        for name in arch_b.elements)
    return Evaluation(app_b.name, arch_b.name, mapping.name, metric, aggregate,
                      float(arch_b.lambda_), dict(problem.params), dict(problem.repetitions),
                      float(value), throughput, performance_, bottleneck, tuple(unmodelled),
                      elements, unit=arch_b.unit(metric), time_unit=arch_b.unit("time"))


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


def _evaluate_system(problem: Problem, mapping: Mapping, metric: str,
                     aggregate: str | None) -> Evaluation:
    """A system metric (SPEC §12): its expression of the values of its terms ``M[AGG]``
    (each a full evaluation of ``M`` by ``AGG``) and of the system metrics it uses.
    ``elements``, ``unmodelled`` and ``bottleneck`` are those of its first term (in the
    order the expression is printed); ``terms`` lists every term's value."""
    system = system_metrics(problem.arch)[metric]
    refuse_aggregate(problem.arch, metric, aggregate)
    terms: dict[str, float] = {}
    first = None
    for name, agg in _term_order(system):
        ev = evaluate(problem.app, problem.arch, mapping, name, agg, problem=problem)
        terms[f"{name}[{agg}]"] = ev.value
        first = first or ev
    for name in system.references:
        if name in system_metrics(problem.arch):
            ev = evaluate(problem.app, problem.arch, mapping, name, problem=problem)
            terms[name] = ev.value
            first = first or ev
    env = {**problem.params, **terms}
    value = float(system_metric_value(system.expr, env))
    return Evaluation(problem.app.name, problem.arch.name, mapping.name, metric, SYSTEM,
                      float(problem.arch.lambda_), dict(problem.params),
                      dict(problem.repetitions), value, None, None,
                      first.bottleneck if first else None,
                      first.unmodelled if first else (), first.elements if first else (),
                      terms, unit=problem.arch.unit(metric))


def _term_order(system) -> list[tuple[str, str]]:
    """The terms of a system metric in the order its expression prints them."""
    text = str(system.expr)
    return sorted(system.terms, key=lambda t: text.find(f"{t[0]}[{t[1]}]"))


def refuse_aggregate(arch: Architecture, metric: str, aggregate: str | None) -> None:
    """``--aggregate`` does not apply to a system metric: its terms name their own, so
    any aggregation given is refused (callers pass ``None`` when none was asked for)."""
    if aggregate is not None:
        raise MappingError(f"metric '{metric}' is a system metric: its terms name their own "
                           f"aggregations, so an aggregation ('{aggregate}') does not apply "
                           "to it (omit --aggregate)")


def element_values(arch: Architecture, placed: MappingT[str, list], metric: str
                   ) -> tuple[dict[str, float], list[str]]:
    """Element → its value of ``metric`` over its ``placed`` tokens (0 when it has no
    rule for the metric), and the elements with tokens but no rule.

    Communication charged to a PE (:class:`~mapping.traffic.ChargedToken`, a CN with
    ``charge = ends | both``, SPEC §12) is a communication cost: the PE's value gains
    ``lambda · v``, where ``v`` is the CN's own rule applied to the tokens that CN charges
    to that PE (``Σ`` of per-token costs for additive models).  PE values are thus
    before ``lambda`` for their own tokens and after it for charged ones, so that every
    aggregation (``sum``, ``max``, ``exclusive``) sees the charged cost on the PE at the
    same scale as it would on the CN."""
    values, unmodelled = {}, []
    lam, charging = float(arch.lambda_), arch.charging
    for name, element in arch.elements.items():
        tokens = placed.get(name, [])
        charged = None
        if charging and element.is_pe and any(isinstance(t, ChargedToken) for t in tokens):
            own, charged = [], {}
            for t in tokens:
                (charged.setdefault(t.cn, []) if isinstance(t, ChargedToken) else own).append(t)
            tokens = own
        value = _element_value(element, tokens, metric)
        if value is None:
            if tokens:
                unmodelled.append(name)
            value = 0.0
        if charged:
            for cn, group in charged.items():
                value += lam * (_element_value(arch.elements[cn], group, metric) or 0.0)
        values[name] = value
    return values, unmodelled


def check_modelled(placed: MappingT[str, list], unmodelled: list[str], metric: str,
                   what: str, origin=None) -> None:
    """Raise :class:`MappingError` when every element that handles tokens is unmodelled
    for ``metric``: the value would be a meaningless 0."""
    busy = [name for name, tokens in placed.items() if tokens]
    if busy and len(unmodelled) == len(busy):
        raise MappingError(f"{what}: no element it uses has a model for metric '{metric}' "
                           f"(unmodelled: {', '.join(unmodelled)}); its value would be a "
                           "meaningless 0", origin)


def system_value(arch: Architecture, values: MappingT[str, float], agg: Aggregation,
                 shares: MappingT[str, MappingT[str, float]] | None = None
                 ) -> tuple[float, str | None]:
    """The system value of element ``values`` by ``agg`` and its bottleneck element."""
    pes, cns = arch.pes, arch.cns
    pe = np.array([values[p] for p in pes], dtype=float)[:, None]
    cn = np.array([values[k] for k in cns], dtype=float)[:, None]
    table = None
    if shares is not None:
        table = np.array([[[shares.get(p, {}).get(k, 0.0)] for k in cns] for p in pes],
                         dtype=float).reshape(len(pes), len(cns), 1)
    value, where = agg.combine(pe, cn, float(arch.lambda_), table)
    i = int(where[0])
    return float(value[0]), ((pes + cns)[i] if i >= 0 else None)


def pe_shares(app: SDFGraph, arch: Architecture, mapping: Mapping, placed, metric: str
              ) -> dict[str, dict[str, float]]:
    """PE → CN → the value of ``metric`` of the CN's tokens attributed to the PE
    (:func:`mapping.traffic.tokens_by_pe`), before ``lambda``."""
    shares: dict[str, dict[str, float]] = {}
    for pe, by_cn in tokens_by_pe(app, arch, mapping, placed).items():
        shares[pe] = {}
        for cn, tokens in by_cn.items():
            value = _element_value(arch.elements[cn], tokens, metric)
            shares[pe][cn] = value or 0.0
    return shares


def _element_value(element, tokens, metric):
    r = rule(element, metric)
    if r is None:
        return None
    try:
        return r.value(tokens)
    except (MappingError, ArchitectureError):
        raise
    except (ValueError, ZeroDivisionError) as exc:
        raise MappingError(f"element '{element.name}', metric '{metric}', model "
                           f"'{r.model.name}': {exc}", element.origin) from None
