"""Lookup: a cost per actor and PE type read from the actor's attributes.

SDF3, PREESM and mocasin describe an actor by its execution time on each processor
type.  ``lookup(key = "exec_{type}", scale = 1, default = NONE)`` costs a token::

    scale · token[key]          (token[key] absent: scale · default; no default: an error)

``key`` is a template of the element's names, filled in when the architecture is bound
(:meth:`moa.Architecture.bind`): ``{type}`` is the element's type (its own name without
one), ``{element}`` its name and ``{array}`` its array's base name (its own name outside
an array).  ``default = inf`` says that an actor without the attribute cannot run on
the element: a search never puts it there (as does an attribute of value ``inf``).
"""
from __future__ import annotations

import math
from typing import ClassVar

import numpy as np
from pydantic import Field, field_validator

from moa.cost_models.base import CostModel, Parameters, absent, attribute
from moa.cost_models.registry import register


@register
class Lookup(CostModel):
    name = "lookup"
    linear_parameters = ("scale",)
    #: parameters whose text is a template of the element's names (resolved at bind)
    templates: ClassVar[tuple[str, ...]] = ("key",)

    class Parameters(Parameters):
        key: str = Field(default="exec_{type}", min_length=1)
        scale: float = Field(default=1.0, ge=0.0)
        #: infinity means: an actor without the attribute cannot run on the element
        default: float | None = Field(default=None, ge=0.0, allow_inf_nan=True)

        @field_validator("default", mode="before")
        @classmethod
        def _none(cls, value):
            if absent(value):
                return None
            if isinstance(value, float) and math.isnan(value):
                raise ValueError("must be a number, inf or NONE, not nan")
            return value

    def value(self, token) -> float:
        """``token[key]``, else ``default``; an error naming the token's actor (or
        channel) and the attribute when neither exists."""
        p = self.params
        if token.get(p.key) is None:
            if p.default is None:
                source = getattr(token, "source", "?")
                raise ValueError(f"'{source}' has no attribute '{p.key}' and lookup has no "
                                 f"default (give '{source}' {p.key}, keep it off the element "
                                 "with allowed, or give lookup a default; inf: it cannot "
                                 "run there)")
            return p.default
        return attribute(token, p.key, None, allow_inf=True)

    def token_cost(self, token):
        v = self.value(token)
        scale = self.params.scale
        # an actor that cannot run here stays impossible whatever the scale (0 · inf is
        # nan); written for one token or arrays of them (mapping.evaluation.row_batch) alike
        return scale * v if scale > 0 else np.where(np.equal(v, math.inf), math.inf, 0.0)

    def linear_terms(self, token):
        return {"scale": self.value(token)}
