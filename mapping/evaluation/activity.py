"""Evaluation from activity counted per element (a profiler, a scheduler's trace).

When a measurement row gives, for each element, the ``quanta`` it processed and the
number of ``tokens`` they came in (and optionally attributes of those tokens, such as
``gamma`` or ``S``), no application graph or mapping is needed: each element gets one
token group of ``tokens`` tokens of ``quanta / tokens`` each, and the tokens go through
the same core as a mapping's (:func:`mapping.evaluation.core.placed_value`): every metric
rule, system metric and aggregation applies.  Two things a mapping knows and counted
activity does not are refused by name: which PE a CN's tokens belong to (``exclusive``
with activity on a CN) and the firings and their order (``schedule``, ``period``).
"""
from __future__ import annotations

from typing import Any, Mapping as MappingT, Sequence

import numpy as np

from moa import Architecture
from moc import TokenGroup
from mapping.errors import MappingError
from mapping.semantics.aggregation import shares_refusal, timed_refusal
from mapping.evaluation.core import Placement, PlacedValue, placed_value, placed_values
from mapping.evaluation.reference import TokenList, TokenLists

#: one element's activity: ``(quanta, tokens)`` or ``(quanta, tokens, attributes)``
ElementActivity = tuple


def element_tokens(arch: Architecture, activity: MappingT[str, ElementActivity]
                   ) -> dict[str, list[TokenGroup]]:
    """Element name → its token groups (every element present; idle ones empty)."""
    placed: dict[str, list] = {name: [] for name in arch.elements}
    for name, counted in activity.items():
        if name not in placed:
            raise KeyError(f"unknown element '{name}'")
        quanta, count = counted[0], counted[1]
        attrs = dict(counted[2]) if len(counted) > 2 else {}
        if count > 0:
            placed[name].append(TokenGroup(name, int(count), quanta / count, attrs))
    return placed


class PlacedTokens(Placement):
    """Tokens already on their elements, the same whatever the metric: per-element
    activity, or one element's share of a mapping; ``placed``: one dict element →
    token groups per alternative."""

    def __init__(self, arch: Architecture, placed: Sequence[MappingT[str, list]],
                 what: str = "the activity"):
        self.arch, self.placed, self.what = arch, list(placed), what
        self.count = len(self.placed)

    def parts(self, metric):
        if self.count == 1:            # one alternative stays in plain numbers
            return TokenList(self.arch, self.placed[0], metric, self._shares_of)
        return TokenLists(self.arch, self.placed, metric, self._shares_of)

    def _shares_of(self, tokens):
        busy = [name for name in self.arch.cns if tokens.get(name)]
        if busy:
            raise MappingError(f"{self.what}: " + shares_refusal(
                f"counted activity gives only the totals of CN {', '.join(busy)}"))
        return {}                # no CN traffic: each phase is its PE's value

    def timed(self, metric, aggregate):
        raise MappingError(f"{self.what}: {timed_refusal(aggregate)}")


def activity_value(arch: Architecture, activity: MappingT[str, ElementActivity],
                   metric: str = "time", aggregate: str | None = None,
                   params: MappingT[str, Any] | None = None) -> PlacedValue:
    """The :class:`~mapping.evaluation.core.PlacedValue` of ``metric`` for per-element
    ``activity`` on a *bound* architecture; a system metric reads ``params`` (default:
    the architecture's)."""
    return placed_value(arch, PlacedTokens(arch, [element_tokens(arch, activity)]), metric,
                        aggregate, arch.params if params is None else params)


def evaluate_activity(arch: Architecture, activity: MappingT[str, ElementActivity],
                      metric: str = "time", aggregate: str | None = None,
                      params: MappingT[str, Any] | None = None) -> float:
    """The system value of ``metric`` for per-element ``activity`` (element →
    ``(quanta, tokens[, attributes])``) on a *bound* architecture."""
    return activity_value(arch, activity, metric, aggregate, params).value


def combine(arch: Architecture, placed: MappingT[str, list], metric: str,
            aggregate: str | None = None, params: MappingT[str, Any] | None = None,
            what: str = "the activity") -> float:
    """The system value of ``metric`` for tokens already ``placed`` on the elements of
    the bound ``arch``: :func:`combine_rows` of one alternative."""
    return float(combine_rows(arch, [placed], metric, aggregate, params, what)[0])


def combine_rows(arch: Architecture, placed: Sequence[MappingT[str, list]], metric: str,
                 aggregate: str | None = None, params: MappingT[str, Any] | None = None,
                 what: str = "the activity") -> np.ndarray:
    """The system values of ``metric`` for alternatives whose tokens are already
    ``placed`` (one dict element → token groups each) on the elements of the bound
    ``arch``, at once (:func:`~mapping.evaluation.core.placed_values`; a system metric reads
    ``params``, default the architecture's); unmodelled elements count 0, but tokens on
    unmodelled elements only are an error."""
    return placed_values(arch, PlacedTokens(arch, placed, what), metric, aggregate,
                         arch.params if params is None else params).value
