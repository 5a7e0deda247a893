"""How element values combine into one system value (SPEC §6.4)."""
from __future__ import annotations

from typing import Mapping

from mapping.mapping import MappingError


def aggregate_sum(pe_values: Mapping[str, float], cn_values: Mapping[str, float], lambda_: float
                  ) -> tuple[float, str | None]:
    """LSLA, everything serialized: ``Σ_PE + λ·Σ_CN`` (Pelcat et al. 2018, eq. 1).
    The bottleneck is the largest single contribution."""
    value = sum(pe_values.values()) + lambda_ * sum(cn_values.values())
    return value, _largest(pe_values, cn_values, lambda_)


def aggregate_max(pe_values: Mapping[str, float], cn_values: Mapping[str, float], lambda_: float
                  ) -> tuple[float, str | None]:
    """Everything concurrent: ``max(max_PE, λ·max_CN)`` (Gables eq. 14, bottleneck)."""
    bottleneck = _largest(pe_values, cn_values, lambda_)
    if bottleneck is None:
        return 0.0, None
    value = pe_values.get(bottleneck)
    return (value if value is not None else lambda_ * cn_values[bottleneck]), bottleneck


def _largest(pe_values, cn_values, lambda_):
    # Ties go to the first element in declaration order, PEs before CNs.
    best, best_value = None, float("-inf")
    for name, value in pe_values.items():
        if value > best_value:
            best, best_value = name, value
    for name, value in cn_values.items():
        if lambda_ * value > best_value:
            best, best_value = name, lambda_ * value
    return best


AGGREGATORS = {"sum": aggregate_sum, "max": aggregate_max}


def aggregator(name: str):
    try:
        return AGGREGATORS[name]
    except KeyError:
        if name == "schedule":
            raise MappingError("aggregation 'schedule' (list-scheduled makespan) is not "
                               "implemented yet; use sum, max or exclusive") from None
        raise MappingError(f"unknown aggregation '{name}' "
                           f"(known: {', '.join(AGGREGATORS)})") from None
