"""LogCA: the cost of offloading a kernel to an accelerator (Altaf & Wood, ISCA 2017).

A token of granularity ``g`` bytes costs, on an element with acceleration ``A``,
overhead ``o`` and latency ``L`` (LogCA eqs. 1, 2 and 8: T1(g) = o + L1(g) + C·g^beta / A,
:func:`accelerator_time`)::

    o + L·g + C·g^beta / A        latency = dependent    (L1(g) = L·g, eq. 8)
    o + L   + C·g^beta / A        latency = independent  (L1(g) = L,   eq. 2)

``g`` defaults to the token's ``quanta``; ``C`` (the computational index, cycles per
byte on the host) and ``beta`` (the complexity exponent) are token attributes
defaulting to 1. A host is ``logca()``: A = 1, o = L = 0, so a token costs T0(g) = C·g^beta.
The analysis of one accelerator (g1, g_{A/2}, optimization regions) is in
:mod:`moa.logca_analysis`.

**Cache regimes** (an extension, issue 44): the paper's ``C·g^beta`` is the host's time
once its data live past the last cache.  ``cache1``, ``beta1`` (and ``cache2``,
``beta2``) declare regimes below it: up to ``cache_j`` bytes the time grows as
``g^beta_j``, continuous at every ``cache_j``; with ``c_1 < c_2`` the regimes in
order and ``beta_{k+1} = beta``::

    log T0(g) = log C + beta·log g + Σ_j (beta_j - beta_{j+1})·min(0, log g - log c_j)

so ``T0 = C·g^beta`` for ``g >= c_k`` and ``C·c_k^beta·(g/c_k)^beta_k`` just below
(:func:`host_time`).  ``cache_j = 0`` (the default) declares no regime; without one the
model is the paper's.  An accelerator's computation is ``T0(g)/A`` (LogCA eq. 2: C1 =
C0/A), so regimes belong on the host's ``logca()``.  ``mapeval logca --fit`` finds them
(``host_form: "regimes"``) and prints them as these parameters.
"""
from __future__ import annotations

import math
from typing import Literal

import numpy as np
from pydantic import Field, NonNegativeFloat, PositiveFloat, model_validator

from moa.cost_models.base import CostModel, Parameters, attribute
from moa.cost_models.registry import register


def host_time(g, C, beta, regimes=()):
    """``T0(g)`` of the module: ``C·g^beta`` past the last cache, and below it the
    ``regimes`` ``((c_1, beta_1), ...)`` in increasing ``c`` (``g`` a float or an
    array)."""
    if not regimes:
        return C * g ** beta
    x = np.log(np.maximum(g, 1e-300))      # g = 0: the limit (T0 of a flat regime)
    log_t = math.log(C) + beta * x
    after = beta
    for c, b in reversed(regimes):
        log_t = log_t + (b - after) * np.minimum(0.0, x - math.log(c))
        after = b
    return np.exp(log_t)


def accelerator_time(g, work, A, o, L, latency="dependent"):
    """``T1(g) = o + L1(g) + T0(g)/A`` (LogCA eqs. 1, 2 and 8, Altaf & Wood, ISCA 2017):
    ``L1(g) = L·g`` for a ``"dependent"`` latency, ``L`` otherwise, and ``work`` the
    host's time ``T0(g)`` (:func:`host_time`; ``g`` and it floats or arrays)."""
    latency_time = L * g if latency == "dependent" else L
    return o + latency_time + work / A


def regimes_of(params) -> tuple[tuple[float, float], ...]:
    """``((cache_j, beta_j), ...)`` of the regimes ``params`` declare (``cache_j > 0``)."""
    return tuple((c, b) for c, b in ((params.cache1, params.beta1),
                                     (params.cache2, params.beta2)) if c > 0)


@register
class LogCA(CostModel):
    name = "logca"
    units = {"time": "cycles"}    # LogCA (Altaf & Wood 2017): L, o and C·g^β in cycles
    #: the regimes in order of size (a fit that frees both keeps them so)
    ordered = (("cache1", "cache2"),)

    class Parameters(Parameters):
        A: PositiveFloat = 1.0
        o: NonNegativeFloat = 0.0
        L: NonNegativeFloat = 0.0
        latency: Literal["dependent", "independent"] = "dependent"
        # the host's cache regimes below the paper's C·g^beta: up to cache_j bytes
        # (0: no regime) the time grows as g^beta_j
        cache1: float = Field(default=0.0, ge=0)
        beta1: float = Field(default=1.0, ge=0)
        cache2: float = Field(default=0.0, ge=0)
        beta2: float = Field(default=1.0, ge=0)

        @model_validator(mode="after")
        def _in_order(self):
            if self.cache1 > 0 and self.cache2 > 0 and not self.cache1 < self.cache2:
                raise ValueError(f"cache1 = {self.cache1:g} must be below cache2 = "
                                 f"{self.cache2:g} (the regimes in order of size)")
            return self

    def __init__(self, params):
        super().__init__(params)
        self._regimes = regimes_of(params)

    def token_cost(self, token):
        p = self.params
        g = attribute(token, "g", token.quanta)
        C = attribute(token, "C", 1)
        beta = attribute(token, "beta", 1, signed=True)
        return accelerator_time(g, host_time(g, C, beta, self._regimes), p.A, p.o, p.L,
                                p.latency)
