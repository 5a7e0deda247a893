"""How element values combine into one system value (SPEC §6.4).

Every aggregator is ``f(pe_values, cn_values, lambda_, *, shares=None) -> (value,
bottleneck)``.  ``shares`` (PE → CN → the value of that CN's tokens attributed to the PE,
before ``lambda``) is only read by ``exclusive``; ``sum`` and ``max`` ignore it.
"""
from __future__ import annotations

from typing import Mapping

from mapping.errors import MappingError
from mapping.registry import Registry


Shares = Mapping[str, Mapping[str, float]]


def aggregate_sum(pe_values: Mapping[str, float], cn_values: Mapping[str, float], lambda_: float,
                  *, shares: Shares | None = None) -> tuple[float, str | None]:
    """LSLA, everything serialized: ``Σ_PE + λ·Σ_CN`` (Pelcat et al. 2018, eq. 1).
    The bottleneck is the largest single contribution."""
    value = sum(pe_values.values()) + lambda_ * sum(cn_values.values())
    return value, _largest(pe_values, cn_values, lambda_)


def aggregate_max(pe_values: Mapping[str, float], cn_values: Mapping[str, float], lambda_: float,
                  *, shares: Shares | None = None) -> tuple[float, str | None]:
    """Everything concurrent: ``max(max_PE, λ·max_CN)`` (Gables eq. 14, bottleneck)."""
    bottleneck = _largest(pe_values, cn_values, lambda_)
    if bottleneck is None:
        return 0.0, None
    value = pe_values.get(bottleneck)
    return (value if value is not None else lambda_ * cn_values[bottleneck]), bottleneck


def exclusive_phases(pe_values: Mapping[str, float], lambda_: float, shares: Shares
                     ) -> dict[str, tuple[float, str]]:
    """PE → (its phase time, the element that sets it) for ``exclusive``: the max of the
    PE's own value and of ``λ·share`` at every CN it uses (Gables eq. 18, generalized:
    ``T'_IP[i] = max(D_i/B_peak, D_i/B_i, C_i)`` with the memory term per CN)."""
    phases = {}
    for pe, own in pe_values.items():
        best, limiter = own, pe
        for cn, share in (shares.get(pe) or {}).items():
            if lambda_ * share > best:
                best, limiter = lambda_ * share, cn
        phases[pe] = (best, limiter)
    return phases


def aggregate_exclusive(pe_values: Mapping[str, float], cn_values: Mapping[str, float],
                        lambda_: float, *, shares: Shares | None = None
                        ) -> tuple[float, str | None]:
    """Gables' serialized work: each PE works alone in its own phase; the system value is
    the sum of the phases (Gables eq. 19).  The bottleneck is the element that sets the
    longest phase (the PE itself, or a CN where its traffic is the slower part)."""
    if shares is None:
        raise MappingError("aggregation 'exclusive' needs to know which PE each CN token "
                           "belongs to (a mapping); it is not available without one")
    phases = exclusive_phases(pe_values, lambda_, shares)
    value = sum(time for time, _ in phases.values())  # Gables eq. 19: Σ T'_IP[i]
    longest = max(phases.values(), key=lambda p: p[0], default=None)
    bottleneck = longest[1] if longest is not None and longest[0] > 0 else None
    return value, bottleneck


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


#: the aggregations, by name, that the command line offers (``--aggregate``)
AGGREGATIONS: Registry = Registry("aggregation", error=MappingError)
AGGREGATIONS.add("sum", aggregate_sum, "LSLA, everything serialized: sum of PEs + lambda * sum of CNs")
AGGREGATIONS.add("max", aggregate_max, "everything concurrent: the bottleneck element")
AGGREGATIONS.add("exclusive", aggregate_exclusive,
                 "Gables' serialized work: each PE alone in its phase, phases summed")


def aggregator(name: str):
    if name == "schedule" and name not in AGGREGATIONS:
        raise MappingError("aggregation 'schedule' (list-scheduled makespan) is not "
                           "implemented yet; use sum, max or exclusive")
    return AGGREGATIONS.get(name)
