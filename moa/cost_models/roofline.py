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

**Caches** (optional): ``l1_capacity``/``l1_bandwidth``, ``l2_...``, ``l3_...`` (bytes,
bytes/s) and each level's ``l1_sharpness``, ... (default 1; ``sharpness = S`` sets every
level's not given) make ``bandwidth`` the last level of a hierarchy:
a token's bytes then take ``bytes · τ(working_set)`` seconds, the working-set term of
:mod:`moa.cost_models.caches` (``working_set`` a token attribute, default its
``bytes``), and ``time = max(C, Σ bytes·τ)``.  Without a level (every capacity 0, the
default) the model is Gables' as above.

``bandwidth(B)`` is a memory interface or a bus: its feature is each token's bytes (its
``bytes`` attribute, else its ``quanta``), its finish ``Σ bytes / B`` (Gables eq. 10 for
memory, eq. 16 for Bus[j]).
"""
from __future__ import annotations

import math

import numpy as np
from pydantic import Field, field_validator, model_validator

from moa.cost_models.base import CostModel, MemoryTraffic, NumberOrInf, Parameters, absent, \
    attribute
from moa.cost_models.caches import LEVELS, levels_of, seconds_per_byte, sharpness_of
from moa.cost_models.registry import register

__all__ = ["Bandwidth", "MemoryTraffic", "Roofline", "attainable", "ridge_point",
           "token_bytes", "token_ops"]


def attainable(peak: float, bandwidth: float, intensity):
    """Attainable performance at operational ``intensity`` (ops per byte): ``min(peak,
    bandwidth·I)``, the rate form of :meth:`Roofline.finish` (Gables eq. 9, the
    roofline of Williams et al.)."""
    return np.minimum(peak, bandwidth * np.asarray(intensity, dtype=float))


def operational_intensity(ops: float, data: float) -> float:
    """Operations per byte of memory traffic, ``ops / bytes`` (Williams, Waterman &
    Patterson, CACM 2009; Gables' ``I``); infinite where no bytes move."""
    return ops / data if data > 0 else math.inf


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
    #: ``seconds``: Σ bytes·τ(working set), the memory time when caches are given
    features = ("ops", "bytes", "seconds")
    #: capacities rise and bandwidths fall with the level, down to the last (DRAM)
    ordered = (("l1_capacity", "l2_capacity", "l3_capacity"),
               ("bandwidth", "l3_bandwidth", "l2_bandwidth", "l1_bandwidth"))

    class Parameters(Parameters):
        peak: float = Field(gt=0)
        #: infinity means no limit: the element is never transfer-bound
        bandwidth: NumberOrInf = Field(default=math.inf, gt=0, allow_inf_nan=True)
        memory: str | None = None
        miss: float = Field(default=1.0, ge=0.0, le=1.0)
        # cache levels (moa.cost_models.caches): capacity in bytes (0: no such level),
        # bandwidth in bytes/s
        l1_capacity: float = Field(default=0.0, ge=0)
        l1_bandwidth: NumberOrInf = Field(default=math.inf, gt=0, allow_inf_nan=True)
        l2_capacity: float = Field(default=0.0, ge=0)
        l2_bandwidth: NumberOrInf = Field(default=math.inf, gt=0, allow_inf_nan=True)
        l3_capacity: float = Field(default=0.0, ge=0)
        l3_bandwidth: NumberOrInf = Field(default=math.inf, gt=0, allow_inf_nan=True)
        # the sharpness of each level's transition (``sharpness = S``: every level's)
        l1_sharpness: float = Field(default=1.0, gt=0)
        l2_sharpness: float = Field(default=1.0, gt=0)
        l3_sharpness: float = Field(default=1.0, gt=0)

        @model_validator(mode="before")
        @classmethod
        def _common_sharpness(cls, values):
            # a shorthand, not a parameter of its own: one value per level is what a
            # fit varies and what the model prints
            if isinstance(values, dict) and "sharpness" in values:
                values = dict(values)
                common = values.pop("sharpness")
                for n in LEVELS:
                    values.setdefault(f"{n}_sharpness", common)
            return values

        @field_validator("memory", mode="before")
        @classmethod
        def _none(cls, value):
            # memory = NONE (or "none", or nothing) means: no memory CN is modelled
            if absent(value):
                return None
            if not isinstance(value, str):
                raise ValueError("must name a communication node")
            return value

    def __init__(self, params):
        super().__init__(params)
        self._levels = levels_of(params)
        self._sharpness = sharpness_of(params)

    def token_features(self, token):
        data = token_bytes(token)
        if not self._levels:
            return token_ops(token), data, 0.0
        ws = attribute(token, "working_set", data)
        p = self.params
        return token_ops(token), data, data * seconds_per_byte(ws, self._levels, p.bandwidth,
                                                               self._sharpness)

    def totals(self, tokens) -> tuple[float, float]:
        """``(Σ ops, Σ bytes)`` over ``tokens`` (token groups, counted ``count`` times)."""
        ops, data, _ = self.feature_totals(tokens)
        return ops, data

    def finish(self, totals):
        ops, data, seconds = totals
        if self._levels:
            # the working-set term: each token's bytes at the levels that hold them
            return np.maximum(ops / self.params.peak, seconds)
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

