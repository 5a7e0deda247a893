"""Units of metrics and parameters (``metric time [unit = "s"]``, ``param S = 1024
[unit = "B"]``): a declared unit wins; else a metric takes the unit its cost models'
paper states, when every element that prices the metric with a model of known unit
agrees on it.  The units are labels: nothing is converted."""
from __future__ import annotations

#: the units of the quantities whose unit follows from the formats themselves
#: (a channel's ``bytes``, an actor's ``ops``; LogCA's granularity g is in bytes)
BYTES, OPS = "B", "ops"


def default_unit(metric: str, elements) -> str | None:
    """The unit the cost models pricing ``metric`` on ``elements`` (objects with a
    ``costs`` mapping of metric -> cost spec or model) state for it (their ``units``):
    the one unit every model of known unit agrees on, else None."""
    from moa.cost_models import model_class
    from moa.errors import CostModelError

    found = set()
    for element in elements:
        spec = element.costs.get(metric)
        model = getattr(spec, "model", None) if spec is not None else None
        name = model if isinstance(model, str) else getattr(spec, "name", None)
        if name is None:
            continue
        try:
            unit = model_class(name).units.get(metric)
        except CostModelError:
            continue
        if unit is not None:
            found.add(unit)
    return found.pop() if len(found) == 1 else None


def per(numerator: str | None, denominator: str | None) -> str | None:
    """The unit of a ratio, ``ops/s``; None when the denominator's unit is unknown."""
    if not denominator:
        return None
    return f"{numerator or '1'}/{denominator}"

