"""The reference evaluator: one metric of one mapping (SPEC §6)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping as MappingT

from moa import Architecture, ArchitectureError
from moc import SDFGraph
from mapping.aggregation import aggregator
from dsl.mappings import Mapping
from mapping.errors import MappingError
from mapping.metrics import element_metric
from mapping.problem import Problem, bind_problem
from mapping.routing import place_tokens, validate_mapping
from mapping.traffic import tokens_by_pe


@dataclass(frozen=True)
class ElementValue:
    """One element's share: ``tokens`` handled, their total ``quanta``, and its ``value``
    of the metric (before ``lambda``; 0 when unmodelled)."""

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

    def to_dict(self) -> dict:
        d = asdict(self)
        d["lambda"] = d.pop("lambda_")
        order = ["application", "architecture", "mapping", "metric", "aggregate", "lambda",
                 "params", "repetitions", "value", "throughput", "performance", "bottleneck",
                 "unmodelled", "elements"]
        d["params"], d["repetitions"] = dict(self.params), dict(self.repetitions)
        d["unmodelled"] = list(self.unmodelled)
        d["elements"] = [asdict(e) for e in self.elements]
        return {k: d[k] for k in order}

    def __str__(self):
        lines = [f"{self.metric} of mapping '{self.mapping}' of '{self.application}' on "
                 f"'{self.architecture}' ({self.aggregate}, lambda = {self.lambda_:g}): "
                 f"{self.value:.6g}"]
        if self.throughput is not None:
            lines.append(f"throughput: {self.throughput:.6g} iterations per time unit")
        if self.performance is not None:
            lines.append(f"performance: {self.performance:.6g} ops per time unit")
        if self.bottleneck:
            lines.append(f"bottleneck: {self.bottleneck}")
        if self.unmodelled:
            lines.append(f"unmodelled for {self.metric}: {', '.join(self.unmodelled)}")
        width = max([len(e.name) for e in self.elements] + [7])
        lines.append(f"{'element':<{width}}  kind  {'tokens':>8}  {'quanta':>12}  {'value':>12}")
        for e in self.elements:
            lines.append(f"{e.name:<{width}}  {e.kind:<4}  {e.tokens:>8}  {e.quanta:>12.6g}  "
                         f"{e.value:>12.6g}")
        return "\n".join(lines)


def evaluate(app: SDFGraph, arch: Architecture, mapping: Mapping, metric: str = "time",
             aggregate: str | None = None, params: MappingT[str, Any] | None = None,
             problem: Problem | None = None) -> Evaluation:
    """Evaluate ``metric`` of ``mapping`` of ``app`` onto ``arch``.

    Tokens of one iteration go to the mapped PEs and to every CN of each channel's route;
    each element values its tokens with its model for ``metric``; the values combine by
    ``aggregate`` (the architecture's default when ``None``) with CNs scaled by lambda.
    Pass a ``problem`` from :func:`~mapping.problem.bind_problem` to skip re-binding.
    """
    problem = problem or bind_problem(app, arch, params)
    app_b, arch_b = problem.app, problem.arch
    validate_mapping(app_b, arch_b, mapping)
    aggregate = aggregate or arch_b.aggregate
    combine = aggregator(aggregate)
    placed = place_tokens(app_b, arch_b, mapping, problem.activity, metric)

    values, unmodelled = {}, []
    for name, element in arch_b.elements.items():
        value = _element_value(element, placed[name], metric)
        if value is None:
            if placed[name]:
                unmodelled.append(name)
            value = 0.0
        values[name] = value
    pe_values = {n: v for n, v in values.items() if arch_b.elements[n].is_pe}
    cn_values = {n: v for n, v in values.items() if not arch_b.elements[n].is_pe}
    shares = None
    if aggregate == "exclusive":
        shares = pe_shares(app_b, arch_b, mapping, placed, metric)
    value, bottleneck = combine(pe_values, cn_values, arch_b.lambda_, shares=shares)

    throughput = performance = None
    if metric == "time" and value > 0 and math.isfinite(value):
        throughput = 1.0 / value
        ops = total_ops(problem.activity)
        if ops is not None:
            performance = ops / value  # Gables eq. 11: P_attainable = work / time
    elements = tuple(
        ElementValue(name, arch_b.elements[name].kind, sum(t.count for t in placed[name]),
                     float(sum(t.count * t.quanta for t in placed[name])), values[name])
        for name in arch_b.elements)
    return Evaluation(app_b.name, arch_b.name, mapping.name, metric, aggregate,
                      float(arch_b.lambda_), dict(problem.params), dict(problem.repetitions),
                      float(value), throughput, performance, bottleneck, tuple(unmodelled),
                      elements)


def total_ops(activity) -> float | None:
    """``Σ ops`` over the processing tokens of one iteration (``ops`` defaulting to
    ``quanta``, as ``roofline`` reads it), or ``None`` when no token carries ``ops``."""
    tokens = list(activity.processing.values())
    if not any("ops" in t.attrs for t in tokens):
        return None
    return float(sum(t.count * t.attrs.get("ops", t.quanta) for t in tokens))


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
    try:
        return element_metric(element, tokens, metric)
    except (MappingError, ArchitectureError):
        raise
    except (ValueError, ZeroDivisionError) as exc:
        model = element.model(metric)
        what = f", model '{model.name}'" if model is not None else ""
        raise MappingError(f"element '{element.name}', metric '{metric}'{what}: {exc}",
                           element.origin) from None
