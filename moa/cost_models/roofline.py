"""Roofline and bandwidth: the element-level models of Gables (Hill & Reddi, HPCA 2019).

``roofline(peak, bandwidth=inf, memory=NONE, miss=1)`` is Gables' IP[i].  Over all the
tokens on the element, with ``ops`` (default ``quanta``) and ``intensity`` (default
infinity) read from each token::

    C = Σ ops / peak                          compute time    (Gables eq. 9: C_i = f_i / (A_i·P_peak))
    D = Σ bytes,  bytes = ops / intensity     data            (Gables eq. 9: D_i = f_i / I_i)
    time = max(C, D / bandwidth)                              (Gables eq. 9: T_IP[i])

unless a token gives ``bytes`` itself.  The traffic ``D`` also travels to the element's
``memory`` CN (:meth:`Roofline.memory_traffic`); the evaluator places it on every CN of
the route, and the memory CN sees ``miss·D`` (Gables eq. 15: D'_i = m_i·D_i).

``bandwidth(B)`` is a memory interface or a bus: all bytes that cross it over ``B``
(Gables eq. 10 for memory, eq. 16 for Bus[j]).  A token's bytes are its ``bytes``
attribute, else its ``quanta``.
"""
from __future__ import annotations

import math
from typing import Iterable, NamedTuple

from pydantic import Field, PositiveFloat, field_validator

from moa.cost_models.base import CostModel, Parameters
from moa.cost_models.registry import register


class MemoryTraffic(NamedTuple):
    """The data an element moves to and from its ``memory`` CN: ``bytes`` along the
    route, of which the memory CN itself sees ``miss·bytes``."""

    memory: str
    bytes: float
    miss: float


def _where(token):
    return f"token of '{getattr(token, 'source', '?')}'"


def _attribute(token, name, default, *, positive=False):
    value = token.get(name, default)
    if isinstance(value, str) or value is None:
        raise ValueError(f"{_where(token)} has {name} = {value!r}; it must be a number")
    if math.isnan(value) or value < 0 or (positive and value == 0):
        raise ValueError(f"{_where(token)} has {name} = {value}; it must be "
                         f"{'positive' if positive else 'non-negative'}")
    return value


def token_ops(token) -> float:
    """Operations of one token: its ``ops``, else its ``quanta``."""
    return _attribute(token, "ops", token.quanta)


def token_bytes(token) -> float:
    """Bytes one token moves to or from memory: its ``bytes``, else ``ops / intensity``
    (``intensity`` defaults to infinity: no traffic)."""
    if token.get("bytes") is not None:
        return _attribute(token, "bytes", 0.0)
    intensity = _attribute(token, "intensity", math.inf, positive=True)
    return token_ops(token) / intensity


@register
class Roofline(CostModel):
    name = "roofline"
    per_token = False

    class Parameters(Parameters):
        peak: PositiveFloat
        bandwidth: PositiveFloat = math.inf
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

    def totals(self, tokens: Iterable) -> tuple[float, float]:
        """``(Σ ops, Σ bytes)`` over ``tokens`` (token groups, counted ``count`` times)."""
        ops = data = 0.0
        for t in tokens:
            ops += t.count * token_ops(t)
            data += t.count * token_bytes(t)
        return ops, data

    def element_value(self, tokens: Iterable) -> float:
        ops, data = self.totals(tokens)
        compute = ops / self.params.peak                      # Gables eq. 9: C_i
        transfer = data / self.params.bandwidth if data else 0.0  # Gables eq. 9: D_i / B_i
        return max(compute, transfer)                          # Gables eq. 9: T_IP[i]

    def memory_traffic(self, tokens: Iterable) -> MemoryTraffic | None:
        """The traffic ``D`` to the ``memory`` CN, or ``None`` without one."""
        if self.params.memory is None:
            return None
        return MemoryTraffic(self.params.memory, self.totals(tokens)[1], self.params.miss)


@register
class Bandwidth(CostModel):
    name = "bandwidth"
    per_token = False

    class Parameters(Parameters):
        B: PositiveFloat

    def token_cost(self, token) -> float:
        return _attribute(token, "bytes", token.quanta) / self.params.B

    def element_value(self, tokens: Iterable) -> float:
        # Gables eq. 10 (memory) and eq. 16 (Bus[j]): Σ bytes / B
        return sum(t.count * _attribute(t, "bytes", t.quanta) for t in tokens) / self.params.B
