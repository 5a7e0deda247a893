"""LSLA and GSLA: the affine and the gamma-parallel cost models.

LSLA (Pelcat et al., TCAD 2018): a token costs ``alpha·quanta + beta``.
GSLA (Payvar et al., DAES 2021, eqs. 2-6): time ``(alpha/gamma + beta)·S`` and power
``a + b·S + c·S/gamma``, with ``S`` the data quantity and ``gamma`` the parallelism;
``gsla_power4`` is the four-term power model the paper tried and rejected (eq. 7:
``a + b·S + c/gamma + d·S/gamma``, R² 0.862 and 0.917 against eq. 6's 0.850 and 0.916).
"""
from __future__ import annotations

from pydantic import NonNegativeFloat

from moa.cost_models.base import CostModel, Parameters, attribute
from moa.cost_models.registry import register


def _S(token):
    return attribute(token, "S", token.quanta)


def _gamma(token):
    return attribute(token, "gamma", 1, positive=True)


@register
class LSLA(CostModel):
    name = "lsla"
    linear_parameters = ("alpha", "beta")
    affine_in_quanta = True

    class Parameters(Parameters):
        alpha: NonNegativeFloat
        beta: NonNegativeFloat = 0.0

    def token_cost(self, token):
        return self.params.alpha * token.quanta + self.params.beta

    def linear_terms(self, token):
        return {"alpha": token.quanta, "beta": 1.0}


@register
class GSLA(CostModel):
    name = "gsla"
    linear_parameters = ("alpha", "beta")
    affine_in_quanta = True             # S defaults to quanta, gamma to 1

    class Parameters(Parameters):
        alpha: NonNegativeFloat
        beta: NonNegativeFloat = 0.0

    def token_cost(self, token):
        # GSLA eq. 5: (alpha/gamma + beta)·S
        return (self.params.alpha / _gamma(token) + self.params.beta) * _S(token)

    def linear_terms(self, token):
        return {"alpha": _S(token) / _gamma(token), "beta": _S(token)}


@register
class GSLAPower(CostModel):
    name = "gsla_power"
    linear_parameters = ("a", "b", "c")
    affine_in_quanta = True

    class Parameters(Parameters):
        a: NonNegativeFloat
        b: NonNegativeFloat = 0.0
        c: NonNegativeFloat = 0.0

    def token_cost(self, token):
        # GSLA eq. 6: a + b·S + c·S/gamma
        s = _S(token)
        return self.params.a + self.params.b * s + self.params.c * s / _gamma(token)

    def linear_terms(self, token):
        s = _S(token)
        return {"a": 1.0, "b": s, "c": s / _gamma(token)}


@register
class GSLAPower4(CostModel):
    name = "gsla_power4"
    linear_parameters = ("a", "b", "c", "d")
    affine_in_quanta = True             # as gsla_power: S defaults to quanta, gamma to 1

    class Parameters(Parameters):
        a: NonNegativeFloat
        b: NonNegativeFloat = 0.0
        c: NonNegativeFloat = 0.0
        d: NonNegativeFloat = 0.0

    def token_cost(self, token):
        # GSLA eq. 7: a + b·S + c/gamma + d·S/gamma
        t = self.linear_terms(token)
        p = self.params
        return p.a * t["a"] + p.b * t["b"] + p.c * t["c"] + p.d * t["d"]

    def linear_terms(self, token):
        s, g = _S(token), _gamma(token)
        return {"a": 1.0, "b": s, "c": 1.0 / g, "d": s / g}
