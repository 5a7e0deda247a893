"""Roofline and bandwidth: the element-level models of Gables (Hill & Reddi, HPCA 2019).

``roofline(peak, bandwidth=inf, memory=NONE, miss=1)`` is Gables' IP[i].  Its features
are each token's ``ops`` (default ``quanta``) and ``bytes`` (``ops / intensity``, the
``intensity`` defaulting to infinity, unless the token gives ``bytes``); its finish::

    C = Σ ops / peak                       compute time  (Gables eq. 9: C_i = f_i/(A_i·P_peak))
    D = Σ bytes                            data          (Gables eq. 9: D_i = f_i / I_i)
    time = max(C, D / bandwidth)                         (Gables eq. 9: T_IP[i])

The traffic ``D`` also travels to the element's ``memory`` CN
(:meth:`CostModel.memory_traffic`); the evaluator places it on every CN of the route,
and the memory CN sees ``miss·D`` (:class:`~moa.cost_models.base.MemoryTraffic`).

``bandwidth(B)`` is a memory interface or a bus: its feature is each token's bytes (its
``bytes`` attribute, else its ``quanta``), its finish ``Σ bytes / B`` (Gables eq. 10 for
memory, eq. 16 for Bus[j]).
"""
from __future__ import annotations

import math

import numpy as np
from pydantic import Field, field_validator

from moa.cost_models.base import CostModel, MemoryTraffic, NumberOrInf, Parameters, attribute
from moa.cost_models.registry import register

__all__ = ["Bandwidth", "MemoryTraffic", "Roofline", "attainable", "ridge_point",
           "token_bytes", "token_ops"]


def attainable(peak: float, bandwidth: float, intensity):
    """Attainable performance at operational ``intensity`` (ops per byte): ``min(peak,
    bandwidth·I)``, the rate form of :meth:`Roofline.finish` (Gables eq. 9, the
    roofline of Williams et al.)."""
    return np.minimum(peak, bandwidth * np.asarray(intensity, dtype=float))


def ridge_point(peak: float, bandwidth: float) -> float:
    """The intensity where the roof turns flat, ``peak / bandwidth``: below it a kernel
    is memory-bound, at or above it compute-bound."""
    return peak / bandwidth


def token_ops(token) -> float:
    """Operations of one token: its ``ops``, else its ``quanta``."""
    return attribute(token, "ops", token.quanta)


def token_bytes(token) -> float:
    """Bytes one token moves to or from memory: its ``bytes``, else ``ops / intensity``
    (``intensity`` defaults to infinity: no traffic)."""
    if token.get("bytes") is not None:
        return attribute(token, "bytes", 0.0)
    intensity = attribute(token, "intensity", math.inf, positive=True, allow_inf=True)
    return token_ops(token) / intensity


@register
class Roofline(CostModel):
    name = "roofline"
    units = {"time": "s"}    # Gables (Hill & Reddi 2019): P in ops/s, B in bytes/s
    per_token = False
    additive = False
    features = ("ops", "bytes")

    class Parameters(Parameters):
        peak: float = Field(gt=0)
        #: infinity means no limit: the element is never transfer-bound
        bandwidth: NumberOrInf = Field(default=math.inf, gt=0, allow_inf_nan=True)
        memory: str | None = None
        miss: float = Field(default=1.0, ge=0.0, le=1.0)

        @field_validator("memory", mode="before")
        @classmethod
        def _none(cls, value):
            # memory = NONE (or "none", or nothing) means: no memory CN is modelled
            if value is None or (isinstance(value, str) and value.strip().upper() in ("NONE", "")):
                return None
            if not isinstance(value, str):
                raise ValueError("must name a communication node")
            return value

    def token_features(self, token):
        return token_ops(token), token_bytes(token)

    def totals(self, tokens) -> tuple[float, float]:
        """``(Σ ops, Σ bytes)`` over ``tokens`` (token groups, counted ``count`` times)."""
        ops, data = self.feature_totals(tokens)
        return ops, data

    def finish(self, totals):
        ops, data = totals
        # Gables eq. 9: T_IP[i] = max(C_i, D_i / B_i) with C_i = f_i / (A_i·P_peak)
        return np.maximum(ops / self.params.peak, data / self.params.bandwidth)

    def memory_route(self):
        if self.params.memory is None:
            return None
        return self.params.memory, self.params.miss

    def token_traffic(self, token) -> float:
        return token_bytes(token)


@register
class Bandwidth(CostModel):
    name = "bandwidth"
    units = {"time": "s"}    # Gables eq. 13: B_peak in bytes/s
    per_token = False
    affine_in_quanta = True
    features = ("bytes",)

    class Parameters(Parameters):
        B: float = Field(gt=0)

    def token_cost(self, token) -> float:
        return self.finish(self.token_features(token))

    def token_features(self, token):
        return (attribute(token, "bytes", token.quanta),)

    def finish(self, totals):
        # Gables eq. 10 (memory) and eq. 16 (Bus[j]): Σ bytes / B
        return totals[0] / self.params.B

