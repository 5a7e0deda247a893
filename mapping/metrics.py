"""The value of one metric on one element, from the tokens it handles (SPEC §6.3, §6.5).

``time``, ``energy`` and any other metric are extensive: the element's model sums its
tokens (or, for element-level models, computes from all of them).  ``power`` is
intensive: the time-weighted mean of its tokens' power.  An element with ``power`` and
``time`` models but no ``energy`` model has energy ``Σ power(t)·time(t)``.
"""
from __future__ import annotations

from moa import Element

INTENSIVE = frozenset({"power"})


def element_metric(element: Element, tokens: list, metric: str) -> float | None:
    """The value of ``metric`` on ``element``, or ``None`` when it has no model for it."""
    model = element.model(metric)
    if metric in INTENSIVE:
        return _mean_power(element, tokens) if model is not None else None
    if model is not None:
        return float(model.element_value(tokens))
    if metric == "energy" and element.model("power") is not None \
            and element.model("time") is not None:
        power, time = element.model("power"), element.model("time")
        return float(sum(t.count * power.token_cost(t) * time.token_cost(t) for t in tokens))
    return None


def _mean_power(element: Element, tokens: list) -> float:
    power = element.model("power")
    if not tokens:
        return 0.0
    time = element.model("time")
    if time is not None and time.per_token:
        weights = [t.count * time.token_cost(t) for t in tokens]
        total = sum(weights)
        if total > 0:
            return float(sum(w * power.token_cost(t) for w, t in zip(weights, tokens)) / total)
    count = sum(t.count for t in tokens)
    return float(sum(t.count * power.token_cost(t) for t in tokens) / count) if count else 0.0
