"""LogCA: the cost of offloading a kernel to an accelerator (Altaf & Wood, ISCA 2017).

A token of granularity ``g`` bytes costs, on an element with acceleration ``A``,
overhead ``o`` and latency ``L`` (LogCA eqs. 1, 2 and 8: T1(g) = o + L1(g) + C·g^beta / A)::

    o + L·g + C·g^beta / A        latency = dependent    (L1(g) = L·g, eq. 8)
    o + L   + C·g^beta / A        latency = independent  (L1(g) = L,   eq. 2)

``g`` defaults to the token's ``quanta``; ``C`` (the computational index, cycles per
byte on the host) and ``beta`` (the complexity exponent) are token attributes
defaulting to 1. A host is ``logca()``: A = 1, o = L = 0, so a token costs T0(g) = C·g^beta.
The analysis of one accelerator (g1, g_{A/2}, optimization regions) is in
:mod:`moa.logca_analysis`.
"""
from __future__ import annotations

from typing import Literal

from pydantic import NonNegativeFloat, PositiveFloat

from moa.cost_models.base import CostModel, Parameters, attribute
from moa.cost_models.registry import register


@register
class LogCA(CostModel):
    name = "logca"
    units = {"time": "cycles"}    # LogCA (Altaf & Wood 2017): L, o and C·g^β in cycles

    class Parameters(Parameters):
        A: PositiveFloat = 1.0
        o: NonNegativeFloat = 0.0
        L: NonNegativeFloat = 0.0
        latency: Literal["dependent", "independent"] = "dependent"

    def token_cost(self, token):
        p = self.params
        g = attribute(token, "g", token.quanta)
        C = attribute(token, "C", 1)
        beta = attribute(token, "beta", 1, signed=True)
        latency = p.L * g if p.latency == "dependent" else p.L
        # LogCA eq. 1 with C0(g) = C·g^beta and C1(g) = C0(g)/A (eqs. 2 and 8)
        return p.o + latency + C * g ** beta / p.A
