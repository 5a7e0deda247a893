"""The picture of a mapping: actors grouped by PE, channels over their CN routes, each
element's value of a metric and the bottleneck highlighted, as Graphviz DOT
(:func:`dsl.dot.mapping_dot` draws, this module evaluates)."""
from __future__ import annotations

from typing import Any, Mapping as MappingT

from dsl.dot import mapping_dot
from dsl.mappings import Mapping
from mapping.evaluation.reference import evaluate
from mapping.semantics.problem import Problem, bind_problem
from mapping.semantics.routing import channel_route


def mapping_diagram(app, arch, mapping: Mapping, metric: str = "time",
                    aggregate: str | None = None, params: MappingT[str, Any] | None = None,
                    problem: Problem | None = None) -> str:
    """DOT text of ``mapping`` with every element's value of ``metric`` under
    ``aggregate`` and the bottleneck (:func:`mapping.evaluation.reference.evaluate`) marked; the
    channels follow :func:`mapping.semantics.routing.channel_route`."""
    problem = problem or bind_problem(app, arch, params)
    ev = evaluate(problem.app, problem.arch, mapping, metric, aggregate, problem=problem)
    routes = {name: channel_route(problem.app, problem.arch, mapping, name)
              for name in problem.app.channels}
    unit = problem.arch.unit(metric)
    caption = f"{ev.metric} ({ev.aggregate}) = {ev.value:.6g}{' ' + unit if unit else ''}"
    if ev.bottleneck:
        caption += f", bottleneck {ev.bottleneck}"
    values = {e.name: e.value for e in ev.elements}
    return mapping_dot(problem.app, problem.arch, mapping, routes, values, ev.bottleneck,
                       caption, unit)
