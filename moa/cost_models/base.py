"""The cost-model interface: a named class with validated parameters.

An element's value under a model is ``finish(Σ_tokens count·features(token))``:

- a *per-token* model gives one feature, the cost of one token (``token_cost``), and
  ``finish`` is the identity, so the value is ``Σ count·token_cost``;
- an *element-level* model (roofline, bandwidth) names several features (``ops``,
  ``bytes``) and a ``finish`` that combines their totals.

``finish`` is written with operators numpy broadcasts, so that the batch evaluator applies
the very same function to arrays of totals.  :meth:`CostModel.element_value` is derived
from the two; a third-party model that only overrides ``element_value`` still works, one
at a time (:attr:`CostModel.vectorizable` is then false).  A model also states its memory
traffic (:meth:`CostModel.memory_traffic`, none by default) and whether the cost of a
traffic token is affine in its bytes (:meth:`CostModel.traffic_cost`).  Tokens are
duck-typed: ``token.count``, ``token.quanta`` and ``token.get(name, default)``.
"""
from __future__ import annotations

import math
from typing import Annotated, Any, Callable, ClassVar, Iterable, NamedTuple, Sequence

import annotated_types
import numpy as np
from pydantic import BaseModel, BeforeValidator, ConfigDict


class Parameters(BaseModel):
    """Base of every model's parameters: unknown names are rejected, values are frozen,
    NaN and infinities are refused (a field that gives infinity a meaning allows it)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class MemoryTraffic(NamedTuple):
    """The data an element moves to and from its ``memory`` CN: ``bytes`` along the
    route, of which the memory CN itself sees ``miss·bytes``."""

    memory: str
    bytes: float
    miss: float

    def share(self, cn: str) -> float:
        """The fraction of ``bytes`` that crosses ``cn``: ``miss`` on the memory CN
        (Gables eq. 15: D'_i = m_i·D_i), all of it on the CNs before it (eq. 16)."""
        return self.miss if cn == self.memory else 1.0

    def on(self, cn: str) -> float:
        return self.bytes * self.share(cn)


class _TrafficBytes:
    """A memory-traffic token of ``quanta = bytes = D`` (as the evaluator places it)."""

    count = 1
    source = "memory traffic"

    def __init__(self, D: float):
        self.quanta = D

    def get(self, key, default=None):
        return self.quanta if key in ("quanta", "bytes") else default


def absent(value) -> bool:
    """Whether a parameter's ``value`` says "none": nothing, or ``NONE`` (any case) or
    an empty text, as a ``.moa`` file writes a parameter left out."""
    return value is None or (isinstance(value, str) and value.strip().upper() in ("NONE", ""))


def attribute(token, name: str, default: Any, *, positive: bool = False,
              signed: bool = False, allow_inf: bool = False) -> float:
    """Token attribute ``name`` (``default`` if absent), checked to be a finite number,
    non-negative (``positive``: positive; ``signed``: any sign); ``allow_inf`` admits
    +infinity."""
    value = token.get(name, default)
    try:
        if 0.0 < value < math.inf or (value == 0.0 and not positive):
            return value                        # the common case, checked at once
    except TypeError:
        pass
    except ValueError:
        # an array: the tokens of many rows at once (mapping.evaluation.row_batch); checked alike
        return _array_attribute(token, name, value, positive, signed, allow_inf)
    return _refused(token, name, value, positive, signed, allow_inf)


def _array_attribute(token, name, values, positive, signed, allow_inf):
    v = np.asarray(values, dtype=float)
    good = np.isfinite(v) | ((v == math.inf) & allow_inf)
    if not signed:
        good &= (v > 0) if positive else (v >= 0)
    if good.all():
        return values
    return _refused(token, name, float(v[~good][0]), positive, signed, allow_inf)


def _refused(token, name, value, positive, signed, allow_inf):
    """``value`` of attribute ``name`` unless out of range: then the error saying why."""
    where = f"token of '{getattr(token, 'source', '?')}'"
    if isinstance(value, (str, bytes)) or value is None:
        raise ValueError(f"{where} has {name} = {value!r}; it must be a number")
    if math.isnan(value) or (math.isinf(value) and not (allow_inf and value > 0)):
        raise ValueError(f"{where} has {name} = {value}; it must be a finite number")
    if (value < 0 and not signed) or (positive and value <= 0):
        raise ValueError(f"{where} has {name} = {value}; it must be "
                         f"{'positive' if positive else 'non-negative'}")
    return value



def _not_nan(value):
    # before the field's bounds: a nan fails "> 0" with a message that hides the cause
    if isinstance(value, float) and math.isnan(value):
        raise ValueError("must be a number or inf, not nan")
    return value


#: a float parameter that may be infinite (no limit) but never nan
NumberOrInf = Annotated[float, BeforeValidator(_not_nan)]

#: ``Field(json_schema_extra=FACT)`` marks a number that is a key or a fact, never fitted
#: (a compute capability): a ``--fit`` pattern does not expand to it
FACT = {"fit": False}


class Bounds(NamedTuple):
    """The values a parameter may take by its meaning: ``low`` to ``high``, each end
    open (excluded) or closed; an efficiency is ``(0, 1]``, a count ``[0, inf)``."""

    low: float = -math.inf
    high: float = math.inf
    low_open: bool = True
    high_open: bool = True

    def __contains__(self, value) -> bool:
        return ((value > self.low) if self.low_open else (value >= self.low)) and \
            ((value < self.high) if self.high_open else (value <= self.high))

    def clip(self, value: float) -> float:
        """``value`` moved within the bounds, an open end excluded by one ulp."""
        value = float(min(max(value, self.low), self.high))
        if value == self.low and self.low_open:
            value = float(np.nextafter(value, math.inf))
        if value == self.high and self.high_open:
            value = float(np.nextafter(value, -math.inf))
        return value

    def intersect(self, other: "Bounds") -> "Bounds":
        """The values both allow."""
        low = max((self.low, self.low_open), (other.low, other.low_open))
        high = min((self.high, not self.high_open), (other.high, not other.high_open))
        return Bounds(low[0], high[0], low[1], not high[1])

    def __str__(self):
        return (f"{'(' if self.low_open else '['}{self.low:g}, "
                f"{self.high:g}{')' if self.high_open else ']'}")


#: what a fitted parameter without declared bounds may take (a bare ``param``)
NON_NEGATIVE = Bounds(0.0, math.inf, False, True)


def parameter_bounds(parameters: type[Parameters], name: str) -> Bounds | None:
    """The bounds of numeric parameter ``name`` as its pydantic field declares them
    (``gt``, ``ge``, ``lt``, ``le``, on the ``Field`` or in the type: ``PositiveFloat``);
    None for a field that is not a fittable number (a string, an integer, a choice, or
    one marked :data:`FACT`)."""
    field = parameters.model_fields.get(name)
    if field is None or field.annotation is not float or \
            (field.json_schema_extra or {}).get("fit") is False:
        return None
    b = Bounds()
    for m in field.metadata:
        if isinstance(m, annotated_types.Gt):
            b = b.intersect(Bounds(float(m.gt), math.inf, True))
        elif isinstance(m, annotated_types.Ge):
            b = b.intersect(Bounds(float(m.ge), math.inf, False))
        elif isinstance(m, annotated_types.Lt):
            b = b.intersect(Bounds(high=float(m.lt), high_open=True))
        elif isinstance(m, annotated_types.Le):
            b = b.intersect(Bounds(high=float(m.le), high_open=False))
    return b


def start_scale(value: float) -> dict:
    """``Field(json_schema_extra=start_scale(v))``: a fit's random starts draw a
    parameter that starts at 0 around ``v`` (its typical size), as around a non-zero
    start; a value of 0 often has no gradient (a term inside a ``max`` that 0 switches
    off), so a start there stays there."""
    return {"start_scale": float(value)}


def parameter_start_scale(parameters: type[Parameters], name: str) -> float | None:
    """The typical size parameter ``name`` declares (:func:`start_scale`), or None."""
    field = parameters.model_fields.get(name)
    if field is None:
        return None
    value = (field.json_schema_extra or {}).get("start_scale")
    return None if value is None else float(value)


def fittable_parameters(parameters: type[Parameters]) -> tuple[str, ...]:
    """The parameters a ``--fit`` pattern may expand to: those with bounds."""
    return tuple(n for n in parameters.model_fields if parameter_bounds(parameters, n))

def sum_features(features: Callable[[Any], Sequence[float]], width: int,
                 tokens: Iterable) -> list[float]:
    """``Σ count·features(token)`` over token groups, one total per feature."""
    totals = [0.0] * width
    for t in tokens:
        for i, f in enumerate(features(t)):
            totals[i] += t.count * f
    return totals


class CostModel:
    name: ClassVar[str]
    Parameters: ClassVar[type[Parameters]] = Parameters
    #: the value is ``Σ count·token_cost`` (fitting and the power mean need token costs)
    per_token: ClassVar[bool] = True
    #: parameters in which the cost is linear (fitting solves those by NNLS)
    linear_parameters: ClassVar[tuple[str, ...]] = ()
    #: names of the per-token features whose totals ``finish`` combines
    features: ClassVar[tuple[str, ...]] = ("cost",)
    #: ``finish`` is linear, so the value is a sum of per-token values (group tables)
    additive: ClassVar[bool] = True
    #: the cost of a token is affine in its ``quanta`` (= its ``bytes`` for traffic)
    affine_in_quanta: ClassVar[bool] = False
    #: metric -> the unit the model's paper states for its value there (a label; the
    #: architecture's declared unit wins, :func:`moa.units.default_unit`)
    units: ClassVar[dict[str, str]] = {}
    #: chains of parameters whose values do not decrease along the chain by their
    #: meaning (the capacities of cache levels, fastest first); a fit that frees
    #: several of one chain keeps them in that order (:func:`ordered_chains` in
    #: ``mapping.calibration.free``)
    ordered: ClassVar[tuple[tuple[str, ...], ...]] = ()

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

    def token_features(self, token) -> Sequence[float]:
        """One value per :attr:`features` for one token (not multiplied by its count)."""
        return (self.token_cost(token),)

    def finish(self, totals: Sequence):
        """The element value from the totals of its features (floats or arrays)."""
        return totals[0]

    def feature_totals(self, tokens: Iterable) -> list[float]:
        if type(self).token_features is CostModel.token_features:
            # one feature, the token cost: the reference evaluator's hot loop, tuple-free
            return [sum(t.count * self.token_cost(t) for t in tokens)]
        return sum_features(self.token_features, len(self.features), tokens)

    def element_value(self, tokens: Iterable) -> float:
        return float(self.finish(self.feature_totals(tokens)))

    @property
    def vectorizable(self) -> bool:
        """Whether the value is ``finish(Σ features)`` (a model that overrides
        ``element_value`` alone is evaluated one mapping at a time)."""
        return type(self).element_value is CostModel.element_value

    def linear_terms(self, token) -> dict[str, float]:
        """Coefficients ``c`` with ``token_cost = Σ c[p]·p`` over ``linear_parameters``."""
        raise NotImplementedError(f"{self.name} is not linear in its parameters")

    # ----------------------------------------------------------------- memory traffic
    def memory_route(self) -> tuple[str, float] | None:
        """``(memory CN, miss)`` where the element's data travels, or None."""
        return None

    def token_traffic(self, token) -> float:
        """Bytes one token moves to or from memory (models with a memory route)."""
        raise NotImplementedError(f"{self.name} has no memory traffic")

    def memory_traffic(self, tokens: Iterable) -> MemoryTraffic | None:
        """The traffic ``D = Σ count·token_traffic`` to the memory CN, or None."""
        route = self.memory_route()
        if route is None:
            return None
        return MemoryTraffic(route[0], sum(t.count * self.token_traffic(t) for t in tokens),
                             route[1])

    def traffic_cost(self) -> tuple[float, float] | None:
        """``(slope, intercept)``: a memory-traffic token of ``D`` bytes costs
        ``slope·D + intercept`` on an element with this model; None where not affine."""
        if not (self.affine_in_quanta and self.additive):
            return None
        zero = self.element_value([_TrafficBytes(0.0)])
        return self.element_value([_TrafficBytes(1.0)]) - zero, zero
