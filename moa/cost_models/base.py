"""The cost-model interface: a named class with validated parameters.

A *per-token* model gives the cost of one token (``token_cost``); an element's value is
the sum over its token groups of ``count · token_cost``.  An *element-level* model
(roofline, bandwidth) overrides :meth:`CostModel.element_value` and sees all its tokens
at once.  Tokens are duck-typed: ``token.count``, ``token.quanta`` and
``token.get(name, default)`` for any attribute.
"""
from __future__ import annotations

from typing import ClassVar, Iterable

from pydantic import BaseModel, ConfigDict


class Parameters(BaseModel):
    """Base of every model's parameters: unknown names are rejected, values are frozen."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class CostModel:
    name: ClassVar[str]
    Parameters: ClassVar[type[Parameters]] = Parameters
    per_token: ClassVar[bool] = True
    #: parameters in which the cost is linear (fitting solves those by NNLS)
    linear_parameters: ClassVar[tuple[str, ...]] = ()

    def __init__(self, params: Parameters):
        self.params = params

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.model_dump().items())
        return f"{self.name}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and self.params == other.params

    def __hash__(self):
        return hash((type(self), self.params))

    def token_cost(self, token) -> float:
        raise NotImplementedError(f"{self.name} is not a per-token model")

    def element_value(self, tokens: Iterable) -> float:
        return sum(t.count * self.token_cost(t) for t in tokens)

    def linear_terms(self, token) -> dict[str, float]:
        """Coefficients ``c`` with ``token_cost = Σ c[p]·p`` over ``linear_parameters``."""
        raise NotImplementedError(f"{self.name} is not linear in its parameters")
