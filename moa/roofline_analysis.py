"""Hierarchical roofline analysis: kernels against compute ceilings and the bandwidth
of several memory levels (Williams et al.'s roofline as Gables eq. 9 states it,
extended to a cache hierarchy as ERT measures it).

A kernel with ``flops`` operations moving ``bytes`` at memory level ``level`` has the
operational intensity ``I = flops / bytes``; its roof there is
``attainable(peak, bw_level, I) = min(peak, bw_level·I)`` and it is memory-bound when
``I`` lies below the level's ridge point ``peak / bw_level``, compute-bound otherwise.
Given a measured ``seconds``, its attained performance ``flops / seconds / scale`` and
the fraction of the roof it reaches are reported too.  Ceilings and bandwidths are in
``scale`` FLOP/s and B/s (ERT's GFLOP/s and GB/s: ``scale = 1e9``); intensity is FLOP/B.
"""
from __future__ import annotations

from dataclasses import dataclass

from moa.cost_models.roofline import attainable, operational_intensity, ridge_point
from moa.errors import CostModelError


@dataclass(frozen=True)
class Kernel:
    """A kernel measured or estimated: ``flops`` and ``bytes`` (at ``level``, ``None``
    for the slowest), optionally ``seconds`` it took."""

    name: str
    flops: float
    bytes: float
    seconds: float | None = None
    level: str | None = None

    @property
    def intensity(self) -> float:
        return operational_intensity(self.flops, self.bytes)


@dataclass(frozen=True)
class KernelPoint:
    """A kernel placed on the roofline: its ``intensity``, the ``level`` its bytes are
    counted at, its ``roof`` there, ``bound`` (``"compute"`` or ``"memory"``), its
    ``attained`` performance (``None`` without a time) and ``fraction`` of the roof."""

    name: str
    level: str
    intensity: float
    roof: float
    bound: str
    attained: float | None
    fraction: float | None


@dataclass(frozen=True)
class RooflineAnalysis:
    """``peak`` (the highest ceiling), every ``ceilings`` and ``levels`` (name, value),
    the ``ridges`` (level, intensity) and the ``kernels`` placed."""

    name: str
    peak: float
    ceilings: tuple[tuple[str, float], ...]
    levels: tuple[tuple[str, float], ...]
    ridges: tuple[tuple[str, float], ...]
    kernels: tuple[KernelPoint, ...]

    def as_dict(self) -> dict:
        return {"name": self.name, "peak": self.peak,
                "ceilings": dict(self.ceilings), "bandwidths": dict(self.levels),
                "ridge_points": dict(self.ridges),
                "kernels": [{"name": k.name, "level": k.level, "intensity": k.intensity,
                             "roof": k.roof, "bound": k.bound, "attained": k.attained,
                             "fraction_of_roof": k.fraction} for k in self.kernels]}


def analyse(name: str, ceilings, levels, kernels=(), scale: float = 1e9
            ) -> RooflineAnalysis:
    """Ridge points of every level against the highest ceiling, and each kernel's
    roof and bound at its level (module docstring)."""
    ceilings, levels = tuple(ceilings), tuple(levels)
    if not ceilings or not levels:
        raise CostModelError("a roofline needs a compute ceiling and a memory level")
    peak = max(v for _, v in ceilings)
    bw = {n.lower(): (n, v) for n, v in levels}
    ridges = tuple((n, ridge_point(peak, v)) for n, v in levels)
    points = []
    for k in kernels:
        key = (k.level or levels[-1][0]).lower()
        if key not in bw:
            raise CostModelError(f"kernel '{k.name}': no memory level '{k.level}' "
                                 f"(levels: {', '.join(n for n, _ in levels)})")
        level, b = bw[key]
        i = k.intensity
        roof = float(attainable(peak, b, i))
        bound = "compute" if i >= ridge_point(peak, b) else "memory"
        got = k.flops / k.seconds / scale if k.seconds else None
        points.append(KernelPoint(k.name, level, i, roof, bound, got,
                                  None if got is None else got / roof))
    return RooflineAnalysis(name, peak, ceilings, levels, ridges, tuple(points))
