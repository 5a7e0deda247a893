"""Evaluation from activity counted per element (a profiler, a scheduler's trace).

When a measurement row gives, for each element, the ``quanta`` it processed and the
number of ``tokens`` they came in, no application graph or mapping is needed: each
element gets one token group of ``tokens`` tokens of ``quanta / tokens`` each (with no
other attributes, so ``S`` defaults to the quanta and ``gamma`` to 1), values them with
its cost model, and the element values combine as in :func:`mapping.evaluation.evaluate`.
"""
from __future__ import annotations

from typing import Mapping as MappingT

from moa import Architecture
from moc import TokenGroup
from mapping.aggregation import aggregator
from mapping.evaluation import check_modelled, element_values, system_value
from mapping.metrics import check_metric


def element_tokens(arch: Architecture, activity: MappingT[str, tuple[float, int]]
                   ) -> dict[str, list[TokenGroup]]:
    """Element name → its token groups (every element present; idle ones empty)."""
    placed: dict[str, list] = {name: [] for name in arch.elements}
    for name, (quanta, count) in activity.items():
        if name not in placed:
            raise KeyError(f"unknown element '{name}'")
        if count > 0:
            placed[name].append(TokenGroup(name, int(count), quanta / count))
    return placed


def evaluate_activity(arch: Architecture, activity: MappingT[str, tuple[float, int]],
                      metric: str = "time", aggregate: str | None = None) -> float:
    """The system value of ``metric`` for per-element ``activity`` (element →
    ``(quanta, tokens)``) on a *bound* architecture."""
    placed = element_tokens(arch, activity)
    return combine(arch, placed, metric, aggregate)


def combine(arch: Architecture, placed: MappingT[str, list], metric: str,
            aggregate: str | None = None) -> float:
    """Element values of ``metric`` from ``placed`` tokens, combined by ``aggregate``
    (the architecture's default when ``None``); unmodelled elements count 0, but
    activity on unmodelled elements only is an error, as in :func:`evaluate`."""
    check_metric(arch, metric)
    values, unmodelled = element_values(arch, placed, metric)
    check_modelled(placed, unmodelled, metric, "the activity")
    value, _ = system_value(arch, values, aggregator(aggregate or arch.aggregate))
    return value
