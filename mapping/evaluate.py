"""The reference evaluator: one metric of one mapping (SPEC §6)."""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping as MappingT

from moa import Architecture
from moc import SDFGraph
from mapping.aggregation import aggregator
from mapping.mapping import Mapping
from mapping.metrics import element_metric
from mapping.problem import Problem, bind_problem
from mapping.routing import place_tokens, validate_mapping


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
    placed = place_tokens(app_b, arch_b, mapping, problem.activity)

    values, unmodelled = {}, []
    for name, element in arch_b.elements.items():
        value = element_metric(element, placed[name], metric)
        if value is None:
            if placed[name]:
                unmodelled.append(name)
            value = 0.0
        values[name] = value
    pe_values = {n: v for n, v in values.items() if arch_b.elements[n].is_pe}
    cn_values = {n: v for n, v in values.items() if not arch_b.elements[n].is_pe}
    value, bottleneck = aggregator(aggregate)(pe_values, cn_values, arch_b.lambda_)

    throughput = performance = None
    if metric == "time" and value > 0 and math.isfinite(value):
        throughput = 1.0 / value
        ops = [t for t in problem.activity.processing.values() if "ops" in t.attrs]
        if ops:
            performance = sum(t.count * t.attrs["ops"] for t in ops) / value
    elements = tuple(
        ElementValue(name, arch_b.elements[name].kind, sum(t.count for t in placed[name]),
                     float(sum(t.count * t.quanta for t in placed[name])), values[name])
        for name in arch_b.elements)
    return Evaluation(app_b.name, arch_b.name, mapping.name, metric, aggregate,
                      float(arch_b.lambda_), dict(problem.params), dict(problem.repetitions),
                      float(value), throughput, performance, bottleneck, tuple(unmodelled),
                      elements)
